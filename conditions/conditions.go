package conditions

import (
	v1 "k8s.io/api/core/v1"
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
