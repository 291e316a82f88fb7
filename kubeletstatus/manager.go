package kubeletstatus

import (
	"context"
	"errors"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/metrics"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	"k8s.io/utils/clock"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/kubeclient"
)

// DefaultFieldManager is the field manager of the adapter's PATCHes when
// Options.FieldManager is empty: "kubelet", the manager the API server derives from the
// kubelet's User-Agent for the kubelet's own status PATCHes, so managedFields stay as
// they were before the swap.
const DefaultFieldManager = "kubelet"

// Options configures the adapter beyond the kubelet's parameters. The zero value is what
// NewManager uses. Each field is the status.Options field of the same name; the rest of
// status.Options comes from the kubelet: CouldHaveRunningContainers from the pod
// deletion safety provider, Deleter from the kube client, Features from the kubelet's
// feature gates (FeaturesFromGates), and the logger from each call (the kubelet's
// klog.Logger argument, Start's context), klog.Background() where a call brings none.
type Options struct {
	// Clock is the time source of timestamps, backoff, the sync loop and the periodic
	// reconcile. Default: the real clock.
	Clock clock.WithTicker
	// SyncPeriod is how often the sync loop wakes and the pod manager's copies are
	// reconciled. Default status.DefaultSyncPeriod, the kubelet's.
	SyncPeriod time.Duration
	// Observer receives podstatus's events; the adapter's own hooks (the kubelet's
	// metrics and notifiers) are called beside it. Default: none.
	Observer *status.Observer
	// Workers is how many pods one sync sends at once. Default 1, as the kubelet.
	Workers int
	// RequestTimeout bounds each GET and PATCH. Zero: no bound beyond Start's context.
	RequestTimeout time.Duration
	// Retry sets the backoff of failed syncs.
	Retry status.RetryOptions
	// UpstreamTransitionTimes gives the kubelet's lastTransitionTime behaviour exactly
	// (kubernetes#119514 unfixed).
	UpstreamTransitionTimes bool
	// FieldManager is the field manager of every PATCH. Default DefaultFieldManager.
	FieldManager string
}

// NewManager returns the kubelet's status.Manager implemented on podstatus, with the
// parameters of the kubelet's status.NewManager (pkg/kubelet/status/status_manager.go,
// v1.37.0): the kube client (nil on a kubelet that runs without an API server: statuses
// are cached and nothing is sent), the pod manager, the pod deletion safety provider and
// the pod startup latency tracker. All but the kube client are required, as in the
// kubelet. It is NewManagerWithOptions with zero Options.
func NewManager(kubeClient clientset.Interface, podManager kubeletstatus.PodManager, podDeletionSafety kubeletstatus.PodDeletionSafetyProvider, podStartupLatencyHelper kubeletstatus.PodStartupLatencyStateHelper) kubeletstatus.Manager {
	return NewManagerWithOptions(kubeClient, podManager, podDeletionSafety, podStartupLatencyHelper, Options{})
}

