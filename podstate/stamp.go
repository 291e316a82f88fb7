package podstate

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/readiness"
)

// Stamp does to s what the kubelet's status manager does when it accepts a status from
// generateAPIPodStatus (SetPodStatus), for callers that do not use a status manager:
//
//   - the lastTransitionTime of PodReadyToStartContainers, Initialized, Ready,
//     ContainersReady, PodScheduled, DisruptionTarget and AllContainersRestarting is the
//     one in old when the condition's Status is unchanged there (even a zero time), and
//     now otherwise; other conditions keep theirs;
//   - startTime is old's when old has one, else now;
//   - the pod-level observedGeneration is pod's metadata.generation (with
//     observedGeneration tracking, the default; otherwise only when the server's status
//     already has one), and never lower than old's.
//
// old is the status the manager compares against: the previous status, or the server's
// (pod.Status) when there is none; nil counts as empty. now is truncated to whole seconds,
// as the manager stores times. Stamp changes only s.
func Stamp(pod *v1.Pod, s *v1.PodStatus, old *v1.PodStatus, now metav1.Time, opts ...readiness.Option) {
	if old == nil {
		old = &v1.PodStatus{}
	}
	now = now.Rfc3339Copy()
	// The types whose lastTransitionTime the kubelet's status manager sets, in its order.
	stamped := [...]v1.PodConditionType{
		v1.ContainersReady, v1.PodReady, v1.PodInitialized, v1.PodReadyToStartContainers,
		v1.PodScheduled, v1.DisruptionTarget, v1.AllContainersRestarting,
	}
	for _, t := range stamped {
		if c := conditions.Get(s.Conditions, t); c != nil {
			c.LastTransitionTime = conditions.TransitionTime(old.Conditions, t, c.Status, now)
		}
	}
	switch {
	case old.StartTime != nil && !old.StartTime.IsZero():
		s.StartTime = old.StartTime.DeepCopy()
	case s.StartTime == nil || s.StartTime.IsZero():
		st := now
		s.StartTime = &st
	}
	if pod != nil {
		if readiness.ResolveFeatures(opts...).ObservedGenerationTracking() || pod.Status.ObservedGeneration != 0 {
			s.ObservedGeneration = pod.Generation
		} else {
			s.ObservedGeneration = 0
		}
	}
	if old.ObservedGeneration > s.ObservedGeneration {
		s.ObservedGeneration = old.ObservedGeneration
	}
}

// Base returns the status the kubelet compares a new status against: in.Previous, or the
// server's status when there is no previous one. Pass it to Stamp as old.
func (in *Input) Base() *v1.PodStatus {
	if in.Pod == nil && in.Previous == nil {
		return nil
	}
	return in.base()
}
