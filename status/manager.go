package status

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/accept"
	"github.com/podstatus/podstatus/readiness"
)

// Manager caches the status of each pod, decides when a kubelet-owned field really
// changed, and brings the API server up to date with strategic-merge PATCHes of
// pods/status, as the kubelet's status manager does (see the package documentation for
// what it does beyond the kubelet).
//
// All methods are safe for concurrent use. One mutex guards the cache; it is never held
// during a request to the API server. A method that takes a ctx logs with ctx's logger
// (logr.FromContext), else with Options.Logger.
type Manager struct {
	client  Client
	opts    Options
	clock   clock.WithTicker
	log     logr.Logger
	own     conditions.Ownership
	backoff *backoff
	// obs holds the hooks of Options.Observer (none when it is nil).
	obs Observer
	// running is set while Run runs, so that a second Run fails.
	running atomic.Bool

	mu sync.Mutex
	// idle, when non-nil, is closed (and reset to nil) whenever a pod's sync finishes or a
	// pod is forgotten: Sync waits on it for a pod another goroutine is syncing, in a
	// select with its context (a sync.Cond could not see the context). It is made only
	// when someone waits.
	idle chan struct{}
	pods map[types.UID]*entry
	// dirty holds the entries that need a sync: the sync loop walks only these, so its
	// cost grows with the pods that changed, not with the pods cached.
	dirty map[*entry]struct{}
	// held holds the entries whose terminal phase was held back while containers could
	// run; every SyncPeriod (and every Sync) they are queued again.
	held map[*entry]struct{}
	// kick wakes Run; its buffer of one coalesces triggers, as the kubelet's channel.
	kick chan struct{}
	// unreachable is set when a request got no HTTP answer and cleared by the next one
	// that got one (see RetryOptions.RecoveryWindow); probeAt, while it is set and not
	// zero, is when Run next retries one such pod whatever its backoff.
	unreachable bool
	probeAt     time.Time
	// probes counts the probes in flight (at most maxProbes).
	probes int
	// wakeAt is when Run next wakes by itself (zero: only on a kick or a tick), as its
	// last dispatch set it; a retry or probe due before it kicks Run (wakeByLocked).
	wakeAt time.Time
}

// NewManager returns a Manager that writes through c. Nothing is sent until Run or Sync
// is called.
func NewManager(c Client, opts Options) *Manager {
	opts = opts.withDefaults()
	m := &Manager{
		client:  c,
		opts:    opts,
		clock:   opts.Clock,
		log:     opts.Logger,
		own:     conditions.Ownership{Features: opts.Features},
		backoff: newBackoff(opts.Retry),
		pods:    make(map[types.UID]*entry),
		dirty:   make(map[*entry]struct{}),
		held:    make(map[*entry]struct{}),
		kick:    make(chan struct{}, 1),
	}
	if opts.Observer != nil {
		m.obs = *opts.Observer
	}
	return m
}

// SetPodStatus caches s as the kubelet's status for pod and queues it for the API server,
// unless it equals the cached status on every field the kubelet owns.
//
// As the kubelet does, it sets s.ObservedGeneration from pod, keeps each kubelet
// condition's lastTransitionTime unless its Status changes, keeps the first StartTime,
// never lets observedGeneration go back, and normalises timestamps and container-status
// order. A pod with a deletionTimestamp always gets a new version. The previous status
// is the cached one or, for the first call, pod.Status (the API copy).
//
// A terminal phase is final: once the cached status or pod.Status has one, a status with a
// non-terminal phase keeps it.
//
// The error is non-nil when pod is nil or has no UID or name (a *podstatus.InputError),
// or when s moves a terminated container back to a non-terminated state its restart
// policy does not allow (a *TransitionError); the status is then discarded.
// Manager keeps a reference to pod: do not modify it afterwards (informer objects are
// shared and read-only anyway).
func (m *Manager) SetPodStatus(ctx context.Context, pod *v1.Pod, s v1.PodStatus) error {
	if err := checkPod(pod); err != nil {
		return fmt.Errorf("status: SetPodStatus: %w", err)
	}
	if err := m.setPodStatus(m.logger(ctx), pod, *s.DeepCopy()); err != nil {
		return fmt.Errorf("status: SetPodStatus: %w", err)
	}
	return nil
}