// NewManagerWithOptions is NewManager with Options. The package documentation says
// which calls go to podstatus's Manager and which to the kubelet's own.
func NewManagerWithOptions(kubeClient clientset.Interface, podManager kubeletstatus.PodManager, podDeletionSafety kubeletstatus.PodDeletionSafetyProvider, podStartupLatencyHelper kubeletstatus.PodStartupLatencyStateHelper, opts Options) kubeletstatus.Manager {
	a := &adapter{
		kubeClient: kubeClient,
		podManager: podManager,
		latency:    podStartupLatencyHelper,
		legacy:     kubeletstatus.NewManager(kubeClient, podManager, podDeletionSafety, podStartupLatencyHelper),
		changes:    make(map[types.UID]uint64),
	}
	so := status.Options{
		Clock: opts.Clock, SyncPeriod: opts.SyncPeriod, Logger: klog.Background(),
		Observer: opts.Observer, Workers: opts.Workers, RequestTimeout: opts.RequestTimeout,
		Retry: opts.Retry, UpstreamTransitionTimes: opts.UpstreamTransitionTimes,
	}
	if so.Clock == nil {
		so.Clock = clock.RealClock{}
	}
	if so.SyncPeriod <= 0 {
		so.SyncPeriod = status.DefaultSyncPeriod
	}
	a.clock, a.period = so.Clock, so.SyncPeriod
	so.Features = FeaturesFromGates()
	so.CouldHaveRunningContainers = podDeletionSafety.PodCouldHaveRunningContainers
	so.Observer = status.Observers(so.Observer, &status.Observer{
		OnChange: a.onChange,
		OnSkip:   a.onSkip,
		OnSynced: func(ev status.SyncedEvent) { metrics.PodStatusSyncDuration.Observe(ev.Latency.Seconds()) },
	})
	var c status.Client
	if kubeClient != nil {
		fm := opts.FieldManager
		if fm == "" {
			fm = DefaultFieldManager
		}
		kc := &client{Client: kubeclient.New(kubeClient.CoreV1(), fm), latency: podStartupLatencyHelper, forget: a.forget}
		c, so.Deleter = kc, kc
	}
	a.inner = status.NewManager(c, so)
	return a
}

// FeaturesFromGates returns the podstatus feature set that matches the kubelet's
// feature gates (utilfeature.DefaultFeatureGate, which the kubelet's flags set):
// PodReadyToStartContainersCondition, RestartAllContainersOnContainerExits,
// ContainerRestartRules and InPlacePodLevelResourcesVerticalScaling. The other fields of features.Set follow gates that are GA and
// locked on in v1.37.0.
func FeaturesFromGates() features.Set {
	on := utilfeature.DefaultFeatureGate.Enabled
	return features.Set{
		NoReadyToStartContainers: !on(kubefeatures.PodReadyToStartContainersCondition),
		NoRestartAllContainers:   !on(kubefeatures.RestartAllContainersOnContainerExits),
		NoContainerRestartRules:  !on(kubefeatures.ContainerRestartRules),
		// The gate also needs InPlacePodVerticalScaling (GA, locked on), PodLevelResources
		// and NodeDeclaredFeatures (GA, locked on), which the gate registry enforces.
		NoPodLevelResourcesStatus: !on(kubefeatures.InPlacePodLevelResourcesVerticalScaling),
	}
}

// adapter is the kubelet's status.Manager on podstatus. API pods go to inner; static pods
// and the resize-condition cache go to legacy, the kubelet's own manager.
type adapter struct {
	inner      *status.Manager
	legacy     kubeletstatus.Manager
	kubeClient clientset.Interface
	podManager kubeletstatus.PodManager
	latency    kubeletstatus.PodStartupLatencyStateHelper
	clock      clock.WithTicker
	period     time.Duration

	mu sync.Mutex
	// changes counts the changes inner reported for each pod it caches (Observer.OnChange),
	// so that SetPodStatus can return the kubelet's "changed" and notifiers hear of
	// changes; its keys are also the pods the periodic reconcile reads from the pod manager.
	changes   map[types.UID]uint64
	notifiers []kubeletstatus.PodUpdateNotifier
}

var _ kubeletstatus.Manager = (*adapter)(nil)

// client is the kube client podstatus's Manager writes through: status/kubeclient's,
// plus the pod startup latency tracker's hooks the kubelet's syncPod calls.
type client struct {
	*kubeclient.Client
	latency kubeletstatus.PodStartupLatencyStateHelper
	// forget drops a deleted pod's cached status (status.Manager.ForgetPod).
	forget func(context.Context, types.UID)
}

// PatchPodStatus sends the PATCH and, when it succeeded, hands the stored pod to the
// latency tracker (RecordStatusUpdated), as the kubelet's syncPod does after a PATCH that
// changed the status. podstatus never sends an empty patch, so every success counts.
func (c *client) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	p, err := c.Client.PatchPodStatus(ctx, namespace, name, patch)
	if err == nil && p != nil && c.latency != nil {
		c.latency.RecordStatusUpdated(klog.FromContext(ctx), p)
	}
	return p, err
}

