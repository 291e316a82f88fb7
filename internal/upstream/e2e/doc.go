// Package e2e is podstatus' end-to-end suite: a status.Manager plays the kubelet against a
// real kube-apiserver v1.37.0 and etcd (started once per test binary, inside the test
// process, by internal/upstream/apiserver) and talks to it through status/kubeclient, the
// client node agents use. A second, independent clientset plays every other actor: the
// scheduler that sets PodScheduled, a load-balancer controller that owns readiness-gate
// conditions, the controller that deletes pods, and the monitoring service of KEP-3085
// that watches pods.
//
// What the suite covers, every check made on the server's stored copy of the pod:
//
//   - the KEP-3085 user stories (healthy start, slow sandbox, a sandbox that never comes
//     up, a sandbox crash and re-creation after a successful start, graceful termination,
//     volume-mount failures): PodReadyToStartContainers' status, reason, message and
//     lastTransitionTime, and the sandbox-creation latency a monitoring service derives
//     from it (its lastTransitionTime minus PodScheduled's), with a fake clock so that
//     every time is a whole, known second;
//   - Pod Ready++: Ready is True exactly when the containers are ready and every
//     readiness gate is True, after many seeded interleavings of a load-balancer
//     controller writing gate conditions and the kubelet changing container readiness
//     (some run step by step, some truly concurrently with the Manager's Run loop and a
//     watch feeding ObservePod), and a gate condition is never lost or rewritten;
//   - a pod deleted and re-created under the same name: nothing meant for the old pod
//     lands on the new one (the metadata.uid precondition), and the Manager drops the old
//     pod's cached status;
//   - terminal pods: Ready and ContainersReady are False on the server and the phase
//     never leaves Failed or Succeeded, even when the Manager is told Running afterwards;
//   - the whole node-agent pipeline, runtime facts -> podstate.Generate -> Manager ->
//     server, for a pod with an init container, a sidecar, probes and a readiness gate,
//     from scheduling to deletion;
//   - a Ready pod marked not Ready by the node lifecycle controller and restored by the
//     kubelet: lastTransitionTime goes forward with the fix for kubernetes#119514 (the
//     default) and backwards with Options.UpstreamTransitionTimes, as in the kubelet;
//   - every request the Manager sends is accepted by the real validation: the Manager's
//     client counts requests and rejections, and the only error allowed is the 422 of the
//     deliberate UID-mismatch case.
//
// The suite prints what it measures (latencies per story, requests, requests per status
// update) with t.Logf and on standard output, so `go test -v` shows it. It has no
// non-test code. Run it with
//
//	cd internal/upstream && go test -count=1 -v ./e2e/
//
// and never under -race (building kube-apiserver with the race detector takes too long).
package e2e
