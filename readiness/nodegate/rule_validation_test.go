package nodegate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"pgregory.net/rapid"
)

// errPaths renders errs as "Type path" lines, without the FieldValue prefix.
func errPaths(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, strings.TrimPrefix(string(e.Type), "FieldValue")+" "+e.Field)
	}
	return out
}

// nConditions returns n requirements with distinct types C0, C1, ...
func nConditions(n int) []ConditionRequirement {
	out := make([]ConditionRequirement, n)
	for i := range out {
		out[i] = ConditionRequirement{Type: v1.NodeConditionType(fmt.Sprintf("C%d", i)), RequiredStatus: v1.ConditionTrue}
	}
	return out
}

// TestValidateRule pins every check of ValidateRule to the error type and
// field path the cluster answers (CRD schema and CEL rules, then the
// controller's webhook; see ValidateRule).
func TestValidateRule(t *testing.T) {
	mod := func(f func(*Rule)) Rule { r := rule(EnforcementModeContinuous); f(&r); return r }
	boot := func(f func(*Rule)) Rule { r := rule(EnforcementModeBootstrapOnly); f(&r); return r }
	const taintCEL = "Invalid spec.taint"
	cases := []struct {
		name string
		rule Rule
		want []string // nil: valid
	}{
		// Valid rules.
		{"continuous", rule(EnforcementModeContinuous), nil},
		{"bootstrap-only", rule(EnforcementModeBootstrapOnly), nil},
		{"explicit allOf", mod(func(r *Rule) { r.Policy = ConditionAllOf }), nil},
		{"anyOf with defaultStatus (continuous)", mod(func(r *Rule) { r.Policy = ConditionAnyOf; r.Conditions[0].DefaultStatus = v1.ConditionFalse }), nil},
		{"32 conditions", mod(func(r *Rule) { r.Conditions = nConditions(32) }), nil},
		{"condition type of 316 characters (632 bytes)", mod(func(r *Rule) { r.Conditions[0].Type = v1.NodeConditionType(strings.Repeat("é", 316)) }), nil},
		{"dotted rule name of 253 characters", mod(func(r *Rule) { r.Name = strings.Repeat("a", 125) + "." + strings.Repeat("b", 127) }), nil},
		{"taint name of 63 characters", mod(func(r *Rule) { r.Taint.Key = RuleTaintPrefix + strings.Repeat("a", 63) }), nil},
		{"taint value of 63 characters (126 bytes)", mod(func(r *Rule) { r.Taint.Value = strings.Repeat("é", 63) }), nil},
		{"empty taint value", mod(func(r *Rule) { r.Taint.Value = "" }), nil},
		{"NoExecute", mod(func(r *Rule) { r.Taint.Effect = v1.TaintEffectNoExecute }), nil},
		{"PreferNoSchedule", mod(func(r *Rule) { r.Taint.Effect = v1.TaintEffectPreferNoSchedule }), nil},
		{"matchExpressions only", mod(func(r *Rule) {
			r.NodeSelector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "pool", Operator: metav1.LabelSelectorOpExists}}}
		}), nil},

		// metadata.name: NameIsDNSSubdomain.
		{"no name", mod(func(r *Rule) { r.Name = "" }), []string{"Required metadata.name"}},
		{"upper-case name", mod(func(r *Rule) { r.Name = "Network" }), []string{"Invalid metadata.name"}},
		{"underscore in name", mod(func(r *Rule) { r.Name = "net_work" }), []string{"Invalid metadata.name"}},
		{"name of 254 characters", mod(func(r *Rule) { r.Name = strings.Repeat("a", 254) }), []string{"Invalid metadata.name"}},

		// spec.conditions: required, MinItems 1, MaxItems 32, listType=map.
		{"nil conditions", mod(func(r *Rule) { r.Conditions = nil }), []string{"Required spec.conditions"}},
		{"empty conditions", mod(func(r *Rule) { r.Conditions = []ConditionRequirement{} }), []string{"Invalid spec.conditions"}},
		{"33 conditions", mod(func(r *Rule) { r.Conditions = nConditions(33) }), []string{"TooMany spec.conditions"}},
		{"no condition type", mod(func(r *Rule) { r.Conditions[0].Type = "" }), []string{"Required spec.conditions[0].type"}},
		{"condition type of 317 characters", mod(func(r *Rule) { r.Conditions[0].Type = v1.NodeConditionType(strings.Repeat("é", 317)) }), []string{"TooLong spec.conditions[0].type"}},
		{"repeated condition type", mod(func(r *Rule) { r.Conditions = append(r.Conditions, r.Conditions[0]) }), []string{"Duplicate spec.conditions[1]"}},
		{"no requiredStatus", mod(func(r *Rule) { r.Conditions[0].RequiredStatus = "" }), []string{"Required spec.conditions[0].requiredStatus"}},
		{"requiredStatus Yes", mod(func(r *Rule) { r.Conditions[0].RequiredStatus = "Yes" }), []string{"NotSupported spec.conditions[0].requiredStatus"}},
		{"defaultStatus Maybe", mod(func(r *Rule) { r.Conditions[0].DefaultStatus = "Maybe" }), []string{"NotSupported spec.conditions[0].defaultStatus"}},

		// spec.enforcementMode and spec.conditionPolicy: enums.
		{"no mode", mod(func(r *Rule) { r.Mode = "" }), []string{"Required spec.enforcementMode"}},
		{"unknown mode", mod(func(r *Rule) { r.Mode = "once" }), []string{"NotSupported spec.enforcementMode"}},
		{"unknown policy", mod(func(r *Rule) { r.Policy = "mostOf" }), []string{"NotSupported spec.conditionPolicy"}},

		// spec.taint: required, then the CEL rules.
		{"zero taint", mod(func(r *Rule) { r.Taint = v1.Taint{} }), []string{"Required spec.taint"}},
		{"taint outside readiness.k8s.io/", mod(func(r *Rule) { r.Taint.Key = "example.com/network" }), []string{taintCEL}},
		{"taint key with two slashes", mod(func(r *Rule) { r.Taint.Key = "readiness.k8s.io/a/b" }), []string{taintCEL}},
		{"taint key without a name", mod(func(r *Rule) { r.Taint.Key = RuleTaintPrefix }), []string{taintCEL, taintCEL}},
		{"no taint key", mod(func(r *Rule) { r.Taint.Key = "" }), []string{taintCEL, taintCEL, taintCEL, taintCEL}},
		{"taint name of 64 characters", mod(func(r *Rule) { r.Taint.Key = RuleTaintPrefix + strings.Repeat("a", 64) }), []string{taintCEL}},
		{"taint key of 254 characters", mod(func(r *Rule) { r.Taint.Key = RuleTaintPrefix + strings.Repeat("a", 254-len(RuleTaintPrefix)) }), []string{taintCEL, taintCEL}},
		{"taint name starting with '-'", mod(func(r *Rule) { r.Taint.Key = RuleTaintPrefix + "-net" }), []string{taintCEL}},
		{"taint name with a non-ASCII letter", mod(func(r *Rule) { r.Taint.Key = RuleTaintPrefix + "réseau" }), []string{taintCEL}},
		{"taint value of 64 ASCII characters", mod(func(r *Rule) { r.Taint.Value = strings.Repeat("a", 64) }), []string{taintCEL}},
		{"taint value of 64 characters (128 bytes)", mod(func(r *Rule) { r.Taint.Value = strings.Repeat("é", 64) }), []string{taintCEL}},
		{"unknown effect", mod(func(r *Rule) { r.Taint.Effect = "Never" }), []string{taintCEL}},
		{"no effect", mod(func(r *Rule) { r.Taint.Effect = "" }), []string{taintCEL}},

		// spec.nodeSelector: required, then the webhook.
		{"zero node selector", mod(func(r *Rule) { r.NodeSelector = metav1.LabelSelector{} }), []string{"Required spec.nodeSelector"}},
		{"empty node selector", mod(func(r *Rule) { r.NodeSelector = metav1.LabelSelector{MatchLabels: map[string]string{}} }), []string{"Required spec.nodeSelector"}},
		{"invalid label value", mod(func(r *Rule) { r.NodeSelector.MatchLabels = map[string]string{"pool": "a b"} }), []string{"Invalid spec.nodeSelector"}},
		{"invalid label key", mod(func(r *Rule) { r.NodeSelector.MatchLabels = map[string]string{"-pool": "a"} }), []string{"Invalid spec.nodeSelector"}},
		{"no operator", mod(func(r *Rule) {
			r.NodeSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "zone"}}
		}), []string{"Invalid spec.nodeSelector"}},
		{"In without values", mod(func(r *Rule) {
			r.NodeSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpIn}}
		}), []string{"Invalid spec.nodeSelector"}},
		{"Exists with values", mod(func(r *Rule) {
			r.NodeSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpExists, Values: []string{"a"}}}
		}), []string{"Invalid spec.nodeSelector"}},

		// The webhook's bootstrap-only rules.
		{"defaultStatus with bootstrap-only", boot(func(r *Rule) { r.Conditions[0].DefaultStatus = v1.ConditionTrue }), []string{"Forbidden spec.conditions[0].defaultStatus"}},
		{"anyOf with bootstrap-only", boot(func(r *Rule) { r.Policy = ConditionAnyOf }), []string{"Forbidden spec.conditionPolicy"}},

		// Stages: a blocking schema error hides the CEL rules, any earlier
		// error hides the webhook.
		{"no name hides the taint rules", mod(func(r *Rule) { r.Name = ""; r.Taint.Key = "example.com/x" }), []string{"Required metadata.name"}},
		{"empty conditions do not hide the taint rules", mod(func(r *Rule) { r.Conditions = []ConditionRequirement{}; r.Taint.Key = "example.com/x" }),
			[]string{"Invalid spec.conditions", taintCEL}},
		{"a taint error hides the webhook", boot(func(r *Rule) { r.Policy = ConditionAnyOf; r.Taint.Effect = "Never" }), []string{taintCEL}},
		{"an invalid name hides the webhook", boot(func(r *Rule) { r.Policy = ConditionAnyOf; r.Name = "Net" }), []string{"Invalid metadata.name"}},
		{"several schema errors", mod(func(r *Rule) { r.Name = ""; r.Mode = ""; r.Conditions[0].RequiredStatus = "Yes" }),
			[]string{"Required metadata.name", "NotSupported spec.conditions[0].requiredStatus", "Required spec.enforcementMode"}},
	}
	nodes := []v1.Node{*ruleNode(netTrue), *ruleNode(netFalse, ruleTaint())}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateRule(tc.rule, nil)
			if got := errPaths(errs); !cmp.Equal(got, tc.want) {
				t.Fatalf("ValidateRule = %v\nwant %v", errs, tc.want)
			}
			_, evalErr := EvaluateRule(RuleInput{Rule: tc.rule, Node: &nodes[0]})
			_, dryErr := DryRun(DryRunInput{Rule: tc.rule, Nodes: ptrs(nodes)})
			if tc.want == nil {
				if evalErr != nil || dryErr != nil {
					t.Fatalf("valid rule: EvaluateRule: %v, DryRun: %v", evalErr, dryErr)
				}
				return
			}
			for arg, err := range map[string]error{"RuleInput": evalErr, "DryRunInput": dryErr} {
				var want []string
				for _, p := range tc.want {
					typ, path, _ := strings.Cut(p, " ")
					want = append(want, typ+" "+arg+".Rule."+path)
				}
				if got := inputErrorPaths(t, err); !cmp.Equal(got, want) {
					t.Errorf("%s error %v: paths %v, want %v", arg, err, got, want)
				}
				if !strings.Contains(err.Error(), errs[0].Field) {
					t.Errorf("err = %v, want it naming %s", err, errs[0].Field)
				}
			}
			// A caller's path prefixes every error, as for apimachinery's validators.
			prefixed := ValidateRule(tc.rule, field.NewPath("items").Index(3))
			var want []string
			for _, p := range tc.want {
				typ, path, _ := strings.Cut(p, " ")
				want = append(want, typ+" items[3]."+path)
			}
			if got := errPaths(prefixed); !cmp.Equal(got, want) {
				t.Errorf("ValidateRule at items[3] = %v, want %v", got, want)
			}
		})
	}
}