// DeletePod deletes the pod (grace period 0, UID precondition) and, when it is gone,
// drops its cached status and its startup-latency state, as the kubelet's deletePodStatus
// does after the DELETE: GetPodStatus then reports no status, as in the kubelet, where
// podstatus's Manager alone would keep the last status as a tombstone until
// RemoveOrphanedStatuses. The Manager holds no lock during the request, so forgetting
// the pod here is safe; its sync of the pod ends without recording anything.
func (c *client) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	err := c.Client.DeletePod(ctx, namespace, name, uid)
	if err == nil {
		c.forget(ctx, uid)
		if c.latency != nil {
			c.latency.DeletePodStartupState(uid)
		}
	}
	return err
}

// forget drops everything cached for a pod the adapter deleted.
func (a *adapter) forget(ctx context.Context, uid types.UID) {
	a.inner.ForgetPod(ctx, uid)
	a.mu.Lock()
	delete(a.changes, uid)
	a.mu.Unlock()
	a.dropResize(uid)
}

// dropResize clears the pod's resize conditions in the kubelet's manager, as its
// deletePodStatus and RemoveOrphanedStatuses do for the pods it caches (it caches no
// status of an API pod here, so it would not): a pending resize is recorded as ended by
// termination. The kubelet's manager keeps an empty entry for the UID (its Clear methods
// do not delete the map key): a few dozen bytes per pod that ever had a resize condition.
func (a *adapter) dropResize(uid types.UID) {
	a.legacy.ClearPodResizePendingCondition(uid, metrics.DeferredResizeResolutionTerminated)
	a.legacy.ClearPodResizeInProgressCondition(uid)
}

func (a *adapter) onChange(ev status.ChangeEvent) {
	a.mu.Lock()
	a.changes[ev.Pod.UID]++
	a.mu.Unlock()
}

// onSkip drops the startup-latency state of a pod whose cached status inner dropped
// because the pod is gone or was recreated (the kubelet's deletePodStatus).
func (a *adapter) onSkip(ev status.SkipEvent) {
	if ev.Reason == status.SkipUnchanged {
		return
	}
	a.mu.Lock()
	delete(a.changes, ev.Pod.UID)
	a.mu.Unlock()
	a.dropResize(ev.Pod.UID)
	if a.latency != nil {
		a.latency.DeletePodStartupState(ev.Pod.UID)
	}
}

// track makes sure the pod is read by the periodic reconcile and returns its change
// count.
func (a *adapter) track(uid types.UID) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.changes[uid]
	if !ok {
		a.changes[uid] = 0
	}
	return n
}

func (a *adapter) count(uid types.UID) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changes[uid]
}

// GetPodStatus returns the cached status of the pod, podstatus's for an API pod, the
// kubelet's manager's for a static pod (whose UID it translates from the mirror pod's,
// as the kubelet does).
func (a *adapter) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	if s, ok := a.inner.GetPodStatus(uid); ok {
		return s, true
	}
	return a.legacy.GetPodStatus(uid)
}

// Start starts podstatus's sync loop (status.Manager.Run), the periodic reconcile that
// reads the pod manager, and the kubelet's manager for static pods, all until ctx is
// done. Unlike the kubelet's loop (wait.Forever), podstatus's stops with ctx. With no
// kube client nothing starts, as in the kubelet.
func (a *adapter) Start(ctx context.Context) {
	logger := klog.FromContext(ctx)
	if a.kubeClient == nil {
		logger.Info("Kubernetes client is nil, not starting status manager")
		return
	}
	a.legacy.Start(ctx)
	logger.Info("Starting to sync pod status with apiserver (podstatus)")
	go func() {
		if err := a.inner.Run(ctx); err != nil {
			logger.Error(err, "Pod status sync loop did not start")
		}
	}()
	go a.reconcile(ctx)
}

