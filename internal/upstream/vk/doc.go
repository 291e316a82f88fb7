// Package vk runs virtual-kubelet v1.14.1 against a real kube-apiserver v1.37.0 (started
// in-process by internal/upstream/apiserver) with the podsim provider of
// vkstatus/examples/vkpodsim, once with virtual-kubelet's stock status write path (the
// provider computes the kubelet's statuses with podstate.Generate and podstate.Stamp and
// virtual-kubelet PUTs them) and once with vkstatus, on the same workload, and compares
// what reaches the server (TestStockVsVKStatus):
//
//	cd internal/upstream/vk && go test -run TestStockVsVKStatus -v .
//
// The workload: a pod with a readiness gate, which another client sets True (does Ready
// follow?); a Ready=False another client writes, as the node lifecycle controller does
// (repaired within 5 s?); a DisruptionTarget condition and a label another client adds
// (kept?); a graceful deletion of the running pod, and of a pod whose sandbox is still
// being created (is the last version before the DELETED event terminal?). Requests are
// counted with a RoundTripper on the agent's client (GET, PUT, PATCH, DELETE of single
// pods; not LIST or WATCH); status writes are the watched versions whose status changed
// and that the other client did not write.
//
// It is its own module because virtual-kubelet v1.14.1 requires the k8s.io staging
// modules at v0.37.1 while k8s.io/kubernetes v1.37.0 is built at v0.37.0: the replace
// block pins v0.37.0, as internal/upstream's does, and virtual-kubelet compiles with it.
// Like internal/upstream it runs without -race (test.sh).
//
// TestVirtualKubeletE2ESuite runs virtual-kubelet's own end-to-end suite (test/e2e,
// EndToEndTestSuite) on the same provider, once per write path; it needs a non-loopback
// IPv4 address for the kubelet API (the API server's nodes/proxy refuses loopback) and
// skips TestGetStatsSummary and TestGetMetricsResource (podsim has no resource usage).
// Both tests together take about 40 s once built.
//
// TestPodClientOnlyProvider does the same for a provider of the most common kind
// (handProvider, shaped like virtual-kubelet's mock provider): it hand-writes each status
// and only swaps vkstatus's Client into PodClient (Client.Wire). It checks the first
// status of a pod without a sandbox against kubelet v1.37.0's
// GeneratePodReadyToStartContainersCondition, every watched version against its other
// generators (internal/upstream/kubeletcheck), and that a pod deleted before its
// containers started, one whose containers outlive the grace period and one the provider
// stops each have a terminal phase on the server before they disappear:
//
//	cd internal/upstream/vk && go test -run TestPodClientOnlyProvider -v .
package vk
