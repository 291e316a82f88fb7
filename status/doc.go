// Package status is the stateful half of podstatus: a Manager that caches each pod's
// status, notices when a field the kubelet owns really changed, merges the result with the
// API server's copy so conditions written by other controllers survive, and sends the
// smallest correct strategic-merge PATCH of pods/status with a metadata.uid precondition.
//
// # What the Manager does as the kubelet does
//
// The Manager is the kubelet's status manager (pkg/kubelet/status, v1.37.0) made
// importable. SetPodStatus, SetContainerReadiness, SetContainerStartup,
// SetPodVolumeHealth, TerminatePod, GetPodStatus and RemoveOrphanedStatuses have the
// kubelet's semantics: a versioned cache
// keyed by pod UID; lastTransitionTime of the kubelet's conditions kept unless the Status
// changes; StartTime pinned; observedGeneration never going back; timestamps normalised
// to whole seconds and container statuses sorted; a change that is equal on every
// kubelet-owned field is not sent; an illegal terminated-to-running container transition
// rejected. Merge is the kubelet's mergePodStatus: foreign conditions are the server's,
// DisruptionTarget is sent only when the pod really becomes terminal, a terminal phase is
// held back while containers could run, Ready and ContainersReady are forced False in a
// terminal phase, resource-claim statuses are always the server's. PatchBytes builds the
// same patch as the kubelet's preparePatchBytesForPodStatus.
//
// A terminal phase held back while containers could run is retried every SyncPeriod (and
// on every Sync), as the kubelet's periodic reconcile does, visiting only those pods.
//
// # What repairs drift, and when
//
// Run sends a change when it is made, retries a failed sync at its backoff deadline, and
// every SyncPeriod re-queues only the held terminal phases above: it does not re-read
// every pod. Drift that another writer causes on a kubelet-owned field (a node lifecycle
// controller setting Ready False, say) is repaired from the server copies ObservePod
// receives: an event that differs from the cached status on a kubelet-owned field queues
// the pod. Two copies reach the Manager while a sync is under way, and are checked against
// what that sync merged, on the kubelet-owned conditions' Status (the field other
// controllers write): a PATCH response that carries another writer's change made between
// the base and the PATCH (its watch events are then older than the response, and
// ignored) is merged and patched again in the same sync; an event that arrives while the
// sync is in flight is compared when the sync ends, and queues the pod on a difference.
// Only a copy newer than the base counts (by resourceVersion), so a server that gives none
// (client-go's fake clientset) costs no extra request. That is the kubelet's periodic needsReconcile (syncBatch in
// pkg/kubelet/status/status_manager.go) done per event: the kubelet's check reads its
// informer-fed pod manager every 10 s and sends no request for it, and the Manager has no
// informer of its own, so a periodic reconcile here would have to GET every pod every
// period — a request per pod per period, the load one-request-per-change exists to avoid.
// A node agent that does not feed ObservePod therefore gets drift repaired only when the
// Manager next reads the pod: after a failed request (the retry GETs first) or a 409.
// Feed ObservePod from a pod informer, as the README's snippet does, to repair drift
// within one watch event. Where the copies at hand carry no usable resourceVersion (the
// kubelet's pod manager keeps the first one it saw), QueueIfDrifted compares them with the
// cache instead and GETs the pod only when a kubelet-owned field differs, as the
// kubelet's needsReconcile does.
//
// Where the kubelet only logs, the Manager returns errors, wrapped as "status: <Method>:
// ...": SetPodStatus, TerminatePod, SetContainerReadiness and SetContainerStartup return
// a *TransitionError for a rejected container transition and a *podstatus.InputError for
// a pod they cannot write; SetContainerReadiness and SetContainerStartup return
// ErrPodNotFound or ErrContainerNotFound for an update about an unknown pod or container;
// Sync returns one error per failed pod, naming the pod and the request and wrapping the
// Client's error (apierrors.IsNotFound and friends work on it). Run returns nil once ctx
// is done, and an error only when it cannot run (another Run of the Manager is running);
// when it returns, every goroutine it started has ended.
//
// # Logging and events
//
// Every method that may log takes a context first (Run, Sync, SyncPod, SetPodStatus,
// TerminatePod, ObservePod, ...) and logs with the context's logger (logr.FromContext)
// when it carries one, else with Options.Logger: the caller's logger, as the kubelet's
// status manager takes a klog.Logger in its mutators. A pod is logged as klog.KObj does, under the key "pod" (a PodRef:
// "namespace/name", {"name","namespace"} in JSON), with its UID under "podUID". Levels
// are the kubelet status manager's:
//
//   - Error: a request failed (the pod backs off and is retried), a status was rejected;
//   - V(2): changes of state — a cached status dropped because the pod was deleted or
//     recreated, a status ignored because it would leave a terminal phase, the sync loop
//     starting and stopping, a sync interrupted by its context;
//   - V(3): one line per request and its outcome — PATCH sent (with the body), status
//     already up to date, 409 Conflict;
//   - V(4): per-pod bookkeeping — a status equal to the cached one, a pod queued
//     because a server copy differs on a kubelet-owned field.
//
// For metrics, Options.Observer receives one event per change, PATCH, skip, conflict,
// retry and completed sync; status/promobserver turns them into Prometheus metrics.
//
// Time is always injected: the Manager reads Options.Clock, and Merge takes
// MergeInput.Now; the zero values of MergeInput's other knobs merge as the Manager does.
//
// # What it does beyond the kubelet
//
//   - One request per change. The patch is computed against the newest server copy the
//     Manager knows (the last PATCH response, or a watch event given to ObservePod,
//     whichever has the newer resourceVersion). It GETs only when it has no copy or after
//     an error, where the kubelet GETs before every PATCH. Conditions another controller
//     wrote after that copy was taken survive: the patch names only the conditions the
//     kubelet changed, and strategic merge keeps list elements missing from
//     $setElementOrder/conditions. A patch that takes Ready from True to False, the one
//     kubelet-owned transition another controller also makes (the node lifecycle
//     controller), is conditional on that copy's resourceVersion: if the pod changed
//     meanwhile, the 409 refetches it, so a Ready the other writer already set False
//     keeps its lastTransitionTime.
//   - Event-driven readiness gates. When a newer server copy (from ObservePod, or inside a
//     PATCH response) changes a readiness-gate condition, Ready is re-evaluated with the
//     readiness engine and queued at once, instead of waiting for the kubelet's next pod
//     sync. ObservePod also queues a pod whose kubelet-owned fields another writer changed
//     (the kubelet's needsReconcile, per event instead of every 10 s).
//   - Cost proportional to change. A dirty set holds the pods with something to send; a
//     sync walks only those, so a Sync with nothing pending costs the same however many
//     pods are cached.
//   - One copy of a synced status. Once a pod is synced, the cached status shares the
//     memory of the server copy the Manager holds (its base) wherever the two are equal,
//     instead of keeping a copy of its own. Both are
//     read-only (the cache is copy-on-write, and a pod handed to ObservePod or
//     SetPodStatus must not be modified afterwards); a cached condition time may take the
//     server copy's time zone, never another instant.
//   - Per-pod retries. 5xx, 429 (honouring Retry-After), timeouts and unexpected errors
//     back off exponentially with jitter, per pod; each Manager draws its own random
//     seed (RetryOptions.Seed fixes one), so agents that lost the API server together do
//     not retry together. Run wakes at the earliest backoff deadline, including one set
//     by a failed Sync. A failure with no HTTP answer (refused, reset, unanswered) is
//     the network's, not the pod's: while requests get none, one such pod is retried
//     every RetryOptions.ProbeInterval, and the first answer makes every such pod due
//     again, after a delay the Manager draws and paced at RetryOptions.RecoveryRate, so
//     a node's statuses are current within seconds of the server coming back, not at
//     backoff deadlines up to RetryOptions.Max away. 409 refetches and retries at once. The newest desired status is never lost: a status set while a PATCH is in
//     flight is sent afterwards, and an older in-flight result never marks it synced.
//   - A terminal phase is final: a later status with a non-terminal phase keeps the
//     terminal one, in the cache and against the server's copy (the kubelet enforces this
//     where it generates statuses, which callers of this library do themselves).
//   - Options.Workers sends several pods at once; requests for one pod never overlap.
//   - A deleted (404) or recreated (other UID, or 422 from the UID precondition) pod drops
//     its cached status at once; the kubelet keeps GETting a deleted pod until
//     RemoveOrphanedStatuses (kubernetes#139020).
//   - lastTransitionTime that respects the server (kubernetes#119514), on by default: see
//     Options.UpstreamTransitionTimes. Setting it gives the kubelet's behaviour exactly.
//
// # What it leaves out
//
// Static and mirror pods (UID translation, syncing a static pod's status to its mirror)
// are not handled: every pod is treated as an ordinary API pod. Pods are deleted after
// termination (the kubelet's canBeDeleted and DELETE) only with Options.Deleter. The
// resize-condition cache, pod-update notifiers and the kubelet's Prometheus metrics are
// not implemented; Observer is the hook for metrics (the kubeletstatus module adds the
// rest on top, for a kubelet fork).
package status