func TestRuleInvalidInput(t *testing.T) {
	_, err := EvaluateRule(RuleInput{Rule: rule(EnforcementModeContinuous)})
	if got, want := inputErrorPaths(t, err), []string{"Required RuleInput.Node"}; !cmp.Equal(got, want) {
		t.Errorf("nil node: paths %v, want %v", got, want)
	}
	if want := `nodegate: EvaluateRule: rule "network": RuleInput.Node: Required value`; err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
	bad := rule(EnforcementModeContinuous)
	bad.Mode = ""
	_, err = EvaluateRule(RuleInput{Rule: bad})
	if got, want := inputErrorPaths(t, err), []string{"Required RuleInput.Node", "Required RuleInput.Rule.spec.enforcementMode"}; !cmp.Equal(got, want) {
		t.Errorf("nil node and a bad rule: paths %v, want %v", got, want)
	}
	_, err = DryRun(DryRunInput{Rule: rule(EnforcementModeContinuous), Nodes: []*v1.Node{ruleNode(netTrue), nil}})
	if got, want := inputErrorPaths(t, err), []string{"Required DryRunInput.Nodes[1]"}; !cmp.Equal(got, want) {
		t.Errorf("nil node: paths %v, want %v", got, want)
	}
}

// A bootstrap-only rule never touches a node that carries its completion
// marker, even when its taint is back and its conditions hold (the node
// reconciler's choice; see EvaluateRule).
func TestRuleBootstrapCompletedIgnoresReaddedTaint(t *testing.T) {
	r := rule(EnforcementModeBootstrapOnly)
	for _, key := range []string{BootstrapAnnotationKey(r), BootstrapAnnotationPrefix + r.Name} {
		for name, conds := range map[string]map[v1.NodeConditionType]v1.ConditionStatus{"satisfied": netTrue, "unsatisfied": netFalse} {
			for _, tainted := range []bool{true, false} {
				var taints []v1.Taint
				if tainted {
					taints = []v1.Taint{ruleTaint()}
				}
				n := ruleNode(conds, taints...)
				n.Annotations = map[string]string{key: `{"rule-name":"network"}`}
				res := mustRule(t, r, n)
				if res.Action != RuleActionNone || res.Skipped != "BootstrapCompleted" || !res.Taints.Empty() ||
					res.TaintPresent != tainted || res.Annotations != nil {
					t.Errorf("marker %s, %s, tainted %v: got %+v", key, name, tainted, res)
				}
			}
		}
	}
}

