package accept

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
func TestSet(t *testing.T) {
	ready := func(s v1.ConditionStatus, reason string, ltt metav1.Time) v1.PodCondition {
		return v1.PodCondition{Type: v1.PodReady, Status: s, Reason: reason, LastTransitionTime: ltt}
	}
	cases := []struct {
		name    string
		conds   []v1.PodCondition
		set     v1.PodCondition
		want    []v1.PodCondition
		changed bool
	}{
		{"append to nil", nil, ready(v1.ConditionTrue, "", at(9)),
			[]v1.PodCondition{ready(v1.ConditionTrue, "", at(1))}, true},
		{"append after others", []v1.PodCondition{{Type: "x"}}, ready(v1.ConditionTrue, "", metav1.Time{}),
			[]v1.PodCondition{{Type: "x"}, ready(v1.ConditionTrue, "", at(1))}, true},
		{"same status keeps LTT, caller's LTT ignored", []v1.PodCondition{ready(v1.ConditionTrue, "", at(0))},
			ready(v1.ConditionTrue, "", at(9)), []v1.PodCondition{ready(v1.ConditionTrue, "", at(0))}, false},
		{"same status, new reason: LTT kept, changed", []v1.PodCondition{ready(v1.ConditionFalse, "A", at(0))},
			ready(v1.ConditionFalse, "B", metav1.Time{}), []v1.PodCondition{ready(v1.ConditionFalse, "B", at(0))}, true},
		{"status flips: LTT now", []v1.PodCondition{ready(v1.ConditionFalse, "A", at(0))},
			ready(v1.ConditionTrue, "", metav1.Time{}), []v1.PodCondition{ready(v1.ConditionTrue, "", at(1))}, true},
		{"zero old LTT with the same status stays zero", []v1.PodCondition{ready(v1.ConditionTrue, "", metav1.Time{})},
			ready(v1.ConditionTrue, "", at(5)), []v1.PodCondition{ready(v1.ConditionTrue, "", metav1.Time{})}, false},
		{"observedGeneration change is a change", []v1.PodCondition{ready(v1.ConditionTrue, "", at(0))},
			v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, ObservedGeneration: 2},
			[]v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, ObservedGeneration: 2, LastTransitionTime: at(0)}}, true},
		{"message change is a change", []v1.PodCondition{ready(v1.ConditionTrue, "", at(0))},
			v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, Message: "m"},
			[]v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, Message: "m", LastTransitionTime: at(0)}}, true},
		{"probe time change is a change", []v1.PodCondition{ready(v1.ConditionTrue, "", at(0))},
			v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastProbeTime: at(3)},
			[]v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastProbeTime: at(3), LastTransitionTime: at(0)}}, true},
		{"first of duplicates replaced in place", []v1.PodCondition{{Type: "x"}, ready(v1.ConditionFalse, "", at(0)), ready(v1.ConditionTrue, "", at(0))},
			ready(v1.ConditionTrue, "", metav1.Time{}),
			[]v1.PodCondition{{Type: "x"}, ready(v1.ConditionTrue, "", at(1)), ready(v1.ConditionTrue, "", at(0))}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, changed := SetCondition(c.conds, c.set, at(1))
			if changed != c.changed {
				t.Errorf("changed = %v, want %v", changed, c.changed)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTransitionTime(t *testing.T) {
	old := []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: at(0)}}
	if got := TransitionTime(old, v1.PodReady, v1.ConditionTrue, at(5)); got != at(0) {
		t.Errorf("same status: %v", got)
	}
	if got := TransitionTime(old, v1.PodReady, v1.ConditionFalse, at(5)); got != at(5) {
		t.Errorf("flipped: %v", got)
	}
	if got := TransitionTime(old, v1.ContainersReady, v1.ConditionTrue, at(5)); got != at(5) {
		t.Errorf("absent: %v", got)
	}
}

func at(mm int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 0, mm, 0, 0, time.UTC)) }

func TestForceTerminal(t *testing.T) {
	cases := []struct {
		name    string
		status  v1.PodStatus
		changed bool
		want    []v1.PodCondition
	}{
		{"running is left alone",
			v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{pc(v1.PodReady, v1.ConditionTrue, "", "", at(0))}},
			false, []v1.PodCondition{pc(v1.PodReady, v1.ConditionTrue, "", "", at(0))}},
		{"already false is left alone",
			v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{pc(v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "m", at(0))}},
			false, []v1.PodCondition{pc(v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "m", at(0))}},
		{"ready true only: both forced, containers ready appended",
			v1.PodStatus{Phase: v1.PodSucceeded, Conditions: []v1.PodCondition{
				{Type: v1.PodReady, Status: v1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: at(0)}}},
			true, []v1.PodCondition{
				{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "PodCompleted", ObservedGeneration: 3, LastTransitionTime: at(1)},
				{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: at(1)},
			}},
		{"containers ready true, ready false: ready keeps its time",
			v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{
				pc(v1.ContainersReady, v1.ConditionTrue, "", "", at(0)),
				pc(v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady", "m", at(0))}},
			true, []v1.PodCondition{
				pc(v1.ContainersReady, v1.ConditionFalse, "PodFailed", "", at(1)),
				pc(v1.PodReady, v1.ConditionFalse, "PodFailed", "", at(0)),
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.status
			if got := ForceTerminal(&s, at(1)); got != c.changed {
				t.Errorf("ForceTerminal = %v, want %v", got, c.changed)
			}
			if diff := cmp.Diff(c.want, s.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func pc(t v1.PodConditionType, s v1.ConditionStatus, reason, message string, ltt metav1.Time) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: s, Reason: reason, Message: message, LastTransitionTime: ltt}
}