// reconcile hands the pod manager's copy of every cached API pod to podstatus's
// status.Manager.QueueIfDrifted every sync period: the kubelet's needsReconcile (syncBatch),
// which reads the same copies and makes requests (a GET, then a PATCH if still needed)
// only when a kubelet-owned field drifted; a copy with a deletionTimestamp the Manager
// has not seen on the server makes it GET the pod, so a terminated pod is deleted
// (needsUpdate and canBeDeleted). QueueIfDrifted, not ObservePod: the pod manager's copies
// keep the resourceVersion the kubelet's pod config first saw (checkAndUpdatePod in
// pkg/kubelet/config/config.go), which cannot order them.
//
// Nor can anything else tell a copy that lags behind the adapter's last PATCH (the
// watch event has not reached the pod config yet) from one another writer changed, and
// a lagging copy looks like drift: a GET never followed by a PATCH. On a hollow node
// creating 300 pods, 145 such GETs came at two ticks. So a pod whose status changed
// since the previous tick is not compared yet, only its deletionTimestamp is
// (reconcileDeletion); it is compared at the next tick if it stays unchanged. Drift on
// a pod the kubelet keeps changing is then repaired by the kubelet's own next status,
// and on a settled pod within one to two periods.
func (a *adapter) reconcile(ctx context.Context) {
	t := a.clock.NewTicker(a.period)
	defer t.Stop()
	seen := map[types.UID]uint64{} // each pod's change count at the previous tick
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		a.mu.Lock()
		now := make(map[types.UID]uint64, len(a.changes))
		for uid, n := range a.changes {
			now[uid] = n
		}
		a.mu.Unlock()
		for uid, n := range now {
			pod, ok := a.podManager.GetPodByUID(uid)
			if !ok || toLegacy(pod) {
				continue
			}
			if before, ok := seen[uid]; ok && before == n {
				a.inner.QueueIfDrifted(ctx, pod)
			} else {
				a.reconcileDeletion(ctx, pod)
			}
		}
		seen = now
	}
}

// AddPodUpdateNotifier adds a subscriber to the updates of both managers. For API pods
// it hears every change podstatus's Manager accepts from a call of this interface
// (OnPodUpdated) and every TerminatePod (OnPodRemoved), as the kubelet's manager sends
// them; a Ready that podstatus re-evaluates by itself after a readiness gate flipped is
// not notified (the kubelet's own resync of that pod notifies it).
func (a *adapter) AddPodUpdateNotifier(n kubeletstatus.PodUpdateNotifier) {
	a.legacy.AddPodUpdateNotifier(n)
	a.mu.Lock()
	a.notifiers = append(a.notifiers, n)
	a.mu.Unlock()
}

// notify sends a notification for pod with its cached status, as the kubelet's
// sendNotification does.
func (a *adapter) notify(logger klog.Logger, pod *v1.Pod, isAdded, finished bool) {
	a.mu.Lock()
	ns := a.notifiers
	a.mu.Unlock()
	if len(ns) == 0 {
		return
	}
	cp, ok := a.withCachedStatus(pod)
	if !ok {
		return
	}
	for _, n := range ns {
		if finished {
			n.OnPodRemoved(logger, cp)
		} else {
			n.OnPodUpdated(logger, cp, cp.Status, isAdded)
		}
	}
}

// hasNotifiers reports whether anyone listens, so that callers skip the work otherwise.
func (a *adapter) hasNotifiers() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.notifiers) > 0
}