// genRuleString draws strings near the validation limits: empty, ASCII,
// multi-byte, long, with slashes and dots.
func genRuleString(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"", "a", "A", "-", "a.b", "a/b", "readiness.k8s.io/", "readiness.k8s.io/net", "é", "True", "False", "Unknown"}),
		rapid.StringMatching(`[a-zA-Z0-9./_-]{0,20}`),
		rapid.Custom(func(t *rapid.T) string {
			return strings.Repeat(rapid.SampledFrom([]string{"a", "é", "/", "."}).Draw(t, "unit"), rapid.IntRange(0, 330).Draw(t, "n"))
		}),
		rapid.String(),
	).Draw(t, label)
}

// genRule draws a rule that starts valid and has, each with probability 1/4,
// its name, conditions, taint or selector redrawn near the limits, so that
// both accepted and refused rules are common.
func genRule(t *rapid.T) Rule {
	rarely := func(label string) bool { return rapid.IntRange(0, 3).Draw(t, label) == 0 }
	r := rule(rapid.SampledFrom([]EnforcementMode{EnforcementModeContinuous, EnforcementModeContinuous, EnforcementModeBootstrapOnly, EnforcementModeBootstrapOnly, "", "once"}).Draw(t, "mode"))
	statuses := []v1.ConditionStatus{"", v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown, "Yes"}
	if rarely("mutateName") {
		r.Name = genRuleString(t, "name")
	}
	if rarely("mutateConditions") {
		r.Conditions = nil
		for i, n := 0, rapid.IntRange(0, 34).Draw(t, "nConds"); i < n; i++ {
			typ := v1.NodeConditionType(rapid.SampledFrom([]string{"A", "B", "NetworkReady"}).Draw(t, "type"))
			if rapid.Bool().Draw(t, "oddType") {
				typ = v1.NodeConditionType(genRuleString(t, "type"))
			}
			r.Conditions = append(r.Conditions, ConditionRequirement{
				Type:           typ,
				RequiredStatus: rapid.SampledFrom(statuses).Draw(t, "required"),
				DefaultStatus:  rapid.SampledFrom(statuses).Draw(t, "default"),
			})
		}
	}
	r.Policy = rapid.SampledFrom([]ConditionPolicy{"", "", ConditionAllOf, ConditionAnyOf, "mostOf"}).Draw(t, "policy")
	if rarely("mutateTaint") {
		r.Taint = v1.Taint{
			Key:    genRuleString(t, "key"),
			Value:  genRuleString(t, "value"),
			Effect: v1.TaintEffect(rapid.SampledFrom([]string{"", "NoSchedule", "PreferNoSchedule", "NoExecute", "Never"}).Draw(t, "effect")),
		}
	}
	if rarely("mutateSelector") {
		r.NodeSelector = metav1.LabelSelector{}
		if rapid.Bool().Draw(t, "labels") {
			r.NodeSelector.MatchLabels = map[string]string{genRuleString(t, "lk"): genRuleString(t, "lv")}
		}
		if rapid.Bool().Draw(t, "exprs") {
			r.NodeSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{
				Key:      genRuleString(t, "ek"),
				Operator: metav1.LabelSelectorOperator(rapid.SampledFrom([]string{"", "In", "NotIn", "Exists", "DoesNotExist", "Gt"}).Draw(t, "op")),
				Values:   rapid.SliceOfN(rapid.SampledFrom([]string{"a", "", "b c"}), 0, 2).Draw(t, "values"),
			}}
		}
	}
	return r
}

