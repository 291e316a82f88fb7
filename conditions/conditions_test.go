package conditions_test

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
)

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

func TestOwnership(t *testing.T) {
	owned := []v1.PodConditionType{v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
		v1.PodResizeInProgress, v1.PodResizePending, v1.PodReadyToStartContainers, v1.AllContainersRestarting}
	for _, ct := range owned {
		if o := (conditions.Ownership{}); !o.Owned(ct) || o.Shared(ct) || (conditions.Ownership{Features: features.V1_37()}).Foreign(ct) {
			t.Errorf("%s: want owned by the v1.37 kubelet", ct)
		}
	}
	for _, ct := range []v1.PodConditionType{"example.com/gate", "www.example.com/feature-1", "Custom", ""} {
		if o := (conditions.Ownership{}); o.Owned(ct) || o.Shared(ct) || !o.Foreign(ct) {
			t.Errorf("%s: want foreign", ct)
		}
	}
	if o := (conditions.Ownership{}); o.Owned(v1.DisruptionTarget) || !o.Shared(v1.DisruptionTarget) ||
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
	path := field.NewPath("spec", "readinessGates").Index(0).Child("conditionType")
	for _, ok := range []v1.PodConditionType{"www.example.com/feature-1", "example.com/lb", "gate1", "Ready", "a_b.c", "x/Y",
		v1.PodConditionType(strings.Repeat("a", 63)), v1.PodConditionType(strings.Repeat("a", 253) + "/n")} {
		if errs := conditions.ValidateType(ok, path); len(errs) != 0 {
			t.Errorf("ValidateType(%q) = %v, want none", ok, errs)
		}
	}
	bad := []struct {
		t    v1.PodConditionType
		want string
	}{
		{"", "name part must be non-empty"},
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
		errs := conditions.ValidateType(b.t, path)
		if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), b.want) {
			t.Errorf("ValidateType(%q) = %v, want an error mentioning %q", b.t, errs, b.want)
			continue
		}
		for _, e := range errs {
			if e.Type != field.ErrorTypeInvalid || e.Field != "spec.readinessGates[0].conditionType" || e.BadValue != string(b.t) {
				t.Errorf("ValidateType(%q): %#v, want Invalid at spec.readinessGates[0].conditionType with the type as the value", b.t, e)
			}
		}
	}
}

func TestValidateReadinessGates(t *testing.T) {
	path := field.NewPath("spec", "readinessGates")
	ok := []v1.PodReadinessGate{{ConditionType: "www.example.com/feature-1"}, {ConditionType: "example.com/lb"}, {ConditionType: "gate1"},
		{ConditionType: "example.com/lb"}} // a repeated type is accepted, as by the API server
	if errs := conditions.ValidateReadinessGates(ok, path); len(errs) != 0 {
		t.Errorf("valid gates: %v", errs)
	}
	if errs := conditions.ValidateReadinessGates(nil, path); len(errs) != 0 {
		t.Errorf("no gates: %v", errs)
	}
	errs := conditions.ValidateReadinessGates([]v1.PodReadinessGate{
		{ConditionType: "example.com/lb"}, {ConditionType: "bad gate"}, {ConditionType: "example.com/lb"}, {ConditionType: ""},
	}, path)
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.Field)
	}
	// An empty type is two problems, as IsQualifiedName (and so the API server) reports it.
	if want := []string{"spec.readinessGates[1].conditionType", "spec.readinessGates[3].conditionType", "spec.readinessGates[3].conditionType"}; !slices.Equal(fields, want) {
		t.Errorf("fields = %q, want %q (in gate order): %v", fields, want, errs)
	}
}
