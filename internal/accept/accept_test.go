package accept

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/features"
)

func TestFinalPhase(t *testing.T) {
	for _, tc := range []struct {
		phase   v1.PodPhase
		earlier []v1.PodPhase
		want    v1.PodPhase
	}{
		{v1.PodRunning, nil, v1.PodRunning},
		{v1.PodRunning, []v1.PodPhase{v1.PodPending, v1.PodFailed}, v1.PodFailed},
		{v1.PodPending, []v1.PodPhase{v1.PodSucceeded, v1.PodFailed}, v1.PodSucceeded},
		{v1.PodFailed, []v1.PodPhase{v1.PodSucceeded}, v1.PodFailed}, // terminal to terminal is allowed
		{"", []v1.PodPhase{v1.PodFailed}, v1.PodFailed},
	} {
		if got := FinalPhase(tc.phase, tc.earlier...); got != tc.want {
			t.Errorf("FinalPhase(%q, %q) = %q, want %q", tc.phase, tc.earlier, got, tc.want)
		}
	}
	if !Leaves(v1.PodSucceeded, v1.PodFailed) || Leaves(v1.PodSucceeded, v1.PodSucceeded) || Leaves(v1.PodRunning, v1.PodPending) {
		t.Error("Leaves: a status leaves a terminal server phase exactly when it differs from it")
	}
}

func TestStamp(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(t0.Add(time.Minute))
	old := &v1.PodStatus{
		Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: t0},
			{Type: v1.PodInitialized, Status: v1.ConditionTrue}, // same status, zero time: stays zero
		},
		StartTime:          &t0,
		ObservedGeneration: 4,
	}
	s := &v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: t0},
		{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: now},
		{Type: "example.com/gate", Status: v1.ConditionTrue, LastTransitionTime: t0},  // not stamped
		{Type: v1.PodResizePending, Status: v1.ConditionTrue, LastTransitionTime: t0}, // carries its own
		{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: t0},        // a duplicate: untouched
	}, ObservedGeneration: 2}
	Stamp(s, old, now)
	want := []metav1.Time{now, {}, t0, t0, t0}
	for i, c := range s.Conditions {
		if !c.LastTransitionTime.Equal(&want[i]) {
			t.Errorf("condition %d (%s): lastTransitionTime %v, want %v", i, c.Type, c.LastTransitionTime, want[i])
		}
	}
	if !s.StartTime.Equal(&t0) || s.ObservedGeneration != 4 {
		t.Errorf("startTime %v, observedGeneration %d: want old's", s.StartTime, s.ObservedGeneration)
	}
	fresh := &v1.PodStatus{}
	Stamp(fresh, &v1.PodStatus{}, now)
	if !fresh.StartTime.Equal(&now) {
		t.Errorf("no start time anywhere: %v, want now", fresh.StartTime)
	}
}

func TestObservedGeneration(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 7}}
	if got := ObservedGeneration(pod, features.Set{}); got != 7 {
		t.Errorf("tracking on: %d", got)
	}
	if got := ObservedGeneration(pod, features.Set{NoObservedGenerationTracking: true}); got != 0 {
		t.Errorf("tracking off, none on the server: %d", got)
	}
	pod.Status.ObservedGeneration = 3
	if got := ObservedGeneration(pod, features.Set{NoObservedGenerationTracking: true}); got != 7 {
		t.Errorf("tracking off, one on the server: %d", got)
	}
}
