package conditions_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
)

func at(mm int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 0, mm, 0, 0, time.UTC)) }

func TestGetAndIndex(t *testing.T) {
	conds := []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue},
		{Type: "example.com/gate", Status: v1.ConditionFalse},
		{Type: "example.com/gate", Status: v1.ConditionTrue},
	}
	if conditions.Get(nil, v1.PodReady) != nil || conditions.Index(nil, v1.PodReady) != -1 {
		t.Error("nil list: found something")
	}
	if conditions.Get(conds, v1.PodReady) != nil || conditions.Index(conds, v1.PodReady) != -1 {
		t.Error("absent type found")
	}
	// The first of duplicates wins, and the pointer aliases the element.
	g := conditions.Get(conds, "example.com/gate")
	if g == nil || g.Status != v1.ConditionFalse || conditions.Index(conds, "example.com/gate") != 1 {
		t.Fatalf("Get = %+v", g)
	}
	g.Reason = "aliased"
	if conds[1].Reason != "aliased" {
		t.Error("Get returned a copy, not the element")
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
			got, changed := conditions.Set(c.conds, c.set, at(1))
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
	if got := conditions.TransitionTime(old, v1.PodReady, v1.ConditionTrue, at(5)); got != at(0) {
		t.Errorf("same status: %v", got)
	}
	if got := conditions.TransitionTime(old, v1.PodReady, v1.ConditionFalse, at(5)); got != at(5) {
		t.Errorf("flipped: %v", got)
	}
	if got := conditions.TransitionTime(old, v1.ContainersReady, v1.ConditionTrue, at(5)); got != at(5) {
		t.Errorf("absent: %v", got)
	}
}

func TestOwnership(t *testing.T) {
	owned := []v1.PodConditionType{v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
		v1.PodResizeInProgress, v1.PodResizePending, v1.PodReadyToStartContainers, v1.AllContainersRestarting}
	for _, ct := range owned {
		if !conditions.OwnedByKubelet(ct) || conditions.SharedWithKubelet(ct) || (conditions.Ownership{Features: features.V1_37()}).Foreign(ct) {
			t.Errorf("%s: want owned by the v1.37 kubelet", ct)
		}
	}
	for _, ct := range []v1.PodConditionType{"example.com/gate", "www.example.com/feature-1", "Custom", ""} {
		if conditions.OwnedByKubelet(ct) || conditions.SharedWithKubelet(ct) || !(conditions.Ownership{}).Foreign(ct) {
			t.Errorf("%s: want foreign", ct)
		}
	}
	if conditions.OwnedByKubelet(v1.DisruptionTarget) || !conditions.SharedWithKubelet(v1.DisruptionTarget) ||
		(conditions.Ownership{Features: features.Set{}}).Foreign(v1.DisruptionTarget) {
		t.Errorf("DisruptionTarget: want shared")
	}
	// Gated types follow the features.
	off := conditions.Ownership{Features: features.Set{NoReadyToStartContainers: true, NoRestartAllContainers: true}}
	for _, ct := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.AllContainersRestarting} {
		if off.Owned(ct) || !off.Foreign(ct) {
			t.Errorf("%s with its feature off: want foreign", ct)
		}
	}
	if v134 := (conditions.Ownership{Features: features.V1_34()}); !v134.Owned(v1.PodReadyToStartContainers) || v134.Owned(v1.AllContainersRestarting) {
		t.Errorf("v1.34: PodReadyToStartContainers owned %v, AllContainersRestarting owned %v",
			v134.Owned(v1.PodReadyToStartContainers), v134.Owned(v1.AllContainersRestarting))
	}
}

func TestValidateType(t *testing.T) {
	for _, ok := range []v1.PodConditionType{"www.example.com/feature-1", "example.com/lb", "gate1", "Ready", "a_b.c", "x/Y",
		v1.PodConditionType(strings.Repeat("a", 63)), v1.PodConditionType(strings.Repeat("a", 253) + "/n")} {
		if err := conditions.ValidateType(ok); err != nil {
			t.Errorf("ValidateType(%q) = %v, want nil", ok, err)
		}
	}
	bad := []struct {
		t    v1.PodConditionType
		want string
	}{
		{"", "must not be empty"},
		{"has space", `"has space"`},
		{"-leading", "alphanumeric"},
		{"trailing-", "alphanumeric"},
		{"UPPER.example.com/x", "prefix"},
		{"example.com/", "name part"},
		{"/name", "prefix"},
		{"a/b/c", "a/b/c"},
		{v1.PodConditionType(strings.Repeat("a", 64)), "63"},
		{"example.com/gate with spaces", "alphanumeric"},
	}
	for _, b := range bad {
		err := conditions.ValidateType(b.t)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ValidateType(%q) = %v, want an error mentioning %q", b.t, err, b.want)
		}
	}
}

func TestValidateReadinessGates(t *testing.T) {
	ok := []v1.PodReadinessGate{{ConditionType: "www.example.com/feature-1"}, {ConditionType: "example.com/lb"}, {ConditionType: "gate1"}}
	if err := conditions.ValidateReadinessGates(ok); err != nil {
		t.Errorf("valid gates: %v", err)
	}
	if err := conditions.ValidateReadinessGates(nil); err != nil {
		t.Errorf("no gates: %v", err)
	}
	err := conditions.ValidateReadinessGates([]v1.PodReadinessGate{
		{ConditionType: "example.com/lb"}, {ConditionType: "bad gate"}, {ConditionType: "example.com/lb"}, {ConditionType: ""},
	})
	if err == nil {
		t.Fatal("invalid gates accepted")
	}
	msg := err.Error()
	for _, want := range []string{
		`spec.readinessGates[1]: invalid condition type "bad gate"`,
		`spec.readinessGates[2]: duplicate condition type "example.com/lb" (first at index 0)`,
		`spec.readinessGates[3]: invalid condition type: must not be empty`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Index(msg, "readinessGates[1]") > strings.Index(msg, "readinessGates[2]") {
		t.Errorf("problems not in gate order:\n%s", msg)
	}
}