// setPodStatus is SetPodStatus for a checked pod and a status the Manager may keep.
func (m *Manager) setPodStatus(log logr.Logger, pod *v1.Pod, st v1.PodStatus) error {
	st.ObservedGeneration = accept.ObservedGeneration(pod, m.opts.Features)
	var changed bool
	defer func() { m.reportChange(changed, pod) }() // after Unlock: Observer calls are made unlocked
	m.mu.Lock()
	defer m.mu.Unlock()
	changed, err := m.updateLocked(log, m.pods[pod.UID], pod, st, pod.DeletionTimestamp != nil, false)
	if err != nil {
		return err
	}
	if e := m.pods[pod.UID]; e != nil && reportsGate(pod, st.Conditions) {
		// The caller built st from what it knows of the gates; that is newer than our base.
		e.gates = slices.Clone(st.Conditions)
	}
	return nil
}

// reportChange tells the Observer about a change a caller made (see Observer.OnChange).
// Call it without m.mu held.
func (m *Manager) reportChange(changed bool, pod *v1.Pod) {
	if f := m.obs.OnChange; f != nil && changed && pod != nil {
		f(ChangeEvent{Pod: refOf(pod)})
	}
}

// reportsGate reports whether conds holds a condition for one of pod's readiness gates.
func reportsGate(pod *v1.Pod, conds []v1.PodCondition) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if conditions.Get(conds, g.ConditionType) != nil {
			return true
		}
	}
	return false
}

// SetContainerReadiness sets the Ready field of the container whose ContainerID
// (runtime://id) is containerID, in regular then init statuses, and regenerates the pod's
// Ready and ContainersReady conditions with the readiness engine (the kubelet's
// generators). Nothing happens when the container's readiness is already ready.
//
// Where the kubelet logs and drops the update, it returns an error: one wrapping
// ErrPodNotFound when the pod has no cached status, ErrContainerNotFound when no
// container status has that ID, a *TransitionError when the resulting status is
// rejected, and a *podstatus.InputError when the cached pod cannot be evaluated.
//
// Readiness-gate conditions are read from whichever reached the Manager last: the
// conditions of the last SetPodStatus that reported a gate, or the newest server copy of
// the pod (see ObservePod); else from the cached status.
func (m *Manager) SetContainerReadiness(ctx context.Context, uid types.UID, containerID string, ready bool) error {
	var changed bool
	var pod *v1.Pod
	defer func() { m.reportChange(changed, pod) }()
	m.mu.Lock()
	defer m.mu.Unlock()
	e, c, err := m.containerLocked(uid, containerID)
	if err != nil {
		return fmt.Errorf("status: SetContainerReadiness: %w", err)
	}
	if c.Ready == ready {
		return nil
	}
	s := *e.status.DeepCopy()
	findContainer(&s, containerID).Ready = ready
	// The freshest gate values: those the caller reported after the base was taken, else
	// the base (the server's copy), else the cached status.
	gates := s.Conditions
	switch {
	case e.gates != nil:
		gates = e.gates
	case e.base != nil:
		gates = e.base.Status.Conditions
	}
	r, err := readiness.Evaluate(readiness.Input{
		Pod: e.pod, Phase: s.Phase,
		InitContainerStatuses: s.InitContainerStatuses, ContainerStatuses: s.ContainerStatuses,
		Conditions: gates, OldStatus: &e.status, Features: m.opts.Features,
	})
	if err != nil {
		return fmt.Errorf("status: SetContainerReadiness: %w", err)
	}
	s.Conditions = replaceOrAppend(s.Conditions, r.Ready)
	s.Conditions = replaceOrAppend(s.Conditions, r.ContainersReady)
	pod = e.pod
	if changed, err = m.updateLocked(m.logger(ctx), e, e.pod, s, false, false); err != nil {
		return fmt.Errorf("status: SetContainerReadiness: %w", err)
	}
	return nil
}