// SetPodStatus caches status for pod and queues it, with the kubelet's rules (see
// status.Manager.SetPodStatus), and returns the cached status and whether it changed.
// The first pod the Manager sees becomes the base of its first PATCH, so no GET precedes
// it; later PATCHes are computed against the previous PATCH's response (the kubelet's
// pod copies keep their first resourceVersion, so ObservePod ignores them afterwards).
// A pod with a deletionTimestamp the Manager has not seen on the server makes the next
// sync GET it first (see reconcileDeletion); the pod's status is never compared with the
// cache here (the pod worker's copy may predate the last PATCH). A status the kubelet's rules reject is
// logged at the kubelet's level and the cached one returned. "changed" is true for a change of a kubelet-owned
// field and for a pod with a deletionTimestamp (always a new version, as in the kubelet);
// another call changing the same pod at the same moment may make it true too.
func (a *adapter) SetPodStatus(logger klog.Logger, pod *v1.Pod, st v1.PodStatus) (v1.PodStatus, bool) {
	if toLegacy(pod) {
		return a.legacy.SetPodStatus(logger, pod, st)
	}
	var hadStatus bool
	if a.hasNotifiers() {
		_, hadStatus = a.inner.GetPodStatus(pod.UID)
	}
	before := a.track(pod.UID)
	ctx := klog.NewContext(context.Background(), logger)
	a.inner.ObservePod(ctx, pod)
	err := a.inner.SetPodStatus(ctx, pod, st)
	if err != nil {
		logger.Error(err, "Status update on pod aborted", "pod", klog.KObj(pod))
	}
	a.reconcileDeletion(ctx, pod)
	changed := err == nil && (a.count(pod.UID) != before || pod.DeletionTimestamp != nil)
	if changed {
		a.notify(logger, pod, !hadStatus && pod.DeletionTimestamp == nil, false)
	}
	cached, _ := a.inner.GetPodStatus(pod.UID)
	return cached, changed
}

// SetContainerReadiness sets the readiness of the container and regenerates Ready and
// ContainersReady with podstatus's readiness engine (the kubelet's generators), reading
// readiness gates from the conditions of the last SetPodStatus (as the kubelet reads its
// cached status), or from a newer server copy. An update for a pod the pod manager no
// longer has, a pod with no cached status, or an unknown container is logged and
// dropped, as in the kubelet.
func (a *adapter) SetContainerReadiness(logger klog.Logger, podUID types.UID, containerID kubecontainer.ContainerID, ready bool) {
	a.setContainer(logger, podUID, containerID, "readiness",
		func() { a.legacy.SetContainerReadiness(logger, podUID, containerID, ready) },
		func(ctx context.Context) error {
			return a.inner.SetContainerReadiness(ctx, podUID, containerID.String(), ready)
		})
}

// SetContainerStartup sets the Started field of the container, with the kubelet's rules
// (a nil Started set to false is a change). Unknown pods and containers are logged and
// dropped, as in the kubelet.
func (a *adapter) SetContainerStartup(logger klog.Logger, podUID types.UID, containerID kubecontainer.ContainerID, started bool) {
	a.setContainer(logger, podUID, containerID, "startup",
		func() { a.legacy.SetContainerStartup(logger, podUID, containerID, started) },
		func(ctx context.Context) error {
			return a.inner.SetContainerStartup(ctx, podUID, containerID.String(), started)
		})
}

// setContainer is a container setter: for a pod the pod manager no longer has it logs
// and returns, for a static pod it calls legacy, else set (one of podstatus's setters),
// whose error it logs as the kubelet logs the same case ("Container <what> changed
// before pod has synced", "... for unknown container").
func (a *adapter) setContainer(logger klog.Logger, podUID types.UID, containerID kubecontainer.ContainerID, what string, legacy func(), set func(context.Context) error) {
	pod, ok := a.podManager.GetPodByUID(podUID)
	if !ok {
		logger.V(4).Info("Pod has been deleted, no need to update "+what, "podUID", podUID)
		return
	}
	if toLegacy(pod) {
		legacy()
		return
	}
	before := a.count(pod.UID)
	err := set(klog.NewContext(context.Background(), logger))
	switch {
	case errors.Is(err, status.ErrPodNotFound):
		logger.Info("Container "+what+" changed before pod has synced", "pod", klog.KObj(pod), "containerID", containerID.String())
	case errors.Is(err, status.ErrContainerNotFound):
		logger.Info("Container "+what+" changed for unknown container", "pod", klog.KObj(pod), "containerID", containerID.String())
	case err != nil:
		logger.Error(err, "Status update on pod aborted", "pod", klog.KObj(pod))
	case a.count(pod.UID) != before:
		a.notify(logger, pod, false, false)
	}
}

