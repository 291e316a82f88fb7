// Package vkstatus gives a virtual-kubelet (github.com/virtual-kubelet/virtual-kubelet)
// node agent the kubelet's pod statuses without forking virtual-kubelet.
//
// # The write path
//
// virtual-kubelet writes every status through node.PodControllerConfig.PodClient, a
// corev1client.PodsGetter: PodController.updatePodStatus and handleProviderError
// (node/pod.go, v1.14.1) call UpdateStatus, a PUT of the provider's whole pod at the
// lister's resourceVersion, retried after a 409 with the same provider status. A
// readiness gate, a DisruptionTarget or a Ready=False another controller wrote in
// between is overwritten (virtual-kubelet#277, #976, #988), drift is not repaired
// (#899), and a status rejected for another UID is requeued (#1157).
//
// A Client is a PodsGetter to put in PodClient instead (Client.Wire does it and
// registers Client.EventHandler; Client.Run sends). Its UpdateStatus hands the
// provider's status to a status.Manager, which merges it with the server's copy (only
// the fields the kubelet owns; foreign conditions are the server's) and sends one minimal
// strategic-merge PATCH of pods/status with a metadata.uid precondition, as the kubelet's
// status manager does (pkg/kubelet/status/status_manager.go). Every other call goes to
// the wrapped PodsGetter unchanged. Client.EventHandler, registered on the pod informer
// virtual-kubelet already runs, feeds every server copy to the Manager
// (status.Manager.ObservePod): the copy is the base of the next PATCH (no GET before it),
// a flipped readiness gate re-evaluates Ready, and a kubelet-owned field another writer
// changed is written back on the next sync.
//
// UpdateStatus returns once the status is accepted, before it is on the server: the
// Manager's Run sends it and retries failures with its bounded exponential backoff, so
// virtual-kubelet's work queue never retries a write. The status it accepts is the
// provider's, with the kubelet-owned conditions recomputed by the readiness engine
// (readiness.Evaluate) from the provider's phase and container statuses and the
// server's readiness-gate conditions: a provider's hand-written Ready (True on a
// completed pod, twice in one status, True with a gate False) never reaches the server.
// A container state that is Terminated and also Running or Waiting (what
// virtual-kubelet's syncProviderWrapper.DeletePod reports, node/sync.go) is taken as
// Terminated.
//
// # The sandbox of a provider that reports no runtime facts
//
// The kubelet's PodReadyToStartContainers comes from the runtime's sandboxes
// (GeneratePodReadyToStartContainersCondition in pkg/kubelet/status/generate.go), which
// UpdateStatus infers from the provider's status. The status shows a sandbox when it has a
// pod IP, a container that was created (running, terminated, terminated before, or with a
// container ID) or the provider's own PodReadyToStartContainers True; the sandbox is then
// ready unless the provider's own PodReadyToStartContainers is False. When it shows none,
// the server's copy decides: if it shows one (a sandbox existed), the sandbox is there and
// not ready ("pod sandbox is not ready"); otherwise there is none ("no pod sandbox
// exists", the kubelet's first status of every pod). The sandbox has the pod's
// spec.hostNetwork and the provider's pod IP.
//
// # Wiring and logs
//
// A Client that is not wired says so: UpdateStatus fails with ErrNotWired until
// EventHandler was asked for, and statuses accepted while nothing runs the Manager are
// logged at error level after NotRunningGrace. Without Options.Status.Logger the Client
// and its Manager log through virtual-kubelet's logger (the context's, else log.L), so a
// write that keeps failing (UpdateStatus returned before it) is an error line where the
// provider already looks.
//
// # Labels and annotations
//
// virtual-kubelet's PUT of pods/status also carried the provider's labels and
// annotations (the pods/status strategy resets only spec, deletionTimestamp and
// ownerReferences: pkg/registry/core/pod/strategy.go), so a provider could set them
// there; the same PUT also reverted every label another client changed after the
// provider's copy was taken. A Client forwards only what the provider itself changed:
// a label or annotation whose value in the provider's pod differs from the previous
// copy the provider handed over (the first time: the first server copy the Client saw)
// and from the server's is sent, set or removed, in one strategic-merge PATCH of
// pods/status with the UID precondition. Keys the provider did not change are never
// sent, whatever its copy says. Options.Metadata = MetadataIgnore drops them all.
//
// # The provider side
//
// Client.SyncPod is for a provider that knows its pods' runtime facts (container states,
// sandbox, IPs, exit codes): it runs status.Manager.SyncPod, the one per-pod status step
// (podstate.Generate, the Manager's acceptance rules, TerminatePod once the pod's
// containers have stopped), and returns the pod with the status to give to the
// NotifyPods callback and to return from GetPodStatus: Ready with the server's gates,
// PodReadyToStartContainers, Initialized, ContainersReady, the phase and every
// lastTransitionTime as the kubelet v1.37.0 writes them. For such a pod UpdateStatus
// only writes labels and annotations: the status is already queued.
//
// # Deletion
//
// A deleted pod's terminal phase is on the server before the pod object is deleted, for
// every provider, as the kubelet's status manager deletes a pod only then (canBeDeleted in
// pkg/kubelet/status/status_manager.go). virtual-kubelet force-deletes a pod with a
// deletionTimestamp as soon as none of its containers runs (PodController.syncPodInProvider,
// which counts a waiting container as not running, so a pod deleted before its containers
// started qualifies at once) and otherwise when its grace period ends
// (deletePodsFromKubernetesHandler, node/pod.go, grace period 0 with a UID precondition).
// That request reaches the Client's Delete, which can hold it: while the server's copy has
// no terminal phase, Delete sends nothing and the Manager deletes the pod with grace
// period 0 and a UID precondition (status.Options.Deleter) right after the PATCH that put
// the terminal status on the server.
//
// For a pod whose status SyncPod produces, the provider stops its containers and reports
// them through SyncPod with Stopped once none runs: the status that carries the
// terminated containers carries the terminal phase and Ready=False too (one PATCH). A
// provider that never reports the pod Stopped keeps it on the server, as a kubelet whose
// runtime does not stop a container does.
//
// For any other pod (a provider that only writes statuses), the held force delete is
// where virtual-kubelet is done with the pod's containers, where the kubelet's pod worker
// calls its status manager's TerminatePod (SyncTerminatingPod in pkg/kubelet/kubelet.go):
// the Client calls status.Manager.TerminatePod there (a container not reported
// terminated is terminated with exit code 137, ContainerStatusUnknown; a non-terminal
// phase becomes Failed; Ready and ContainersReady become False). Holding the delete in
// the Client is possible because virtual-kubelet sends every pod write through PodClient
// and acts on Delete's answer only by logging it: a nil answer ends its work on the pod.
package vkstatus