// SetContainerStartup sets the Started field of the container whose ContainerID is
// containerID. As in the kubelet, a nil Started set to false counts as a change. Its
// errors are those of SetContainerReadiness.
func (m *Manager) SetContainerStartup(ctx context.Context, uid types.UID, containerID string, started bool) error {
	var changed bool
	var pod *v1.Pod
	defer func() { m.reportChange(changed, pod) }()
	m.mu.Lock()
	defer m.mu.Unlock()
	e, c, err := m.containerLocked(uid, containerID)
	if err != nil {
		return fmt.Errorf("status: SetContainerStartup: %w", err)
	}
	if c.Started != nil && *c.Started == started {
		return nil
	}
	s := *e.status.DeepCopy()
	findContainer(&s, containerID).Started = &started
	pod = e.pod
	if changed, err = m.updateLocked(m.logger(ctx), e, e.pod, s, false, false); err != nil {
		return fmt.Errorf("status: SetContainerStartup: %w", err)
	}
	return nil
}

// ErrPodNotFound is wrapped by the errors of SetContainerReadiness and
// SetContainerStartup for a pod that has no cached status (SetPodStatus was never called
// for it, or it was forgotten). Test for it with errors.Is.
var ErrPodNotFound = errors.New("pod has no cached status")

// ErrContainerNotFound is wrapped by the errors of SetContainerReadiness and
// SetContainerStartup when no container status of the pod has the container ID. Test
// for it with errors.Is.
var ErrContainerNotFound = errors.New("no container status has this container ID")

// containerLocked returns the entry of the pod with that UID and its container status
// with that ID, or an error wrapping ErrPodNotFound or ErrContainerNotFound.
func (m *Manager) containerLocked(uid types.UID, containerID string) (*entry, *v1.ContainerStatus, error) {
	e := m.pods[uid]
	if e == nil || !e.hasStatus {
		return nil, nil, fmt.Errorf("pod with UID %s: %w", uid, ErrPodNotFound)
	}
	c := findContainer(&e.status, containerID)
	if c == nil {
		return nil, nil, fmt.Errorf("pod %s (uid %s), container ID %q: %w", refOf(e.pod), uid, containerID, ErrContainerNotFound)
	}
	return e, c, nil
}

// TerminatePod ends the pod's lifecycle in the cache: every container that is not
// terminated and could have started is marked terminated (exit code 137, reason
// ContainerStatusUnknown) and a non-terminal phase becomes Failed; the change is always
// queued. Conditions are not touched here: Ready and ContainersReady are forced False
// when the status is merged for the server. pod.Status (the API copy) decides whether
// the pod had initialised.
func (m *Manager) TerminatePod(ctx context.Context, pod *v1.Pod) error {
	if err := checkPod(pod); err != nil {
		return fmt.Errorf("status: TerminatePod: %w", err)
	}
	if err := m.terminatePod(m.logger(ctx), pod); err != nil {
		return fmt.Errorf("status: TerminatePod: %w", err)
	}
	return nil
}

// terminatePod is TerminatePod for a checked pod.
func (m *Manager) terminatePod(log logr.Logger, pod *v1.Pod) error {
	var changed bool
	defer func() { m.reportChange(changed, pod) }()
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.pods[pod.UID]
	base := &pod.Status
	if e != nil && e.hasStatus {
		base = &e.status
	}
	changed, err := m.updateLocked(log, e, pod, terminatedStatus(pod, base, m.opts.Features), true, true)
	return err
}

// GetPodStatus returns a copy of the cached status of the pod with that UID.
func (m *Manager) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.pods[uid]
	if e == nil || !e.hasStatus {
		return v1.PodStatus{}, false
	}
	return *e.status.DeepCopy(), true
}

