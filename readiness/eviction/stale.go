package eviction

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StalePodDisruptionTimeout is how long a DisruptionTarget=True condition may
// stay on a pod that never started terminating before the disruption
// controller resets it to False (the eviction's delete did not happen).
const StalePodDisruptionTimeout = 2 * time.Minute

// StaleDisruptionTarget reports whether the disruption controller tracks pod's
// DisruptionTarget condition as possibly stale, and how long from now until it
// resets the condition to False (0: reset now). Only a True condition whose
// reason is not TerminationByKubelet, on a pod that is neither terminating
// nor in a terminal phase, is tracked.
func StaleDisruptionTarget(pod *v1.Pod, now metav1.Time) (tracked bool, resetAfter time.Duration) {
	if pod == nil || pod.DeletionTimestamp != nil {
		return false, 0
	}
	var cond *v1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.DisruptionTarget {
			cond = &pod.Status.Conditions[i]
			break
		}
	}
	if cond == nil || cond.Status != v1.ConditionTrue || cond.Reason == v1.PodReasonTerminationByKubelet ||
		pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return false, 0
	}
	wait := StalePodDisruptionTimeout - now.Sub(cond.LastTransitionTime.Time)
	if wait < 0 {
		wait = 0
	}
	return true, wait
}
