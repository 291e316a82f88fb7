package status

import (
	"context"
	v1 "k8s.io/api/core/v1"
)

// QueueIfDrifted is the kubelet's periodic needsReconcile (syncBatch in
// pkg/kubelet/status/status_manager.go) for one pod: pod is a copy of the pod whose
// status is the server's as of some recent moment but whose resourceVersion cannot be
// trusted to order it against other copies — the kubelet's pod manager is such a source:
// its pod config updates a pod's status and spec in place and keeps the resourceVersion
// it first saw (checkAndUpdatePod in pkg/kubelet/config/config.go). ObservePod, which
// orders copies by resourceVersion, would ignore those copies.
//
// When pod's status differs from the cached status on a field the kubelet owns (another
// writer changed it, or the copy lags behind the Manager's last PATCH), the pod is queued
// and its next sync first GETs the pod, then patches only what still differs: nothing,
// when the copy only lagged. When pod has a deletionTimestamp the Manager's newest server
// copy lacks, the next sync GETs the pod too (queued if nothing else is), so that a
// terminated pod whose status is already on the server is still deleted (the kubelet's
// needsUpdate and canBeDeleted read a fresh GET). Nothing happens for a pod with no cached
// status, or a copy that agrees with the cache. The copy never becomes the base of a
// patch. Manager keeps no reference to pod.
func (m *Manager) QueueIfDrifted(ctx context.Context, pod *v1.Pod) {
	if pod == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.pods[pod.UID]
	if e == nil || !e.hasStatus || e.deleted {
		return
	}
	if pod.DeletionTimestamp != nil && (e.base == nil || e.base.DeletionTimestamp == nil) {
		e.baseStale = true
		if !e.pending() {
			e.version++
			m.markDirtyLocked(e)
		}
		return
	}
	if e.pending() {
		return
	}
	observed := pod.Status.DeepCopy()
	normalize(e.pod, observed)
	if equalByKubelet(observed, &e.status, m.own) {
		return
	}
	m.logger(ctx).V(4).Info("Pod status differs from the cached one; queued with a GET first", "pod", e.ref(), "podUID", e.uid)
	e.baseStale = true
	e.version++
	m.markDirtyLocked(e)
}