// RemoveOrphanedStatuses forgets every pod whose UID is not in keep, with its pending
// changes. It walks the whole cache.
func (m *Manager) RemoveOrphanedStatuses(ctx context.Context, keep map[types.UID]bool) {
	log := m.logger(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	for uid, e := range m.pods {
		if !keep[uid] {
			log.V(4).Info("Removing orphaned pod status", "pod", e.ref(), "podUID", uid)
			m.dropLocked(e)
		}
	}
	m.wakeWaitersLocked()
}

// ForgetPod drops everything cached for the pod with that UID, pending changes included:
// call it when a watch reports the pod deleted. A sync in flight for it finishes but
// records nothing.
func (m *Manager) ForgetPod(ctx context.Context, uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.pods[uid]; e != nil {
		m.logger(ctx).V(4).Info("Forgetting pod status", "pod", e.ref(), "podUID", uid)
		m.dropLocked(e)
		m.wakeWaitersLocked()
	}
}

// ObservePod hands the Manager the server's copy of a pod, typically from a watch. It is
// what lets the Manager send one request per change:
//
//   - The copy becomes the base that the next patch is computed against (when its
//     resourceVersion is newer than the base the Manager has), so no GET is needed before
//     the PATCH.
//   - When a readiness-gate condition changed (appeared, vanished or flipped Status),
//     Ready is re-evaluated with the readiness engine against the observed gate
//     conditions and, if it changed, queued at once: a gate flipped by another controller
//     reaches Ready on the next sync, not on a periodic resync. While the gates stay as
//     they were, the Ready the caller reported is left alone.
//   - When the observed status differs from the cached one on a kubelet-owned field
//     (another writer changed it), the pod is queued so the kubelet's value is restored
//     (the kubelet's needsReconcile, done per event instead of on every 10 s sync).
//
// A pod with no cached status is remembered as a base only. Copies older than the base
// are ignored. Manager keeps a reference to pod: do not modify it afterwards.
func (m *Manager) ObservePod(ctx context.Context, pod *v1.Pod) {
	if pod == nil {
		return
	}
	log := m.logger(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.pods[pod.UID]
	if e == nil {
		e = &entry{uid: pod.UID, namespace: pod.Namespace, name: pod.Name}
		m.pods[pod.UID] = e
	}
	if e.deleted || !m.adoptBaseLocked(log, e, pod) || !e.hasStatus {
		return
	}
	if e.pending() {
		// The pending sync patches against this copy; if it is in flight and has sent
		// its PATCH already, finish compares this copy with what the sync merged.
		return
	}
	if m.deletableLocked(e) {
		// The kubelet's needsUpdate: a synced pod that can be deleted is synced again,
		// and the sync deletes it.
		e.version++
		m.markDirtyLocked(e)
		return
	}
	if equalByKubelet(&pod.Status, &e.status, m.own) {
		// The cache is normalized: a copy equal to it as it is would be equal normalized,
		// and the copy normalize needs is saved (most copies are equal). The cached status
		// shares what it can with this newer base (see shareBase).
		shareBase(&e.status, &pod.Status, true)
		return
	}
	observed := pod.Status.DeepCopy()
	normalize(e.pod, observed)
	if !equalByKubelet(observed, &e.status, m.own) {
		log.V(4).Info("Pod status differs from the cached one; queued", "pod", e.ref(), "podUID", e.uid, "resourceVersion", pod.ResourceVersion)
		e.version++
		m.markDirtyLocked(e)
	}
}

// adoptBaseLocked makes p the base of e if it is newer, from whatever source (a watch, a
// PATCH response, a GET), and then re-evaluates readiness gates against it: a gate
// written by another controller may first reach the Manager inside the response to its
// own PATCH, and the watch event that carried it is then older than the base and ignored.
//
// Ready is re-evaluated only when a gate condition differs (appeared, vanished or changed
// Status) from the gates the Manager last knew — those the caller reported, else the old
// base, else the cached status — so a Ready the caller computed itself (say, False with
// its own reason) is kept until a gate really changes.
func (m *Manager) adoptBaseLocked(log logr.Logger, e *entry, p *v1.Pod) bool {
	known := e.status.Conditions
	switch {
	case e.gates != nil:
		known = e.gates
	case e.base != nil:
		known = e.base.Status.Conditions
	}
	if !e.setBaseLocked(p) {
		return false
	}
	if e.hasStatus && e.pod != nil && !sameGates(e.pod, known, p.Status.Conditions) {
		m.reevaluateGatesLocked(log, e)
	}
	return true
}

// sameGates reports whether a and b agree on every readiness gate of pod: both lack the
// condition, or both have it with the same Status (all a gate's effect on Ready).
func sameGates(pod *v1.Pod, a, b []v1.PodCondition) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if !sameStatus(conditions.Get(a, g.ConditionType), conditions.Get(b, g.ConditionType)) {
			return false
		}
	}
	return true
}