// SetPodVolumeHealth sets the volume's health conditions in the cached status (see
// status.Manager.SetPodVolumeHealth: the kubelet's (status, reason) rule, the status's
// observedGeneration kept) and reports whether the cached status changed.
func (a *adapter) SetPodVolumeHealth(logger klog.Logger, podUID types.UID, volumeName string, conds []v1.VolumeHealthCondition) bool {
	pod, ok := a.podManager.GetPodByUID(podUID)
	if !ok {
		logger.V(4).Info("Pod has been deleted, no need to update volume health", "podUID", podUID)
		return false
	}
	if toLegacy(pod) {
		return a.legacy.SetPodVolumeHealth(logger, podUID, volumeName, conds)
	}
	changed, err := a.inner.SetPodVolumeHealth(klog.NewContext(context.Background(), logger), pod.UID, volumeName, conds)
	switch {
	case errors.Is(err, status.ErrPodNotFound):
		logger.Info("Volume health changed before pod has synced", "pod", klog.KObj(pod), "volumeName", volumeName)
	case err != nil:
		logger.Error(err, "Status update on pod aborted", "pod", klog.KObj(pod))
	case changed:
		a.notify(logger, pod, false, false)
	}
	return changed
}

// TerminatePod marks every container that could have started and is not terminated as
// terminated (exit code 137, ContainerStatusUnknown), moves a non-terminal phase to
// Failed and queues the status; once the server has it and the pod has a
// deletionTimestamp, the pod object is deleted (grace period 0, UID precondition), as
// the kubelet's canBeDeleted allows. Static pods keep the kubelet's rules (no terminal
// phase is forced for them, TODO kubernetes#116484 upstream).
func (a *adapter) TerminatePod(logger klog.Logger, pod *v1.Pod) {
	if toLegacy(pod) {
		a.legacy.TerminatePod(logger, pod)
		return
	}
	a.track(pod.UID)
	ctx := klog.NewContext(context.Background(), logger)
	a.inner.ObservePod(ctx, pod)
	if err := a.inner.TerminatePod(ctx, pod); err != nil {
		logger.Error(err, "Status update on pod aborted", "pod", klog.KObj(pod))
		return
	}
	a.reconcileDeletion(ctx, pod)
	a.notify(logger, pod, false, true)
}

// reconcileDeletion hands status.Manager.QueueIfDrifted the deletionTimestamp of pod, a copy
// from the pod worker (SetPodStatus, TerminatePod), and nothing else of it: a
// deletionTimestamp the Manager has not seen on the server makes the next sync GET the
// pod, so that the terminated pod is deleted (the kubelet's syncPod GETs it too before
// its final DELETE, pkg/kubelet/status/status_manager.go). The copy's status is not
// compared with the cache: the pod worker's copy is the one it was dispatched with, whose
// status may predate the last PATCH, and comparing it would take the lag for drift on
// the server and cost a GET never followed by a PATCH. Drift is the periodic reconcile's
// job, on the pod manager's newest copy (reconcile), as in the kubelet (needsReconcile in
// syncBatch). Here the copy given to QueueIfDrifted carries the cached status, so it only
// differs from the cache if another call changed the cache meanwhile (one GET then).
func (a *adapter) reconcileDeletion(ctx context.Context, pod *v1.Pod) {
	if pod.DeletionTimestamp == nil {
		return
	}
	if p, ok := a.withCachedStatus(pod); ok {
		a.inner.QueueIfDrifted(ctx, p)
	}
}

