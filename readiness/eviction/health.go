package eviction

import (
	v1 "k8s.io/api/core/v1"
)

// PodReady reports whether the pod's first condition of type Ready has status
// True. It is the health predicate of the eviction handler and of the
// disruption controller (podutil.IsPodReady): phase, container statuses and
// readiness gates count only through the kubelet-reported Ready condition.
// A nil pod is not ready.
func PodReady(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.PodReady {
			return pod.Status.Conditions[i].Status == v1.ConditionTrue
		}
	}
	return false
}

// readyFunc returns f, or PodReady when f is nil.
func readyFunc(f func(*v1.Pod) bool) func(*v1.Pod) bool {
	if f == nil {
		return PodReady
	}
	return f
}
