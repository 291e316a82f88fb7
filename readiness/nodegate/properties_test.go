package nodegate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"
)

var effects = []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute}

// genTaints draws node taints from a pool that mixes owned and foreign keys,
// effects and values, with duplicates.
func genTaints(t *rapid.T) []v1.Taint {
	keys := []string{K, DefaultTaintKey, DefaultTaintKeyPrefix + "g0", DefaultTaintKeyPrefix + "g1", DefaultTaintKeyPrefix + "zz",
		"node.kubernetes.io/not-ready", "example.com/foreign", ruleKey}
	var out []v1.Taint
	for i := range rapid.IntRange(0, 6).Draw(t, "taints") {
		out = append(out, v1.Taint{
			Key:    rapid.SampledFrom(keys).Draw(t, fmt.Sprintf("key%d", i)),
			Value:  rapid.SampledFrom([]string{"", "v", "old"}).Draw(t, fmt.Sprintf("value%d", i)),
			Effect: rapid.SampledFrom(effects).Draw(t, fmt.Sprintf("effect%d", i)),
		})
	}
	return out
}

func genGates(t *rapid.T) []Gate {
	sels := []metav1.LabelSelector{{}, {MatchLabels: cni}, {MatchLabels: csi},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Exists"}}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "In"}}}}
	var gates []Gate
	for i := range rapid.IntRange(0, 4).Draw(t, "gates") {
		g := Gate{Name: fmt.Sprintf("g%d", i), Selector: sels[rapid.IntRange(0, len(sels)-1).Draw(t, fmt.Sprintf("sel%d", i))],
			Namespace: rapid.SampledFrom([]string{"", "kube-system", "default"}).Draw(t, fmt.Sprintf("ns%d", i))}
		g.BlocksReadiness = []*bool{nil, ptr.To(true), ptr.To(false)}[rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("blocks%d", i))]
		gates = append(gates, g)
	}
	return gates
}

func genPods(t *rapid.T) []v1.Pod {
	var pods []v1.Pod
	for i := range rapid.IntRange(0, 6).Draw(t, "pods") {
		labels := []map[string]string{cni, csi, nil}[rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("labels%d", i))]
		p := gatePod(fmt.Sprintf("p%d", i), rapid.SampledFrom([]string{"n1", "n2", ""}).Draw(t, fmt.Sprintf("node%d", i)), labels,
			[]*v1.ConditionStatus{nil, cs(v1.ConditionTrue), cs(v1.ConditionFalse)}[rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("ready%d", i))])
		p.Namespace = rapid.SampledFrom([]string{"kube-system", "default"}).Draw(t, fmt.Sprintf("podns%d", i))
		p.Status.Phase = rapid.SampledFrom([]v1.PodPhase{v1.PodRunning, v1.PodPending, v1.PodSucceeded, v1.PodFailed}).Draw(t, fmt.Sprintf("phase%d", i))
		if rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("term%d", i)) == 0 {
			p.DeletionTimestamp = &t0
		}
		pods = append(pods, p)
	}
	return pods
}

func genOptions(t *rapid.T) Input {
	o := Input{
		TaintKey:                []string{"", K}[rapid.IntRange(0, 1).Draw(t, "key")],
		TaintValue:              rapid.SampledFrom([]string{"", "v"}).Draw(t, "value"),
		TaintEffect:             rapid.SampledFrom(effects).Draw(t, "effect"),
		TaintMode:               rapid.SampledFrom([]TaintMode{TaintModeSingle, TaintModePerGate}).Draw(t, "mode"),
		ReplaceOnValueMismatch:  rapid.Bool().Draw(t, "replace"),
		TerminatingPods:         rapid.SampledFrom([]TerminatingPolicy{TerminatingExclude, TerminatingNotReady, TerminatingAsIs}).Draw(t, "terminating"),
		SucceededPodsAreReady:   rapid.Bool().Draw(t, "succeeded"),
		EmptySelectorMatchesAll: rapid.Bool().Draw(t, "emptyAll"),
		Now:                     t0,
	}
	return o
}

// A node is ready exactly when every blocking gate is ready.
func TestPropertyNodeReadyIffBlockingGatesReady(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gates := genGates(t)
		res, err := evaluate(node("n1", genTaints(t)...), gates, genPods(t), genOptions(t))
		if err != nil {
			t.Fatal(err)
		}
		want := true
		for i, g := range res.Gates {
			if g.Name != gates[i].Name || g.Blocking != gates[i].Blocking() {
				t.Fatalf("gate %d reported as %+v", i, g)
			}
			if g.Blocking && !g.Ready {
				want = false
			}
			if g.Ready && (g.Matched == 0 || g.ReadyCount != g.Matched) {
				t.Fatalf("ready gate without all pods ready: %+v", g)
			}
		}
		if res.NodeReady != want {
			t.Fatalf("NodeReady = %v, gates %+v", res.NodeReady, res.Gates)
		}
		if len(res.BlockingGates) == 0 != res.NodeReady {
			t.Fatalf("BlockingGates %v with NodeReady %v", res.BlockingGates, res.NodeReady)
		}
	})
}

