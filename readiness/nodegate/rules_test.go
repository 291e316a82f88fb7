package nodegate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const ruleKey = "readiness.k8s.io/network-ready"

func ruleTaint() v1.Taint { return taint(ruleKey, "pending", v1.TaintEffectNoSchedule) }

func rule(mode EnforcementMode, conds ...ConditionRequirement) Rule {
	if len(conds) == 0 {
		conds = []ConditionRequirement{{Type: "NetworkReady", RequiredStatus: v1.ConditionTrue}}
	}
	return Rule{
		Name: "network", UID: "0f1e2d3c", Mode: mode, Conditions: conds, Taint: ruleTaint(),
		NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "workers"}},
	}
}

func ruleNode(conds map[v1.NodeConditionType]v1.ConditionStatus, taints ...v1.Taint) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1", Labels: map[string]string{"pool": "workers"}}, Spec: v1.NodeSpec{Taints: taints}}
	for t, s := range conds {
		n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: t, Status: s})
	}
	return n
}

func mustRule(t *testing.T, r Rule, n *v1.Node) RuleResult {
	t.Helper()
	res, err := EvaluateRule(RuleInput{Rule: r, Node: n})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var (
	netTrue  = map[v1.NodeConditionType]v1.ConditionStatus{"NetworkReady": v1.ConditionTrue}
	netFalse = map[v1.NodeConditionType]v1.ConditionStatus{"NetworkReady": v1.ConditionFalse}
)

// The cases mirror node-readiness-controller's controller tests
// (internal/controller/nodereadinessrule_controller_test.go and
// internal/controller/node_controller_test.go).
func TestRuleBootstrapOnly(t *testing.T) {
	r := rule(EnforcementModeBootstrapOnly)
	t.Run("taint removed when conditions are met, UID marker in the same change", func(t *testing.T) {
		res := mustRule(t, r, ruleNode(netTrue, ruleTaint()))
		if res.Action != RuleActionRemoveTaint || len(res.Taints.NewTaints) != 0 || res.TaintPresent {
			t.Errorf("got %+v", res)
		}
		want := map[string]string{"readiness.k8s.io/bootstrap-completed-0f1e2d3c": `{"rule-name":"network"}`}
		if !cmp.Equal(res.Annotations, want) {
			t.Errorf("annotations = %v, want %v", res.Annotations, want)
		}
	})
	t.Run("not re-added after completion, even on regression", func(t *testing.T) {
		n := ruleNode(netFalse)
		n.Annotations = map[string]string{"readiness.k8s.io/bootstrap-completed-0f1e2d3c": `{"rule-name":"network"}`}
		res := mustRule(t, r, n)
		if res.Action != RuleActionNone || res.Skipped != "BootstrapCompleted" || !res.Taints.Empty() {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("legacy name marker counts as completed", func(t *testing.T) {
		n := ruleNode(netFalse)
		n.Annotations = map[string]string{"readiness.k8s.io/bootstrap-completed-network": "true"}
		if res := mustRule(t, r, n); res.Skipped != "BootstrapCompleted" {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("satisfied without a taint: marker only", func(t *testing.T) {
		res := mustRule(t, r, ruleNode(netTrue))
		if res.Action != RuleActionMarkBootstrapped || len(res.Annotations) != 1 || !res.Taints.Empty() {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("unsatisfied before completion: taint added", func(t *testing.T) {
		res := mustRule(t, r, ruleNode(netFalse))
		if res.Action != RuleActionAddTaint || !cmp.Equal(res.Taints.Add, []v1.Taint{ruleTaint()}) || res.Annotations != nil {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("a long rule name still uses the UID key", func(t *testing.T) {
		long := r
		long.Name = strings.Repeat("n", 250)
		res := mustRule(t, long, ruleNode(netTrue, ruleTaint()))
		for k := range res.Annotations {
			if k != "readiness.k8s.io/bootstrap-completed-0f1e2d3c" {
				t.Errorf("key = %q", k)
			}
		}
	})
}

func TestRuleContinuous(t *testing.T) {
	r := rule(EnforcementModeContinuous)
	if res := mustRule(t, r, ruleNode(netTrue, ruleTaint())); res.Action != RuleActionRemoveTaint || res.Annotations != nil {
		t.Errorf("met: got %+v", res)
	}
	if res := mustRule(t, r, ruleNode(netFalse)); res.Action != RuleActionAddTaint {
		t.Errorf("regression: got %+v", res)
	}
	// Missing condition: Unknown by default, so requiredStatus True fails closed.
	if res := mustRule(t, r, ruleNode(nil)); res.Action != RuleActionAddTaint || res.MissingConditions != 1 || res.Conditions[0].CurrentStatus != v1.ConditionUnknown {
		t.Errorf("missing: got %+v", res)
	}
	// A pre-existing taint with another value is adopted.
	if res := mustRule(t, r, ruleNode(netFalse, taint(ruleKey, "other", v1.TaintEffectNoSchedule))); res.Action != RuleActionNone || !res.TaintPresent {
		t.Errorf("adopt: got %+v", res)
	}
	// Satisfied and untainted: nothing, and no marker in continuous mode.
	if res := mustRule(t, r, ruleNode(netTrue)); res.Action != RuleActionNone || res.Annotations != nil {
		t.Errorf("clean: got %+v", res)
	}
	// Removing removes every copy with the key and effect, and nothing else.
	foreign := taint("example.com/x", "", v1.TaintEffectNoSchedule)
	sameKeyOtherEffect := taint(ruleKey, "", v1.TaintEffectNoExecute)
	res := mustRule(t, r, ruleNode(netTrue, ruleTaint(), foreign, taint(ruleKey, "b", v1.TaintEffectNoSchedule), sameKeyOtherEffect))
	if !cmp.Equal(res.Taints.NewTaints, []v1.Taint{foreign, sameKeyOtherEffect}) || len(res.Taints.Remove) != 2 {
		t.Errorf("remove all copies: got %+v", res.Taints)
	}
}

func TestRuleSelectorDoesNotMatch(t *testing.T) {
	n := ruleNode(netTrue, ruleTaint())
	n.Labels = map[string]string{"pool": "infra"}
	res := mustRule(t, rule(EnforcementModeContinuous), n)
	if res.Applies || res.Action != RuleActionNone || !res.Taints.Empty() || !cmp.Equal(res.Taints.NewTaints, n.Spec.Taints) {
		t.Errorf("got %+v", res)
	}
}

func TestRulePolicies(t *testing.T) {
	two := []ConditionRequirement{{Type: "A", RequiredStatus: v1.ConditionTrue}, {Type: "B", RequiredStatus: v1.ConditionTrue}}
	oneMet := map[v1.NodeConditionType]v1.ConditionStatus{"A": v1.ConditionTrue, "B": v1.ConditionFalse}
	noneMet := map[v1.NodeConditionType]v1.ConditionStatus{"A": v1.ConditionFalse, "B": v1.ConditionFalse}

	anyOf := rule(EnforcementModeContinuous, two...)
	anyOf.Policy = ConditionAnyOf
	if res := mustRule(t, anyOf, ruleNode(oneMet, ruleTaint())); res.Action != RuleActionRemoveTaint {
		t.Errorf("anyOf with one met: %+v", res)
	}
	if res := mustRule(t, anyOf, ruleNode(noneMet)); res.Action != RuleActionAddTaint {
		t.Errorf("anyOf with none met: %+v", res)
	}
	allOf := rule(EnforcementModeContinuous, two...)
	allOf.Policy = ConditionAllOf
	def := rule(EnforcementModeContinuous, two...)
	for _, n := range []*v1.Node{ruleNode(oneMet, ruleTaint()), ruleNode(noneMet), ruleNode(map[v1.NodeConditionType]v1.ConditionStatus{"A": v1.ConditionTrue, "B": v1.ConditionTrue}, ruleTaint())} {
		a, d := mustRule(t, allOf, n), mustRule(t, def, n)
		if !cmp.Equal(a, d) {
			t.Errorf("explicit allOf differs from the default:\n%s", cmp.Diff(a, d))
		}
	}
	if res := mustRule(t, allOf, ruleNode(oneMet, ruleTaint())); res.Action != RuleActionNone || res.Release {
		t.Errorf("allOf with one met must keep the taint: %+v", res)
	}
}

func TestRuleDefaultStatus(t *testing.T) {
	// The problem-gate pattern: required False, default False: a missing
	// condition allows.
	r := rule(EnforcementModeContinuous, ConditionRequirement{Type: "KernelDeadlock", RequiredStatus: v1.ConditionFalse, DefaultStatus: v1.ConditionFalse})
	res := mustRule(t, r, ruleNode(nil, ruleTaint()))
	if res.Action != RuleActionRemoveTaint || res.MissingConditions != 1 || res.Conditions[0].EffectiveStatus != v1.ConditionFalse {
		t.Errorf("got %+v", res)
	}
}

func TestRuleDeleting(t *testing.T) {
	r := rule(EnforcementModeContinuous)
	r.Deleting = true
	if res := mustRule(t, r, ruleNode(netFalse)); res.Action != RuleActionNone || len(res.Taints.Add) != 0 || res.Conditions != nil {
		t.Errorf("deleting rule added or evaluated: %+v", res)
	}
	if res := mustRule(t, r, ruleNode(netFalse, ruleTaint())); res.Action != RuleActionRemoveTaint || len(res.Taints.NewTaints) != 0 {
		t.Errorf("deleting rule must clean up: %+v", res)
	}
}

func TestRuleDryRun(t *testing.T) {
	r := rule(EnforcementModeContinuous)
	r.DryRun = true
	if res := mustRule(t, r, ruleNode(netFalse)); res.Action != RuleActionNone || res.Skipped != "DryRun" || res.Release {
		t.Errorf("dry-run rule acted: %+v", res)
	}
	other := ruleNode(netFalse)
	other.Labels = nil
	cases := []struct {
		name  string
		rule  Rule
		nodes []v1.Node
		want  DryRunResult
	}{
		{"add when unmet and the taint is absent", r, []v1.Node{*ruleNode(netFalse)}, DryRunResult{AffectedNodes: 1, TaintsToAdd: 1, Summary: "would add 1 taints"}},
		{"remove when met and the taint is present", r, []v1.Node{*ruleNode(netTrue, ruleTaint())}, DryRunResult{AffectedNodes: 1, TaintsToRemove: 1, Summary: "would remove 1 taints"}},
		{"risky when a condition is missing", r, []v1.Node{*ruleNode(nil)}, DryRunResult{AffectedNodes: 1, TaintsToAdd: 1, RiskyOperations: 1,
			Summary: "would add 1 taints, 1 nodes have missing conditions"}},
		{"risky and remove through defaultStatus",
			rule(EnforcementModeContinuous, ConditionRequirement{Type: "NetworkReady", RequiredStatus: v1.ConditionTrue, DefaultStatus: v1.ConditionTrue}),
			[]v1.Node{*ruleNode(nil, ruleTaint())}, DryRunResult{AffectedNodes: 1, TaintsToRemove: 1, RiskyOperations: 1,
				Summary: "would remove 1 taints, 1 nodes have missing conditions"}},
		{"non-matching node not counted", r, []v1.Node{*other}, DryRunResult{Summary: "No changes needed"}},
		{"bootstrap markers are ignored", func() Rule { b := rule(EnforcementModeBootstrapOnly); return b }(), []v1.Node{func() v1.Node {
			n := ruleNode(netFalse)
			n.Annotations = map[string]string{BootstrapAnnotationPrefix + "0f1e2d3c": "{}"}
			return *n
		}()}, DryRunResult{AffectedNodes: 1, TaintsToAdd: 1, Summary: "would add 1 taints"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DryRun(DryRunInput{Rule: tc.rule, Nodes: ptrs(tc.nodes)})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