// ValidateRule never panics, reports only fields of the rule, and any rule it
// accepts EvaluateRule and DryRun evaluate without error on any node.
func TestPropertyValidateRuleAcceptedRulesEvaluate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genRule(t)
		errs := ValidateRule(r, nil)
		for _, e := range errs {
			if !strings.HasPrefix(e.Field, "metadata.name") && !strings.HasPrefix(e.Field, "spec.") {
				t.Fatalf("error outside the rule's fields: %v", e)
			}
		}
		n := ruleNode(map[v1.NodeConditionType]v1.ConditionStatus{"A": v1.ConditionTrue}, genTaints(t)...)
		_, evalErr := EvaluateRule(RuleInput{Rule: r, Node: n})
		_, dryErr := DryRun(DryRunInput{Rule: r, Nodes: []*v1.Node{n}})
		if (len(errs) == 0) != (evalErr == nil) || (len(errs) == 0) != (dryErr == nil) {
			t.Fatalf("ValidateRule %v, EvaluateRule %v, DryRun %v", errs, evalErr, dryErr)
		}
	})
}

// FuzzValidateRule feeds arbitrary strings into every string field of a rule:
// ValidateRule must not panic, and a rule it accepts must evaluate.
func FuzzValidateRule(f *testing.F) {
	f.Add("network", "NetworkReady", "True", "", "continuous", "allOf", "readiness.k8s.io/net", "", "NoSchedule", "pool", "workers")
	f.Add("", "", "", "", "", "", "", "", "", "", "")
	f.Add("a.b", strings.Repeat("é", 317), "Yes", "Maybe", "bootstrap-only", "anyOf", "readiness.k8s.io/a/b", strings.Repeat("é", 64), "Never", "-x", "a b")
	f.Fuzz(func(t *testing.T, name, typ, req, def, mode, policy, key, value, effect, lk, lv string) {
		r := Rule{
			Name:         name,
			Conditions:   []ConditionRequirement{{Type: v1.NodeConditionType(typ), RequiredStatus: v1.ConditionStatus(req), DefaultStatus: v1.ConditionStatus(def)}},
			Mode:         EnforcementMode(mode),
			Policy:       ConditionPolicy(policy),
			Taint:        v1.Taint{Key: key, Value: value, Effect: v1.TaintEffect(effect)},
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{lk: lv}},
		}
		errs := ValidateRule(r, nil)
		n := ruleNode(netTrue)
		if _, err := EvaluateRule(RuleInput{Rule: r, Node: n}); (err == nil) != (len(errs) == 0) {
			t.Fatalf("ValidateRule %v, EvaluateRule %v", errs, err)
		}
	})
}
