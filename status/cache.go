package status

import (
	"github.com/go-logr/logr"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/podstatus/podstatus/internal/accept"
)

// entry is everything the Manager knows about one pod, keyed by UID. It is guarded by
// Manager.mu. status is copy-on-write: it is replaced, never modified in place, so a sync
// may read a snapshot of it without the lock; once synced, it shares its lists with base
// where they are equal (shareBase).
type entry struct {
	// uid, namespace and name are set when the entry is made and never change.
	uid             types.UID
	namespace, name string

	// pod is the newest pod object seen (spec, generation), from SetPodStatus, TerminatePod
	// or ObservePod.
	pod *v1.Pod

	// hasStatus is false for a pod only ObservePod has seen: it has a base but nothing to
	// send, and GetPodStatus does not report it.
	hasStatus bool
	// status is the desired kubelet status, normalised.
	status v1.PodStatus
	// version counts accepted changes (and reconcile requests); synced is the highest
	// version the server is known to reflect. The pod needs a sync while synced < version.
	version, synced uint64
	// finished is set by TerminatePod and is sticky.
	finished bool
	// couldRun is what the latest SyncPod said of the pod's containers
	// (SyncPodInput.CouldHaveRunningContainers), when syncPodSeen is set; otherwise
	// Options.CouldHaveRunningContainers answers.
	couldRun, syncPodSeen bool
	// deleted is set once the Manager deleted the pod object (Options.Deleter): the entry
	// stays, with its last status, as a tombstone that ignores further statuses and
	// server copies until ForgetPod or RemoveOrphanedStatuses.
	deleted bool
	// at is when the oldest change not yet on the server was made.
	at time.Time

	// base is the newest server copy of the pod (by resourceVersion): the PATCH response,
	// a watch event passed to ObservePod, or a GET. Patches are computed against it.
	base *v1.Pod
	// baseStale asks for a GET before the next patch (after an error).
	baseStale bool
	// gates, when non-nil, are conditions the caller reported in SetPodStatus after the
	// base was taken: the freshest readiness-gate values the Manager has, so
	// SetContainerReadiness reads them instead of the older base. A newer base clears it.
	gates []v1.PodCondition

	// inflight is set while one goroutine syncs the pod; nobody else touches the server
	// for it meanwhile, so results for one pod never race.
	inflight bool
	// queued is set while the pod waits in Run's queue (claimed, inflight, no request
	// sent yet): the probe may take it from there (probeLocked).
	queued bool
	// attempts counts consecutive failed syncs; notBefore is when the background loop
	// may try again.
	attempts  int
	notBefore time.Time
	// transport is set when the last failed sync got no HTTP answer (see answered): the
	// pod is retried as soon as the server answers again.
	transport bool
	// gone is set when the entry leaves the cache (dropped, orphaned), so that a sync in
	// flight does not resurrect it.
	gone bool
	// stop cancels the request in flight for the pod, if any (see Manager.request):
	// dropLocked calls it, so that nothing more reaches the server for a forgotten pod.
	stop func()
}

func (e *entry) pending() bool { return e.hasStatus && !e.deleted && e.synced < e.version }

func (e *entry) ref() PodRef { return PodRef{Namespace: e.namespace, Name: e.name, UID: e.uid} }

// refOf is pod's PodRef.
func refOf(pod *v1.Pod) PodRef { return PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID} }

// snapshot is what a sync reads from an entry, taken under the lock.
type snapshot struct {
	version uint64
	status  v1.PodStatus
	base    *v1.Pod
	stale   bool
	at      time.Time
	// couldRun and syncPodSeen are the entry's (see entry).
	couldRun, syncPodSeen bool
}

func (e *entry) snapshot() snapshot {
	return snapshot{version: e.version, status: e.status, base: e.base, stale: e.baseStale, at: e.at,
		couldRun: e.couldRun, syncPodSeen: e.syncPodSeen}
}

// newerRV reports whether resourceVersion a is newer than b. Resource versions are opaque
// to clients, but apimachinery's resourceversion.CompareResourceVersion orders those
// every API server in practice writes (etcd3's revisions, and statustest's): positive
// integers. When either is not one, a differing a counts as newer (it arrived later).
func newerRV(a, b string) bool {
	if c, err := resourceversion.CompareResourceVersion(a, b); err == nil {
		return c > 0
	}
	return a != b
}

