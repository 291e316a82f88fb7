package nodegate

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus"
)

var t0 = metav1.NewTime(time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC))

// K is the Single-mode key of the gate vectors in TestGateVectors.
const K = "readiness.k8s.io/k"

func node(name string, taints ...v1.Taint) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{Taints: taints}}
}

func taint(key, value string, effect v1.TaintEffect) v1.Taint {
	return v1.Taint{Key: key, Value: value, Effect: effect}
}

func kTaint() v1.Taint { return taint(K, "", v1.TaintEffectNoSchedule) }

// gatePod is a pod in kube-system with the given labels on nodeName.
func gatePod(name, nodeName string, labels map[string]string, ready *v1.ConditionStatus) v1.Pod {
	p := v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: labels},
		Spec:       v1.PodSpec{NodeName: nodeName},
		Status:     v1.PodStatus{Phase: v1.PodRunning},
	}
	if ready != nil {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: *ready}}
	}
	return p
}

// evaluate is Evaluate of n, gates and pods with the rest of in, at t0 when
// in has no Now: the tests keep their pods as values.
func evaluate(n *v1.Node, gates []Gate, pods []v1.Pod, in Input) (Result, error) {
	in.Node, in.Gates, in.Pods = n, gates, ptrs(pods)
	if in.Now.IsZero() {
		in.Now = t0
	}
	return Evaluate(in)
}

// ptrs points at each element of xs, as a lister's list holds them.
func ptrs[T any](xs []T) []*T {
	var out []*T
	for i := range xs {
		out = append(out, &xs[i])
	}
	return out
}

// inputErrorPaths checks that err is a *podstatus.InputError matching
// podstatus.ErrInvalidInput and returns its errors as "Type field".
func inputErrorPaths(t *testing.T, err error) []string {
	t.Helper()
	if !errors.Is(err, podstatus.ErrInvalidInput) {
		t.Fatalf("err = %v, want one matching podstatus.ErrInvalidInput", err)
	}
	var ie *podstatus.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %T %v, want a *podstatus.InputError", err, err)
	}
	return errPaths(ie.Errs)
}

func cs(s v1.ConditionStatus) *v1.ConditionStatus { return &s }

var (
	cni = map[string]string{"app": "cni"}
	csi = map[string]string{"app": "csi"}
)

func g1() Gate {
	return Gate{Name: "g1", Namespace: "kube-system", Selector: metav1.LabelSelector{MatchLabels: cni}}
}

func terminating(p v1.Pod) v1.Pod {
	p.DeletionTimestamp = &t0
	return p
}

func withPhase(p v1.Pod, phase v1.PodPhase) v1.Pod {
	p.Status.Phase = phase
	return p
}