// sameStatus reports whether two conditions (nil: missing) are both missing, or both
// present with the same Status.
func sameStatus(a, b *v1.PodCondition) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Status == b.Status)
}

// reevaluateGatesLocked recomputes Ready from the cached container statuses and the gate
// conditions of the base, and caches the result if it differs.
func (m *Manager) reevaluateGatesLocked(log logr.Logger, e *entry) {
	if len(e.pod.Spec.ReadinessGates) == 0 || e.finished || terminal(e.status.Phase) {
		return
	}
	cur := conditions.Get(e.status.Conditions, v1.PodReady)
	if cur == nil {
		return // the caller does not report Ready; nothing to keep up to date
	}
	r, err := readiness.Evaluate(readiness.Input{
		Pod: e.pod, Phase: e.status.Phase,
		InitContainerStatuses: e.status.InitContainerStatuses, ContainerStatuses: e.status.ContainerStatuses,
		Conditions: e.base.Status.Conditions, OldStatus: &e.status, Features: m.opts.Features,
	})
	if err != nil {
		log.Error(err, "Cannot re-evaluate readiness gates", "pod", e.ref(), "podUID", e.uid)
		return
	}
	if r.Ready.Status == cur.Status && r.Ready.Reason == cur.Reason && r.Ready.Message == cur.Message {
		return
	}
	s := *e.status.DeepCopy()
	s.Conditions = replaceOrAppend(s.Conditions, r.Ready)
	if _, err := m.updateLocked(log, e, e.pod, s, false, false); err != nil {
		log.Error(err, "Readiness-gate update rejected", "pod", e.ref(), "podUID", e.uid)
	}
}

// checkPod rejects a pod the Manager cannot write: nil, or without UID or name. The
// error is a *podstatus.InputError.
func checkPod(pod *v1.Pod) error {
	switch {
	case pod == nil:
		return &podstatus.InputError{Errs: field.ErrorList{field.Required(field.NewPath("pod"), "")}}
	case pod.UID == "":
		return &podstatus.InputError{Pod: pod.Namespace + "/" + pod.Name, Errs: field.ErrorList{field.Required(field.NewPath("pod", "UID"), "")}}
	case pod.Name == "":
		return &podstatus.InputError{Errs: field.ErrorList{field.Required(field.NewPath("pod", "Name"), "uid "+string(pod.UID))}}
	}
	return nil
}

// findContainer returns the status with that ContainerID, regular statuses first.
func findContainer(s *v1.PodStatus, id string) *v1.ContainerStatus {
	for i := range s.ContainerStatuses {
		if s.ContainerStatuses[i].ContainerID == id {
			return &s.ContainerStatuses[i]
		}
	}
	for i := range s.InitContainerStatuses {
		if s.InitContainerStatuses[i].ContainerID == id {
			return &s.InitContainerStatuses[i]
		}
	}
	return nil
}

// replaceOrAppend replaces the first condition of c's type in list, or appends c. The
// caller owns list.
func replaceOrAppend(list []v1.PodCondition, c v1.PodCondition) []v1.PodCondition {
	if i := conditions.Index(list, c.Type); i >= 0 {
		list[i] = c
		return list
	}
	return append(list, c)
}