// setBaseLocked records p as the server copy of e if it is newer than what e has.
func (e *entry) setBaseLocked(p *v1.Pod) bool {
	if p == nil || p.UID != e.uid {
		return false
	}
	if e.base != nil && !newerRV(p.ResourceVersion, e.base.ResourceVersion) {
		return false
	}
	e.base = p
	e.baseStale = false
	e.gates = nil
	if e.pod == nil || e.pod.ResourceVersion == "" || newerRV(p.ResourceVersion, e.pod.ResourceVersion) {
		e.pod = p
	}
	return true
}

// updateLocked is the kubelet's updateStatusInternal: it validates s against the previous
// status (a rejection is a *TransitionError), fixes its timestamps with the rule
// podstate.Stamp applies too, and caches it as a new version unless it equals the
// cached status on every kubelet-owned field (force overrides that). s must be the
// caller's own copy. e may be nil (first status of the pod). changed reports a new
// version that differs from the cached status on a kubelet-owned field, or for the
// first status from the server's copy in pod (what Observer.OnChange reports); a forced
// version of the same status is not a change.
func (m *Manager) updateLocked(log logr.Logger, e *entry, pod *v1.Pod, s v1.PodStatus, force, finished bool) (changed bool, err error) {
	if e != nil && e.deleted {
		log.V(4).Info("Ignoring status of a pod this Manager deleted", "pod", refOf(pod), "podUID", pod.UID)
		return false, nil
	}
	var old *v1.PodStatus
	cached := e != nil && e.hasStatus
	if cached {
		old = &e.status
		if e.finished {
			finished = true
		}
	} else {
		old = &pod.Status
	}
	if err := checkTransitions(pod, old, &s, m.opts.Features); err != nil {
		return false, err
	}
	// A terminal phase is final (the kubelet's generateAPIPodStatus enforces this before
	// it calls the status manager; callers of this library may not): a non-terminal phase
	// after a terminal one, cached or on the API copy, keeps the terminal phase.
	if p := accept.FinalPhase(s.Phase, old.Phase, pod.Status.Phase); p != s.Phase {
		log.V(2).Info("Ignoring illegal phase transition", "pod", refOf(pod), "podUID", pod.UID, "from", p, "to", s.Phase)
		s.Phase = p
	}
	now := metav1.NewTime(m.clock.Now())
	accept.Stamp(&s, old, now)
	if len(old.VolumeHealth) > 0 && len(s.VolumeHealth) == 0 {
		s.VolumeHealth = old.VolumeHealth
	}
	normalize(pod, &s)
	same := cached && equalByKubelet(&e.status, &s, m.own)
	if same && !force {
		log.V(4).Info("Ignoring same status", "pod", refOf(pod), "podUID", pod.UID)
		return false, nil
	}
	if e == nil {
		// uid, namespace and name never change afterwards: syncs read them unlocked.
		e = &entry{uid: pod.UID, namespace: pod.Namespace, name: pod.Name}
		m.pods[pod.UID] = e
	}
	if e.pod == nil || pod.ResourceVersion == "" || e.pod.ResourceVersion == "" || !newerRV(e.pod.ResourceVersion, pod.ResourceVersion) {
		e.pod = pod
	}
	e.hasStatus = true
	e.status = s
	e.version++
	e.finished = finished
	if e.at.IsZero() {
		e.at = now.Time
	}
	m.markDirtyLocked(e)
	if !cached {
		// The first status of a pod is a change only if it differs from the server's
		// copy: a pod adopted after a restart, its status unchanged, costs no request
		// and must not count as a change (requests per change would drop for nothing).
		return !equalByKubelet(&pod.Status, &s, m.own), nil
	}
	return !same, nil
}

// markDirtyLocked queues e for the next sync and wakes the loop.
func (m *Manager) markDirtyLocked(e *entry) {
	m.dirty[e] = struct{}{}
	m.kickLoop()
}

// kickLoop wakes Run without blocking; one pending wake-up is enough.
func (m *Manager) kickLoop() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// dropLocked removes e from the cache (pod deleted, recreated or orphaned).
func (m *Manager) dropLocked(e *entry) {
	if m.pods[e.uid] == e {
		delete(m.pods, e.uid)
	}
	delete(m.dirty, e)
	delete(m.held, e)
	e.gone = true
	if e.stop != nil {
		e.stop()
		e.stop = nil
	}
}
