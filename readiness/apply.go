package readiness

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/accept"
)

// Apply writes r's conditions into s with the kubelet's lastTransitionTime rule and
// reports whether s changed.
//
// Each condition replaces the first one of its type or is appended (in the order
// PodReadyToStartContainers, Initialized, Ready, ContainersReady). Its lastTransitionTime
// is kept when the Status is unchanged and becomes now otherwise. When s.Phase is
// terminal (Succeeded or Failed), Ready and ContainersReady are then forced False with
// reason PodCompleted or PodFailed, as the kubelet's status manager does before it sends
// a status, so a finished pod is never reported ready.
func Apply(s *v1.PodStatus, r Result, now metav1.Time) bool {
	changed := false
	set := func(c v1.PodCondition) {
		if c.Type == "" {
			return
		}
		var ch bool
		s.Conditions, ch = accept.SetCondition(s.Conditions, c, now)
		changed = changed || ch
	}
	set(r.PodReadyToStartContainers)
	set(r.Initialized)
	set(r.Ready)
	set(r.ContainersReady)
	if ForceTerminal(s, now) {
		changed = true
	}
	return changed
}

// ForceTerminal makes Ready and ContainersReady False in a terminal phase, as the
// kubelet's mergePodStatus does: when s.Phase is Succeeded or Failed and either condition
// is True, ContainersReady and then Ready are set False with reason PodCompleted or
// PodFailed (replaced in place or appended, lastTransitionTime now). It reports whether
// s changed; outside a terminal phase it does nothing.
func ForceTerminal(s *v1.PodStatus, now metav1.Time) bool {
	var reason string
	switch s.Phase {
	case v1.PodSucceeded:
		reason = ReasonPodCompleted
	case v1.PodFailed:
		reason = ReasonPodFailed
	default:
		return false
	}
	ready := conditions.Get(s.Conditions, v1.PodReady)
	cr := conditions.Get(s.Conditions, v1.ContainersReady)
	if (ready == nil || ready.Status != v1.ConditionTrue) && (cr == nil || cr.Status != v1.ConditionTrue) {
		return false
	}
	for _, t := range []v1.PodConditionType{v1.ContainersReady, v1.PodReady} {
		c := v1.PodCondition{Type: t, Status: v1.ConditionFalse, Reason: reason}
		if old := conditions.Get(s.Conditions, t); old != nil {
			c.ObservedGeneration = old.ObservedGeneration
		}
		s.Conditions, _ = accept.SetCondition(s.Conditions, c, now)
	}
	return true
}