// Applying the taint diff yields exactly the desired owned taints, keeps every
// foreign taint in order, and a second evaluation changes nothing.
func TestPropertyTaintDiffExactAndForeignUntouched(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := genOptions(t)
		n := node("n1", genTaints(t)...)
		gates, pods := genGates(t), genPods(t)
		res, err := evaluate(n, gates, pods, opts)
		if err != nil {
			t.Fatal(err)
		}
		// Ownership as the documentation states it, independent of the code.
		key, effect := opts.TaintKey, opts.TaintEffect
		if key == "" {
			key = DefaultTaintKey
		}
		owns := func(x *v1.Taint) bool {
			if x.Effect != effect {
				return false
			}
			if opts.TaintMode == TaintModePerGate {
				return strings.HasPrefix(x.Key, DefaultTaintKeyPrefix)
			}
			return x.Key == key
		}
		split := func(ts []v1.Taint) (own, foreign []v1.Taint) {
			for _, x := range ts {
				if owns(&x) {
					own = append(own, x)
				} else {
					foreign = append(foreign, x)
				}
			}
			return
		}
		_, oldForeign := split(n.Spec.Taints)
		newOwn, newForeign := split(res.Taints.NewTaints)
		if !cmp.Equal(oldForeign, newForeign) {
			t.Fatalf("foreign taints changed:\n%s", cmp.Diff(oldForeign, newForeign))
		}
		for _, a := range res.Taints.Add {
			if !owns(&a) {
				t.Fatalf("adds a foreign taint %+v", a)
			}
		}
		for _, r := range res.Taints.Remove {
			if !owns(&r) {
				t.Fatalf("removes a foreign taint %+v", r)
			}
		}
		// Owned taints after the change match the desired set by key+effect
		// (and value, with ReplaceOnValueMismatch).
		same := func(a, b v1.Taint) bool {
			return a.MatchTaint(&b) && (!opts.ReplaceOnValueMismatch || a.Value == b.Value)
		}
		for _, d := range res.DesiredTaints {
			found := false
			for _, o := range newOwn {
				found = found || same(o, d)
			}
			if !found {
				t.Fatalf("desired %+v missing from %+v", d, res.Taints.NewTaints)
			}
		}
		for _, o := range newOwn {
			found := false
			for _, d := range res.DesiredTaints {
				found = found || same(o, d)
			}
			if !found {
				t.Fatalf("owned %+v left although not desired %+v", o, res.DesiredTaints)
			}
		}
		n2 := n.DeepCopy()
		n2.Spec.Taints = res.Taints.NewTaints
		again, err := evaluate(n2, gates, pods, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Taints.Empty() {
			t.Fatalf("not idempotent: second diff %+v", again.Taints)
		}
	})
}

// A rule only ever touches taints with its own key and effect, never writes
// its completion marker while its taint stays, and is stable once applied.
func TestPropertyRuleTouchesOnlyItsTaint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]EnforcementMode{EnforcementModeContinuous, EnforcementModeBootstrapOnly}).Draw(t, "mode")
		conds := []ConditionRequirement{{Type: "A", RequiredStatus: rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}).Draw(t, "reqA")}}
		if rapid.Bool().Draw(t, "twoConds") {
			conds = append(conds, ConditionRequirement{Type: "B", RequiredStatus: v1.ConditionTrue})
		}
		r := rule(mode, conds...)
		r.Taint.Effect = rapid.SampledFrom(effects).Draw(t, "ruleEffect")
		if mode == EnforcementModeContinuous && rapid.Bool().Draw(t, "anyOf") {
			r.Policy = ConditionAnyOf
		}
		statuses := map[v1.NodeConditionType]v1.ConditionStatus{}
		for _, c := range []v1.NodeConditionType{"A", "B"} {
			if s := rapid.SampledFrom([]v1.ConditionStatus{"", v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown}).Draw(t, "cond"+string(c)); s != "" {
				statuses[c] = s
			}
		}
		n := ruleNode(statuses, genTaints(t)...)
		if rapid.Bool().Draw(t, "otherPool") {
			n.Labels["pool"] = "infra"
		}
		res := mustRuleT(t, r, n)
		var oldForeign, newForeign []v1.Taint
		for _, x := range n.Spec.Taints {
			if !x.MatchTaint(&r.Taint) {
				oldForeign = append(oldForeign, x)
			}
		}
		for _, x := range res.Taints.NewTaints {
			if !x.MatchTaint(&r.Taint) {
				newForeign = append(newForeign, x)
			}
		}
		if !cmp.Equal(oldForeign, newForeign) {
			t.Fatalf("foreign taints changed:\n%s", cmp.Diff(oldForeign, newForeign))
		}
		if res.Annotations != nil && res.TaintPresent {
			t.Fatalf("completion marker while the taint stays: %+v", res)
		}
		if !res.Applies && !res.Taints.Empty() {
			t.Fatalf("a rule that does not select the node changed it: %+v", res)
		}
		applied := n.DeepCopy()
		applied.Spec.Taints = res.Taints.NewTaints
		for k, v := range res.Annotations {
			if applied.Annotations == nil {
				applied.Annotations = map[string]string{}
			}
			applied.Annotations[k] = v
		}
		again := mustRuleT(t, r, applied)
		if again.Action != RuleActionNone {
			t.Fatalf("not stable: first %s, then %s", res.Action, again.Action)
		}
	})
}

func mustRuleT(t *rapid.T, r Rule, n *v1.Node) RuleResult {
	res, err := EvaluateRule(RuleInput{Rule: r, Node: n})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
