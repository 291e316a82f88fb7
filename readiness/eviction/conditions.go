package eviction

import (
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// findCondition returns the first condition of type t, or nil.
func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// setCondition is apimachinery's meta.SetStatusCondition with the clock made
// an argument: a new condition, or one whose status changes, gets
// lastTransitionTime now (unless the new condition carries its own); reason,
// message and observedGeneration are overwritten. It returns the new list,
// never aliasing conds.
func setCondition(conds []metav1.Condition, c metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, len(conds), len(conds)+1)
	copy(out, conds)
	existing := findCondition(out, c.Type)
	if existing == nil {
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
		}
		return append(out, c)
	}
	if existing.Status != c.Status {
		existing.Status = c.Status
		if !c.LastTransitionTime.IsZero() {
			existing.LastTransitionTime = c.LastTransitionTime
		} else {
			existing.LastTransitionTime = now
		}
	}
	existing.Reason = c.Reason
	existing.Message = c.Message
	existing.ObservedGeneration = c.ObservedGeneration
	return out
}

// disruptionAllowedCondition is the DisruptionAllowed condition for status, as
// component-helpers' UpdateDisruptionAllowedCondition computes it: True with
// reason SufficientPods when disruptionsAllowed > 0, else False with reason
// InsufficientPods; observedGeneration is the status's.
func disruptionAllowedCondition(status *policyv1.PodDisruptionBudgetStatus) metav1.Condition {
	c := metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             policyv1.InsufficientPodsReason,
		ObservedGeneration: status.ObservedGeneration,
	}
	if status.DisruptionsAllowed > 0 {
		c.Status = metav1.ConditionTrue
		c.Reason = policyv1.SufficientPodsReason
	}
	return c
}

// updateDisruptionAllowed applies disruptionAllowedCondition to status.
func updateDisruptionAllowed(status *policyv1.PodDisruptionBudgetStatus, now metav1.Time) {
	status.Conditions = setCondition(status.Conditions, disruptionAllowedCondition(status), now)
}

// disruptionTargetFor is the DisruptionTarget condition the eviction handler
// writes to pod (podutil.UpdatePodCondition): lastTransitionTime is now unless
// the pod already has a DisruptionTarget condition with status True, whose
// time is kept.
func disruptionTargetFor(pod *v1.Pod, now metav1.Time) *v1.PodCondition {
	c := &v1.PodCondition{
		Type:               v1.DisruptionTarget,
		Status:             v1.ConditionTrue,
		Reason:             ReasonEvictionByEvictionAPI,
		Message:            MessageEvicting,
		LastTransitionTime: now,
	}
	for i := range pod.Status.Conditions {
		old := pod.Status.Conditions[i]
		if old.Type == v1.DisruptionTarget {
			if old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
			break
		}
	}
	return c
}
