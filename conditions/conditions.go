package conditions

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Get returns a pointer to the first condition of type t in conds, or nil. The pointer
// aliases the slice element, as the kubelet's GetPodConditionFromList does; with duplicate
// types the first one wins.
func Get(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	if i := Index(conds, t); i >= 0 {
		return &conds[i]
	}
	return nil
}

// Index returns the index of the first condition of type t in conds, or -1.
func Index(conds []v1.PodCondition, t v1.PodConditionType) int {
	for i := range conds {
		if conds[i].Type == t {
			return i
		}
	}
	return -1
}

// Set replaces the first condition of c's type in conds, or appends c when there is none,
// and reports whether anything changed.
//
// The lastTransitionTime rule: when a condition of that type exists with the same Status,
// its LastTransitionTime is kept (even when it is zero, as the kubelet does); otherwise it
// becomes now. Any LastTransitionTime on c is ignored. Like append, Set may write into the
// backing array of conds and returns the slice to use from then on; the caller's other
// references to that array see the replacement.
//
// changed is true when the condition is new, or when Status, Reason, Message,
// LastProbeTime, LastTransitionTime or ObservedGeneration differ from the old one.
func Set(conds []v1.PodCondition, c v1.PodCondition, now metav1.Time) ([]v1.PodCondition, bool) {
	i := Index(conds, c.Type)
	if i < 0 {
		c.LastTransitionTime = now
		return append(conds, c), true
	}
	old := conds[i]
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	} else {
		c.LastTransitionTime = now
	}
	changed := old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message ||
		!old.LastProbeTime.Equal(&c.LastProbeTime) ||
		!old.LastTransitionTime.Equal(&c.LastTransitionTime) ||
		old.ObservedGeneration != c.ObservedGeneration
	conds[i] = c
	return conds, changed
}

// TransitionTime returns the lastTransitionTime a condition of type t with status s should
// carry, given the previous list old: the old time when old has that type with the same
// status, else now. It is the rule Set applies, for callers that build lists themselves.
func TransitionTime(old []v1.PodCondition, t v1.PodConditionType, s v1.ConditionStatus, now metav1.Time) metav1.Time {
	if p := Get(old, t); p != nil && p.Status == s {
		return p.LastTransitionTime
	}
	return now
}