// withCachedStatus is a shallow copy of pod carrying podstatus's cached status for it,
// and false when the Manager has none.
func (a *adapter) withCachedStatus(pod *v1.Pod) (*v1.Pod, bool) {
	s, ok := a.inner.GetPodStatus(pod.UID)
	if !ok {
		return nil, false
	}
	cp := *pod
	cp.Status = s
	return &cp, true
}

// RemoveOrphanedStatuses forgets every pod whose UID is not in podUIDs, in both
// managers, with their resize conditions (see dropResize).
func (a *adapter) RemoveOrphanedStatuses(logger klog.Logger, podUIDs map[types.UID]bool) {
	a.inner.RemoveOrphanedStatuses(klog.NewContext(context.Background(), logger), podUIDs)
	a.legacy.RemoveOrphanedStatuses(logger, podUIDs)
	var orphans []types.UID
	a.mu.Lock()
	for uid := range a.changes {
		if !podUIDs[uid] {
			delete(a.changes, uid)
			orphans = append(orphans, uid)
		}
	}
	a.mu.Unlock()
	for _, uid := range orphans {
		a.dropResize(uid)
	}
}

// GetPodResizeConditions is the kubelet's, delegated (see the package documentation).
func (a *adapter) GetPodResizeConditions(podUID types.UID) []*v1.PodCondition {
	return a.legacy.GetPodResizeConditions(podUID)
}

// SetPodResizePendingCondition is the kubelet's, delegated.
func (a *adapter) SetPodResizePendingCondition(podUID types.UID, reason, message string, observedGeneration int64) bool {
	return a.legacy.SetPodResizePendingCondition(podUID, reason, message, observedGeneration)
}

// SetPodResizeInProgressCondition is the kubelet's, delegated.
func (a *adapter) SetPodResizeInProgressCondition(podUID types.UID, reason, message string, observedGeneration int64) (int64, bool) {
	return a.legacy.SetPodResizeInProgressCondition(podUID, reason, message, observedGeneration)
}

// ClearPodResizePendingCondition is the kubelet's, delegated.
func (a *adapter) ClearPodResizePendingCondition(podUID types.UID, resolution metrics.DeferredResizeResolution) {
	a.legacy.ClearPodResizePendingCondition(podUID, resolution)
}

// ClearPodResizeInProgressCondition is the kubelet's, delegated.
func (a *adapter) ClearPodResizeInProgressCondition(podUID types.UID) (int64, bool) {
	return a.legacy.ClearPodResizeInProgressCondition(podUID)
}

// IsPodResizeDeferred is the kubelet's, delegated.
func (a *adapter) IsPodResizeDeferred(podUID types.UID) bool {
	return a.legacy.IsPodResizeDeferred(podUID)
}

// IsPodResizeInfeasible is the kubelet's, delegated.
func (a *adapter) IsPodResizeInfeasible(podUID types.UID) bool {
	return a.legacy.IsPodResizeInfeasible(podUID)
}

// BackfillPodResizeConditions is the kubelet's, delegated.
func (a *adapter) BackfillPodResizeConditions(pods []*v1.Pod) {
	a.legacy.BackfillPodResizeConditions(pods)
}

// toLegacy reports whether pod stays with the kubelet's own manager: a static pod (its
// status goes to the mirror pod, whose UID differs), or a pod with no UID or no name,
// which no API server holds and podstatus refuses (a *podstatus.InputError) but the
// kubelet's manager caches like any other (the kubelet's own tests build such pods).
func toLegacy(pod *v1.Pod) bool {
	return kubetypes.IsStaticPod(pod) || pod.UID == "" || pod.Name == ""
}

var (
	_ status.Client     = (*client)(nil)
	_ status.PodDeleter = (*client)(nil)
)
