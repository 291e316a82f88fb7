package readiness_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// at returns the fixed instant 2026-01-01T00:mm:00Z; the engine never reads a clock.
func at(mm int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 1, 1, 0, mm, 0, 0, time.UTC))
}

func withLTT(c v1.PodCondition, t metav1.Time) v1.PodCondition { c.LastTransitionTime = t; return c }

func notReadyInput() readiness.Input {
	return readiness.Input{
		Pod:               &v1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: v1.PodSpec{Containers: containers("c")}},
		Phase:             v1.PodRunning,
		ContainerStatuses: []v1.ContainerStatus{notReadyStatus("c")},
		Sandboxes:         []sandbox.Status{{Ready: true, IP: "10.0.0.1"}},
	}
}

func TestApply(t *testing.T) {
	in := notReadyInput()
	r1 := evaluate(t, in)

	// A new status: every condition appended in the kubelet's order, LTT now.
	s := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
		cond("example.com/lb", v1.ConditionFalse, "", ""), withLTT(cond(v1.PodScheduled, v1.ConditionTrue, "", ""), at(0))}}
	if !apply(t, &s, r1, at(1)) {
		t.Fatal("Apply to a status without kubelet conditions reported no change")
	}
	want := []v1.PodCondition{
		cond("example.com/lb", v1.ConditionFalse, "", ""),
		withLTT(cond(v1.PodScheduled, v1.ConditionTrue, "", ""), at(0)),
		withLTT(r1.PodReadyToStartContainers, at(1)),
		withLTT(r1.Initialized, at(1)),
		withLTT(r1.Ready, at(1)),
		withLTT(r1.ContainersReady, at(1)),
	}
	if diff := cmp.Diff(want, s.Conditions); diff != "" {
		t.Fatalf("after first Apply (-want +got):\n%s", diff)
	}

	// The same result later: nothing changes, LTTs kept.
	if apply(t, &s, r1, at(2)) {
		t.Error("Apply of an unchanged result reported a change")
	}
	if diff := cmp.Diff(want, s.Conditions); diff != "" {
		t.Errorf("unchanged Apply (-want +got):\n%s", diff)
	}

	// The container becomes ready: Ready and ContainersReady flip (LTT now), the others
	// keep their time, and the foreign conditions are untouched, in place.
	in.ContainerStatuses[0].Ready = true
	r2 := evaluate(t, in)
	if !apply(t, &s, r2, at(2)) {
		t.Error("Apply of a flipped result reported no change")
	}
	want[4], want[5] = withLTT(r2.Ready, at(2)), withLTT(r2.ContainersReady, at(2))
	if diff := cmp.Diff(want, s.Conditions); diff != "" {
		t.Errorf("flip (-want +got):\n%s", diff)
	}

	// A change of reason or message only keeps the LTT but is a change.
	s.Conditions[4] = withLTT(cond(v1.PodReady, v1.ConditionTrue, "Stale", "old message"), at(0))
	if !apply(t, &s, r2, at(2)) {
		t.Error("reason change not reported")
	}
	if got := s.Conditions[4]; got.LastTransitionTime != at(0) || got.Reason != "" || got.Message != "" {
		t.Errorf("reason change: %+v, want LTT %v kept and reason cleared", got, at(0))
	}

	// An old zero LTT with the same status stays zero (the kubelet keeps it).
	s.Conditions[3].LastTransitionTime = metav1.Time{}
	apply(t, &s, r2, at(2))
	if !s.Conditions[3].LastTransitionTime.IsZero() {
		t.Errorf("zero LTT replaced by %v", s.Conditions[3].LastTransitionTime)
	}
}

func TestApplyKeepsConditionsItDoesNotWrite(t *testing.T) {
	in := notReadyInput()
	r := evaluate(t, in, features.Set{NoReadyToStartContainers: true})
	existing := withLTT(cond(v1.PodReadyToStartContainers, v1.ConditionFalse, "Someone", "else's"), at(0))
	s := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{existing}}
	apply(t, &s, r, at(1))
	if len(s.Conditions) != 4 || s.Conditions[0] != existing {
		t.Errorf("with the feature off, the existing PodReadyToStartContainers changed: %+v", s.Conditions)
	}
	for _, c := range s.Conditions {
		if c.Type == "" {
			t.Errorf("a condition without a type was written: %+v", s.Conditions)
		}
	}
}

func TestApplyTerminal(t *testing.T) {
	in := notReadyInput()
	in.ContainerStatuses[0].Ready = true
	ready := evaluate(t, in) // all True
	for phase, reason := range map[v1.PodPhase]string{v1.PodSucceeded: "PodCompleted", v1.PodFailed: "PodFailed"} {
		t.Run(string(phase), func(t *testing.T) {
			s := v1.PodStatus{Phase: phase}
			if !apply(t, &s, ready, at(1)) {
				t.Fatal("no change reported")
			}
			for _, ct := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
				got := conditions.Get(s.Conditions, ct)
				want := v1.PodCondition{Type: ct, Status: v1.ConditionFalse, Reason: reason, ObservedGeneration: 1, LastTransitionTime: at(1)}
				if got == nil || *got != want {
					t.Errorf("%s = %+v, want %+v", ct, got, want)
				}
			}
			if len(s.Conditions) != 4 {
				t.Errorf("%d conditions, want 4", len(s.Conditions))
			}
		})
	}
	// Outside a terminal phase a True Ready is left alone.
	s := v1.PodStatus{Phase: v1.PodRunning}
	apply(t, &s, ready, at(1))
	for _, c := range s.Conditions {
		if c.Status != v1.ConditionTrue {
			t.Errorf("running: %s is %s", c.Type, c.Status)
		}
	}
}

// apply is readiness.Apply for a test whose time is never zero.
func apply(t interface {
	Helper()
	Fatalf(string, ...any)
}, s *v1.PodStatus, r readiness.Result, now metav1.Time) bool {
	t.Helper()
	changed, err := readiness.Apply(s, readiness.ApplyInput{Result: r, Now: now})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return changed
}

// TestApplyInputErrors: a nil status and a zero time are input errors, and the status is
// left alone.
func TestApplyInputErrors(t *testing.T) {
	r := evaluate(t, notReadyInput())
	s := v1.PodStatus{Phase: v1.PodRunning}
	_, err := readiness.Apply(&s, readiness.ApplyInput{Result: r})
	var ie *podstatus.InputError
	if !errors.As(err, &ie) || err.Error() != "readiness: Apply: ApplyInput.Now: Required value" {
		t.Errorf("zero Now: %v", err)
	}
	if len(s.Conditions) != 0 {
		t.Errorf("status changed: %+v", s.Conditions)
	}
	if _, err := readiness.Apply(nil, readiness.ApplyInput{Result: r, Now: at(1)}); !errors.Is(err, podstatus.ErrInvalidInput) ||
		err.Error() != "readiness: Apply: status: Required value" {
		t.Errorf("nil status: %v", err)
	}
}

// TestApplyTruncatesNow: times written into a status are whole seconds, as the API server
// stores them.
func TestApplyTruncatesNow(t *testing.T) {
	r := evaluate(t, notReadyInput())
	var s v1.PodStatus
	apply(t, &s, r, metav1.NewTime(at(1).Add(700*time.Millisecond)))
	for _, c := range s.Conditions {
		if !c.LastTransitionTime.Equal(ptr(at(1))) {
			t.Errorf("%s: lastTransitionTime %v, want %v", c.Type, c.LastTransitionTime, at(1))
		}
	}
}
