// Package kubeletstatus puts podstatus's status.Manager behind the kubelet's own
// status.Manager interface (k8s.io/kubernetes/pkg/kubelet/status, v1.37.0), so that a
// kubelet fork swaps its status manager with one line in pkg/kubelet/kubelet.go:
//
//	klet.statusManager = kubeletstatus.NewManager(klet.kubeClient, klet.podManager, klet, kubeDeps.PodStartupLatencyTracker)
//
// NewManager takes the parameters of the kubelet's status.NewManager and returns the
// kubelet's interface. The module imports k8s.io/kubernetes, so it is its own Go module:
// the root podstatus module stays free of it.
//
// # Where each call goes
//
// Pods from the API server, every pod but static ones, go to a podstatus status.Manager
// and its readiness engine. Two things go to an instance of the kubelet's own status
// manager, built from the same parameters:
//
//   - static pods (kubetypes.IsStaticPod): their status is written to their mirror pod,
//     whose UID differs from the static pod's, and podstatus's Manager does not translate
//     UIDs (its package documentation says so). The kubelet's manager keeps doing it,
//     with the kubelet's behaviour and requests;
//   - pods without a UID or a name, which no API server holds and podstatus refuses,
//     but which the kubelet's manager caches (the kubelet's own tests build them);
//   - the resize-condition cache of in-place pod resize (KEP-1287):
//     GetPodResizeConditions, SetPodResizePendingCondition,
//     SetPodResizeInProgressCondition, ClearPodResizePendingCondition,
//     ClearPodResizeInProgressCondition, IsPodResizeDeferred, IsPodResizeInfeasible and
//     BackfillPodResizeConditions. It is a cache the kubelet's generateAPIPodStatus
//     reads (pkg/kubelet/kubelet_pods.go) and never sends by itself, with the kubelet's
//     resize metrics; the kubelet's own code keeps it exact.
//
// RemoveOrphanedStatuses, AddPodUpdateNotifier and Start reach both.
//
// # What changes for an API pod
//
//   - One request per status change. The kubelet's syncPod
//     (pkg/kubelet/status/status_manager.go) GETs the pod before every PATCH; here the
//     patch is computed against the newest server copy the Manager holds: the first pod
//     passed to SetPodStatus, then each PATCH response. A GET is made only when there is
//     none, after an error, when the periodic reconcile finds drift, and once per
//     deleted pod: a deletionTimestamp the Manager has not seen on the server makes the
//     next sync GET the pod before the final DELETE, as the kubelet's syncPod does. The
//     pod worker's copy passed to SetPodStatus and TerminatePod is never compared with
//     the cache (its status may predate the last PATCH); only its deletionTimestamp is
//     read.
//   - The kubelet's periodic reconcile (needsReconcile in syncBatch) reads the pod
//     manager every sync period and makes a request only when a kubelet-owned field
//     drifted; so does the adapter, through status.Manager.QueueIfDrifted (the pod manager's
//     copies keep the resourceVersion the kubelet first saw, so they are compared, never
//     used as a patch base), but only for a pod whose status stayed unchanged since the
//     previous tick: a copy lagging behind the last PATCH looks like drift.
//   - Readiness gates: Ready follows a gate when the kubelet resyncs the pod
//     (HandlePodReconcile in pkg/kubelet/kubelet.go, NeedToReconcilePodReadiness), as
//     before; podstatus also re-evaluates Ready, with its readiness engine, when a PATCH
//     response shows a gate another controller flipped.
//   - lastTransitionTime respects the server (kubernetes#119514): a condition whose
//     Status the node lifecycle controller flipped gets a fresh time when the kubelet
//     flips it back, instead of its old one. Options.UpstreamTransitionTimes
//     restores the kubelet's behaviour.
//   - A PATCH that takes Ready from True to False is conditional on the base's
//     resourceVersion, so the race with the node lifecycle controller's MarkPodsNotReady
//     ends in a 409 and a refetch, not in a rewritten lastTransitionTime.
//   - Per-pod backoff with jitter after errors, and a deleted (404) or recreated pod
//     drops its cached status at once (kubernetes#139020), where the kubelet retries on
//     its next batch.
//   - Deletion keeps the kubelet's rule (canBeDeleted: a deletionTimestamp, a terminal
//     phase on the server, and TerminatePod called) and request: DELETE with grace period
//     0 and a UID precondition, right after the PATCH that made the terminal status
//     current.
//
// Errors podstatus returns where the kubelet only logs (a rejected container transition,
// a readiness update for an unknown container) are logged with the logger the caller
// passed, at the kubelet's levels: the interface has no error results.
package kubeletstatus
