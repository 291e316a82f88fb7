package conditions

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestIsPodReady(t *testing.T) {
	cond := func(t v1.PodConditionType, s v1.ConditionStatus) v1.PodCondition {
		return v1.PodCondition{Type: t, Status: s}
	}
	pod := func(cs ...v1.PodCondition) *v1.Pod {
		return &v1.Pod{Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: cs}}
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"nil pod", nil, false},
		{"no conditions", pod(), false},
		{"Ready True", pod(cond(v1.ContainersReady, v1.ConditionFalse), cond(v1.PodReady, v1.ConditionTrue)), true},
		{"Ready False", pod(cond(v1.PodReady, v1.ConditionFalse)), false},
		{"Ready Unknown", pod(cond(v1.PodReady, v1.ConditionUnknown)), false},
		{"first Ready wins (True then False)", pod(cond(v1.PodReady, v1.ConditionTrue), cond(v1.PodReady, v1.ConditionFalse)), true},
		{"first Ready wins (False then True)", pod(cond(v1.PodReady, v1.ConditionFalse), cond(v1.PodReady, v1.ConditionTrue)), false},
		{"a Failed pod with a stale Ready=True counts by its condition", &v1.Pod{Status: v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue)}}}, true},
	} {
		if got := IsPodReady(tc.pod); got != tc.want {
			t.Errorf("%s: IsPodReady = %v, want %v", tc.name, got, tc.want)
		}
	}
}