// TestGateVectors are the basic vectors for pod-selector gates: node n1, gate g1 selects app=cni in
// kube-system, blocking, Single mode, key K, NoSchedule.
func TestGateVectors(t *testing.T) {
	single := Input{TaintKey: K}
	perGate := Input{TaintMode: TaintModePerGate, TaintKeyPrefix: "readiness.k8s.io/gate-"}
	g2 := Gate{Name: "g2", Namespace: "kube-system", Selector: metav1.LabelSelector{MatchLabels: csi}}
	cases := []struct {
		name       string
		node       *v1.Node
		gates      []Gate
		pods       []v1.Pod
		opts       Input
		wantReason []string
		wantReady  bool
		wantAdd    []v1.Taint
		wantRemove []v1.Taint
	}{
		{name: "1 no pods", node: node("n1"), gates: []Gate{g1()}, opts: single,
			wantReason: []string{ReasonNoMatchingPods}, wantAdd: []v1.Taint{kTaint()}},
		{name: "2 ready pod on the node", node: node("n1", kTaint()), gates: []Gate{g1()},
			pods: []v1.Pod{gatePod("cni", "n1", cni, cs(v1.ConditionTrue))}, opts: single,
			wantReason: []string{ReasonAllPodsReady}, wantReady: true, wantRemove: []v1.Taint{kTaint()}},
		{name: "3 the pod is on another node", node: node("n1"), gates: []Gate{g1()},
			pods: []v1.Pod{gatePod("cni", "n2", cni, cs(v1.ConditionTrue))}, opts: single,
			wantReason: []string{ReasonNoMatchingPods}, wantAdd: []v1.Taint{kTaint()}},
		{name: "4 pod not ready, taint present", node: node("n1", kTaint()), gates: []Gate{g1()},
			pods: []v1.Pod{gatePod("cni", "n1", cni, cs(v1.ConditionFalse))}, opts: single,
			wantReason: []string{ReasonPodsNotReady}},
		{name: "5 ready pod terminating (Exclude)", node: node("n1"), gates: []Gate{g1()},
			pods: []v1.Pod{terminating(gatePod("cni", "n1", cni, cs(v1.ConditionTrue)))}, opts: single,
			wantReason: []string{ReasonNoMatchingPods}, wantAdd: []v1.Taint{kTaint()}},
		{name: "6 non-blocking gate, no pods", node: node("n1", kTaint()),
			gates: []Gate{func() Gate { g := g1(); g.BlocksReadiness = ptr.To(false); return g }()}, opts: single,
			wantReason: []string{ReasonNoMatchingPods}, wantReady: true, wantRemove: []v1.Taint{kTaint()}},
		{name: "7 In with no values", node: node("n1"),
			gates: []Gate{{Name: "g1", Selector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "In"}}}}},
			opts:  single, wantReason: []string{ReasonInvalidSelector}, wantAdd: []v1.Taint{kTaint()}},
		{name: "8 PerGate", node: node("n1", taint("readiness.k8s.io/gate-g1", "", v1.TaintEffectNoSchedule)), gates: []Gate{g1(), g2},
			pods: []v1.Pod{gatePod("cni", "n1", cni, cs(v1.ConditionTrue))}, opts: perGate,
			wantReason: []string{ReasonAllPodsReady, ReasonNoMatchingPods},
			wantAdd:    []v1.Taint{taint("readiness.k8s.io/gate-g2", "", v1.TaintEffectNoSchedule)},
			wantRemove: []v1.Taint{taint("readiness.k8s.io/gate-g1", "", v1.TaintEffectNoSchedule)}},
		{name: "9 value mismatch and foreign taint: no change", node: node("n1", taint(K, "old", v1.TaintEffectNoSchedule), taint("other", "", v1.TaintEffectNoExecute)),
			gates: []Gate{g1()}, opts: single, wantReason: []string{ReasonNoMatchingPods}},
		{name: "10 zero gates (default)", node: node("n1", kTaint()), opts: single, wantReady: true, wantRemove: []v1.Taint{kTaint()}},
		{name: "10 zero gates (LeaveTaints)", node: node("n1", kTaint()), opts: Input{TaintKey: K, NoGates: NoGatesLeaveTaints}, wantReady: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := evaluate(tc.node, tc.gates, tc.pods, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			for _, g := range res.Gates {
				reasons = append(reasons, g.Reason)
			}
			if diff := cmp.Diff(tc.wantReason, reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if res.NodeReady != tc.wantReady {
				t.Errorf("NodeReady = %v, want %v", res.NodeReady, tc.wantReady)
			}
			if diff := cmp.Diff(tc.wantAdd, res.Taints.Add); diff != "" {
				t.Errorf("add (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRemove, res.Taints.Remove); diff != "" {
				t.Errorf("remove (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEdgeCases covers the edge cases of pod-selector gates (empty and
// invalid selectors, terminating and finished pods) and each option.
func TestEdgeCases(t *testing.T) {
	readyPod := gatePod("a", "n1", cni, cs(v1.ConditionTrue))
	cases := []struct {
		name  string
		node  *v1.Node
		gates []Gate
		pods  []v1.Pod
		opts  Input
		check func(t *testing.T, r Result)
	}{
		{name: "two pods, one not ready: listed", gates: []Gate{g1()},
			pods: []v1.Pod{readyPod, gatePod("b", "n1", cni, cs(v1.ConditionFalse))},
			check: func(t *testing.T, r Result) {
				g := r.Gates[0]
				if g.Ready || g.Reason != ReasonPodsNotReady || g.Matched != 2 || g.ReadyCount != 1 || !cmp.Equal(g.NotReadyPods, []string{"kube-system/b"}) {
					t.Errorf("got %+v", g)
				}
			}},
		{name: "a pod without a Ready condition is not ready", gates: []Gate{g1()}, pods: []v1.Pod{gatePod("a", "n1", cni, nil)},
			check: gateReady(false, ReasonPodsNotReady)},
		{name: "the first Ready condition wins", gates: []Gate{g1()},
			pods: []v1.Pod{func() v1.Pod {
				p := readyPod
				p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}, {Type: v1.PodReady, Status: v1.ConditionFalse}}
				return p
			}()},
			check: gateReady(true, ReasonAllPodsReady)},
		{name: "terminating pod plus a ready replacement", gates: []Gate{g1()},
			pods:  []v1.Pod{terminating(gatePod("old", "n1", cni, cs(v1.ConditionFalse))), gatePod("new", "n1", cni, cs(v1.ConditionTrue))},
			check: gateReady(true, ReasonAllPodsReady)},
		{name: "terminating pods counted as not ready", gates: []Gate{g1()}, opts: Input{TerminatingPods: TerminatingNotReady},
			pods: []v1.Pod{terminating(readyPod)}, check: gateReady(false, ReasonPodsNotReady)},
		{name: "terminating pods counted as they are", gates: []Gate{g1()}, opts: Input{TerminatingPods: TerminatingAsIs},
			pods: []v1.Pod{terminating(readyPod)}, check: gateReady(true, ReasonAllPodsReady)},
		{name: "Failed pod with a stale Ready=True is not ready", gates: []Gate{g1()},
			pods: []v1.Pod{withPhase(readyPod, v1.PodFailed)}, check: gateReady(false, ReasonPodsNotReady)},
		{name: "Succeeded pod is not ready by default", gates: []Gate{g1()},
			pods: []v1.Pod{withPhase(gatePod("a", "n1", cni, cs(v1.ConditionFalse)), v1.PodSucceeded)}, check: gateReady(false, ReasonPodsNotReady)},
		{name: "Succeeded pod with SucceededPodsAreReady", gates: []Gate{g1()}, opts: Input{SucceededPodsAreReady: true},
			pods: []v1.Pod{withPhase(gatePod("a", "n1", cni, cs(v1.ConditionFalse)), v1.PodSucceeded)}, check: gateReady(true, ReasonAllPodsReady)},
		{name: "Pending pod bound to the node", gates: []Gate{g1()},
			pods: []v1.Pod{withPhase(gatePod("a", "n1", cni, nil), v1.PodPending)}, check: gateReady(false, ReasonPodsNotReady)},
		{name: "unscheduled pod does not count", gates: []Gate{g1()},
			pods: []v1.Pod{gatePod("a", "", cni, cs(v1.ConditionTrue))}, check: gateReady(false, ReasonNoMatchingPods)},
		{name: "pod in another namespace does not count", gates: []Gate{g1()},
			pods: []v1.Pod{func() v1.Pod { p := readyPod; p.Namespace = "default"; return p }()}, check: gateReady(false, ReasonNoMatchingPods)},
		{name: "namespace \"\" matches every namespace", gates: []Gate{{Name: "g", Selector: metav1.LabelSelector{MatchLabels: cni}}},
			pods: []v1.Pod{func() v1.Pod { p := readyPod; p.Namespace = "default"; return p }()}, check: gateReady(true, ReasonAllPodsReady)},
		{name: "namespace \"\" invalid by option", gates: []Gate{{Name: "g", Selector: metav1.LabelSelector{MatchLabels: cni}}},
			opts: Input{EmptyNamespaceInvalid: true}, pods: []v1.Pod{readyPod}, check: gateReady(false, ReasonInvalidNamespace)},
		{name: "empty selector fails closed", gates: []Gate{{Name: "g"}}, pods: []v1.Pod{readyPod}, check: gateReady(false, ReasonEmptySelector)},
		{name: "empty selector matches all by option", gates: []Gate{{Name: "g"}}, opts: Input{EmptySelectorMatchesAll: true},
			pods: []v1.Pod{readyPod}, check: gateReady(true, ReasonAllPodsReady)},
		{name: "invalid key in selector", gates: []Gate{{Name: "g", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"k8s.io/too/many/slashes": "x"}}}},
			check: gateReady(false, ReasonInvalidSelector)},
		{name: "same key, other effect: untouched, desired added", gates: []Gate{g1()},
			node: node("n1", taint(K, "", v1.TaintEffectNoExecute)),
			check: func(t *testing.T, r Result) {
				if len(r.Taints.Remove) != 0 || !cmp.Equal(r.Taints.Add, []v1.Taint{kTaint()}) {
					t.Errorf("got %+v", r.Taints)
				}
			}},
		{name: "duplicate owned taints are all removed", gates: []Gate{g1()}, pods: []v1.Pod{readyPod},
			node: node("n1", kTaint(), taint("x", "", v1.TaintEffectNoSchedule), taint(K, "v", v1.TaintEffectNoSchedule)),
			check: func(t *testing.T, r Result) {
				if len(r.Taints.Remove) != 2 || !cmp.Equal(r.Taints.NewTaints, []v1.Taint{taint("x", "", v1.TaintEffectNoSchedule)}) {
					t.Errorf("got %+v", r.Taints)
				}
			}},
		{name: "ReplaceOnValueMismatch", gates: []Gate{g1()}, opts: Input{TaintValue: "v"},
			node: node("n1", taint(K, "old", v1.TaintEffectNoSchedule)),
			check: func(t *testing.T, r Result) {
				if !r.Taints.Empty() {
					t.Errorf("default must ignore the value: %+v", r.Taints)
				}
			}},
		{name: "ReplaceOnValueMismatch set", gates: []Gate{g1()}, opts: Input{TaintValue: "v", ReplaceOnValueMismatch: true},
			node: node("n1", taint(K, "old", v1.TaintEffectNoSchedule)),
			check: func(t *testing.T, r Result) {
				if !cmp.Equal(r.Taints.NewTaints, []v1.Taint{taint(K, "v", v1.TaintEffectNoSchedule)}) {
					t.Errorf("got %+v", r.Taints)
				}
			}},
		{name: "NoExecute taints carry TimeAdded", gates: []Gate{g1()}, opts: Input{TaintEffect: v1.TaintEffectNoExecute, Now: t0},
			check: func(t *testing.T, r Result) {
				if len(r.Taints.Add) != 1 || r.Taints.Add[0].TimeAdded == nil || !r.Taints.Add[0].TimeAdded.Equal(&t0) {
					t.Errorf("got %+v", r.Taints.Add)
				}
			}},
		{name: "RequireNodeReadyCondition holds a node whose gates are ready", gates: []Gate{g1()}, pods: []v1.Pod{readyPod},
			opts: Input{RequireNodeReadyCondition: true},
			check: func(t *testing.T, r Result) {
				if r.NodeReady || len(r.DesiredTaints) != 1 {
					t.Errorf("got %+v", r)
				}
			}},
		{name: "RequireNodeReadyCondition with Ready=True", gates: []Gate{g1()}, pods: []v1.Pod{readyPod},
			node: func() *v1.Node {
				n := node("n1")
				n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
				return n
			}(),
			opts: Input{RequireNodeReadyCondition: true},
			check: func(t *testing.T, r Result) {
				if !r.NodeReady {
					t.Errorf("got %+v", r)
				}
			}},
		{name: "StatusChanged against the published readiness", gates: []Gate{g1()}, pods: []v1.Pod{readyPod},
			opts: Input{OldGates: []GateResult{{Name: "g1", Ready: false}}},
			check: func(t *testing.T, r Result) {
				if !r.StatusChanged {
					t.Error("want StatusChanged")
				}
			}},
		{name: "StatusChanged false when equal", gates: []Gate{g1()}, pods: []v1.Pod{readyPod},
			opts: Input{OldGates: []GateResult{{Name: "g1", Ready: true, Reason: "whatever"}}},
			check: func(t *testing.T, r Result) {
				if r.StatusChanged {
					t.Error("want no change")
				}
			}},
		{name: "StatusChanged when a gate disappears", gates: []Gate{g1()}, pods: []v1.Pod{readyPod},
			opts: Input{OldGates: []GateResult{{Name: "g1", Ready: true}, {Name: "gone", Ready: true}}},
			check: func(t *testing.T, r Result) {
				if !r.StatusChanged {
					t.Error("want StatusChanged")
				}
			}},
		{name: "message of NoMatchingPods", gates: []Gate{g1()},
			check: func(t *testing.T, r Result) {
				if r.Gates[0].Message != "no pods match selector app=cni in namespace kube-system on node n1" {
					t.Errorf("message = %q", r.Gates[0].Message)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node
			if n == nil {
				n = node("n1")
			}
			opts := tc.opts
			if opts.TaintKey == "" {
				opts.TaintKey = K
			}
			r, err := evaluate(n, tc.gates, tc.pods, opts)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, r)
		})
	}
}

func gateReady(ready bool, reason string) func(*testing.T, Result) {
	return func(t *testing.T, r Result) {
		t.Helper()
		if g := r.Gates[0]; g.Ready != ready || g.Reason != reason {
			t.Errorf("gate = %+v, want ready=%v reason=%s", g, ready, reason)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	ready := gatePod("a", "n1", cni, cs(v1.ConditionTrue))
	cases := map[string]struct {
		in   Input
		want []string
	}{
		"nil node":                   {in: Input{}, want: []string{"Required Input.Node"}},
		"unnamed node":               {in: Input{Node: &v1.Node{}}, want: []string{"Required Input.Node.Name"}},
		"nil pod":                    {in: Input{Node: node("n1"), Pods: []*v1.Pod{&ready, nil}}, want: []string{"Required Input.Pods[1]"}},
		"duplicate gate names":       {in: Input{Node: node("n1"), Gates: []Gate{g1(), g1()}}, want: []string{"Duplicate Input.Gates[1].Name"}},
		"gate without name":          {in: Input{Node: node("n1"), Gates: []Gate{{}}}, want: []string{"Required Input.Gates[0].Name"}},
		"NLC key not-ready":          {in: Input{Node: node("n1"), TaintKey: "node.kubernetes.io/not-ready"}, want: []string{"Invalid Input.TaintKey"}},
		"NLC key unreachable":        {in: Input{Node: node("n1"), TaintKey: "node.kubernetes.io/unreachable"}, want: []string{"Invalid Input.TaintKey"}},
		"invalid key":                {in: Input{Node: node("n1"), TaintKey: "a/b/c"}, want: []string{"Invalid Input.TaintKey"}},
		"invalid effect":             {in: Input{Node: node("n1"), TaintEffect: "Sometimes"}, want: []string{"NotSupported Input.TaintEffect"}},
		"invalid value":              {in: Input{Node: node("n1"), TaintValue: "not a value"}, want: []string{"Invalid Input.TaintValue"}},
		"unknown mode":               {in: Input{Node: node("n1"), TaintMode: "Both"}, want: []string{"NotSupported Input.TaintMode"}},
		"unknown terminating policy": {in: Input{Node: node("n1"), TerminatingPods: "Maybe"}, want: []string{"NotSupported Input.TerminatingPods"}},
		"unknown no-gates policy":    {in: Input{Node: node("n1"), NoGates: "Maybe"}, want: []string{"NotSupported Input.NoGates"}},
		"reserved prefix":            {in: Input{Node: node("n1"), TaintMode: TaintModePerGate, TaintKeyPrefix: "node.kubernetes.io/gate-"}, want: []string{"Invalid Input.TaintKeyPrefix"}},
		"gate name bad in a key":     {in: Input{Node: node("n1"), Gates: []Gate{{Name: "has space"}}, TaintMode: TaintModePerGate}, want: []string{"Invalid Input.Gates[0].Name"}},
		"several at once": {in: Input{Node: node("n1"), Gates: []Gate{{}}, TaintEffect: "Sometimes", NoGates: "Maybe"},
			want: []string{"NotSupported Input.TaintEffect", "NotSupported Input.NoGates", "Required Input.Gates[0].Name"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := tc.in
			in.Now = t0
			_, err := Evaluate(in)
			if got := inputErrorPaths(t, err); !cmp.Equal(got, tc.want) {
				t.Errorf("err = %v: paths %v, want %v", err, got, tc.want)
			}
		})
	}
}

func TestEvaluateZeroNow(t *testing.T) {
	res, err := Evaluate(Input{Node: node("n1"), Gates: []Gate{g1()}})
	if got, want := inputErrorPaths(t, err), []string{"Required Input.Now"}; !cmp.Equal(got, want) {
		t.Errorf("err = %v: paths %v, want %v", err, got, want)
	}
	if want := "nodegate: Evaluate: node n1: Input.Now: Required value: the time of the evaluation is required"; err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
	if res.NodeReady || res.Gates != nil || !res.Taints.Empty() {
		t.Errorf("got %+v with an error", res)
	}
}

func TestDefaultKey(t *testing.T) {
	r, err := Evaluate(Input{Node: node("n1"), Gates: []Gate{g1()}, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	want := []v1.Taint{{Key: DefaultTaintKey, Effect: v1.TaintEffectNoSchedule}}
	if !cmp.Equal(r.Taints.Add, want) {
		t.Errorf("add = %+v, want %+v", r.Taints.Add, want)
	}
}
