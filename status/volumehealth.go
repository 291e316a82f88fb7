package status

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SetPodVolumeHealth sets the VolumeHealth entry of the volume named volumeName in the
// cached status of the pod with that UID to conds (the full set of the volume's
// conditions; empty means healthy) and queues the change, as the kubelet's
// SetPodVolumeHealth does (pkg/kubelet/status/status_manager.go, fed by
// pkg/kubelet/volumemanager/volumehealth). It reports whether the cached status changed.
//
// Nothing changes when the entry's conditions already have the same set of (Status,
// Reason) pairs: a change of Message alone is not sent. Otherwise the entry is replaced
// (or appended) with conds and a lastTransitionTime of now, in whole seconds as the API
// server stores it. The status keeps its observedGeneration: volume health is not a
// sync of the pod's spec. Statuses the caller sets later without VolumeHealth keep the
// cached entries, as in the kubelet.
//
// The error wraps ErrPodNotFound when the pod has no cached status, or is a
// *TransitionError when the cached status itself is rejected (it cannot be, unless the
// pod's spec changed since).
func (m *Manager) SetPodVolumeHealth(ctx context.Context, uid types.UID, volumeName string, conds []v1.VolumeHealthCondition) (bool, error) {
	var changed bool
	var pod *v1.Pod
	defer func() { m.reportChange(changed, pod) }()
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.pods[uid]
	if e == nil || !e.hasStatus {
		return false, fmt.Errorf("status: SetPodVolumeHealth: pod with UID %s: %w", uid, ErrPodNotFound)
	}
	i := slices.IndexFunc(e.status.VolumeHealth, func(h v1.PodVolumeHealth) bool { return h.Name == volumeName })
	var old []v1.VolumeHealthCondition
	if i >= 0 {
		old = e.status.VolumeHealth[i].HealthConditions
	}
	if sameHealthConditions(old, conds) {
		return false, nil
	}
	s := *e.status.DeepCopy()
	h := v1.PodVolumeHealth{
		Name:               volumeName,
		HealthConditions:   slices.Clone(conds),
		LastTransitionTime: metav1.NewTime(m.clock.Now()).Rfc3339Copy(),
	}
	if i >= 0 {
		s.VolumeHealth[i] = h
	} else {
		s.VolumeHealth = append(s.VolumeHealth, h)
	}
	pod = e.pod
	var err error
	if changed, err = m.updateLocked(m.logger(ctx), e, e.pod, s, false, false); err != nil {
		return false, fmt.Errorf("status: SetPodVolumeHealth: %w", err)
	}
	return changed, nil
}

// sameHealthConditions reports whether a and b hold the same set of (Status, Reason)
// pairs, duplicates and order ignored: the kubelet's VolumeHealthConditionSetsEqual
// (pkg/volume/util/util.go), which keeps a change of Message alone from being sent.
func sameHealthConditions(a, b []v1.VolumeHealthCondition) bool {
	type key struct {
		status v1.VolumeHealthStatusType
		reason string
	}
	set := func(list []v1.VolumeHealthCondition) map[key]bool {
		s := make(map[key]bool, len(list))
		for _, c := range list {
			s[key{c.Status, c.Reason}] = true
		}
		return s
	}
	sa, sb := set(a), set(b)
	if len(sa) != len(sb) {
		return false
	}
	for k := range sa {
		if !sb[k] {
			return false
		}
	}
	return true
}
