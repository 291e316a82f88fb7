package readiness

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	if accept.ForceTerminal(s, now) {
		changed = true
	}
	return changed
}
