package eviction

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/internal/accept"
)

// StalePodDisruptionTimeout is how long a DisruptionTarget=True condition may
// stay on a pod that never started terminating before the disruption
// controller resets it to False (the eviction's delete did not happen).
const StalePodDisruptionTimeout = 2 * time.Minute

// StaleDisruptionTarget reports whether the disruption controller tracks the
// DisruptionTarget condition of in.Pod as possibly stale, and how long from
// in.Now until it resets the condition to False (0: reset now), as
// nonTerminatingPodHasStaleDisruptionCondition in
// pkg/controller/disruption/disruption.go does. Only a True condition whose
// reason is not TerminationByKubelet, on a pod that is neither terminating
// nor in a terminal phase, is tracked.
//
// The error is only for a nil Pod or a zero Now: a *[podstatus.InputError],
// matching [podstatus.ErrInvalidInput], whose field paths start at StaleInput.
func StaleDisruptionTarget(in StaleInput) (tracked bool, resetAfter time.Duration, err error) {
	if err := validateStaleInput(in); err != nil {
		return false, 0, err
	}
	pod := in.Pod
	if pod.DeletionTimestamp != nil {
		return false, 0, nil
	}
	var cond *v1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.DisruptionTarget {
			cond = &pod.Status.Conditions[i]
			break
		}
	}
	if cond == nil || cond.Status != v1.ConditionTrue || cond.Reason == v1.PodReasonTerminationByKubelet ||
		accept.Terminal(pod.Status.Phase) {
		return false, 0, nil
	}
	wait := StalePodDisruptionTimeout - in.Now.Sub(cond.LastTransitionTime.Time)
	if wait < 0 {
		wait = 0
	}
	return true, wait, nil
}
