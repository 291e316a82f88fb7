package nodegate

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Gate is one pod-selector readiness gate of a node: the node is not ready
// while the pods bound to it that the gate selects are missing or not ready.
type Gate struct {
	// Name identifies the gate; it must be non-empty and unique on the node.
	Name string
	// Selector selects the gate's pods by label. An empty selector is
	// invalid unless Input.EmptySelectorMatchesAll is set.
	Selector metav1.LabelSelector
	// Namespace restricts the gate to pods of one namespace; "" means every
	// namespace (unless Input.EmptyNamespaceInvalid is set).
	Namespace string
	// BlocksReadiness says whether the gate holds the node back; nil means
	// true. A non-blocking gate is still evaluated and reported.
	BlocksReadiness *bool
}

// Blocking reports whether g holds the node back when not ready (nil
// BlocksReadiness counts as true).
func (g Gate) Blocking() bool { return g.BlocksReadiness == nil || *g.BlocksReadiness }

// Reasons a gate is or is not ready, in GateResult.Reason.
const (
	// ReasonAllPodsReady: at least one pod matched and all are ready.
	ReasonAllPodsReady = "AllPodsReady"
	// ReasonPodsNotReady: some matching pods are not ready (listed).
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonNoMatchingPods: no pod bound to the node matches; the gate fails
	// closed, which also lets an external actor hold a node with a gate that
	// selects nothing and release it by removing the gate.
	ReasonNoMatchingPods = "NoMatchingPods"
	// ReasonInvalidSelector: the selector does not parse; the gate fails closed.
	ReasonInvalidSelector = "InvalidSelector"
	// ReasonEmptySelector: the selector is empty ({}), which would match
	// every pod; the gate fails closed unless EmptySelectorMatchesAll.
	ReasonEmptySelector = "EmptySelector"
	// ReasonInvalidNamespace: the gate has no namespace and
	// EmptyNamespaceInvalid is set.
	ReasonInvalidNamespace = "InvalidNamespace"
)

// GateResult is one gate's readiness on the node (the KEP's
// status.readiness entry, with the reasons a person needs).
type GateResult struct {
	// Name is the gate's name.
	Name string
	// Ready reports whether at least one pod matched and all matched pods are ready.
	Ready bool
	// Blocking is the gate's effective BlocksReadiness.
	Blocking bool
	// Reason is one of the Reason constants; Message explains it.
	Reason, Message string
	// Matched counts the gate's candidate pods on the node; ReadyCount the ready ones.
	Matched, ReadyCount int
	// NotReadyPods are the not-ready candidates as "namespace/name", sorted.
	NotReadyPods []string
}

// Result is the evaluation of a node's gates.
type Result struct {
	// Gates holds one result per gate, in the order of the gates.
	Gates []GateResult
	// NodeReady reports whether every blocking gate is ready (and the node's
	// Ready condition is True, with Input.RequireNodeReadyCondition).
	NodeReady bool
	// BlockingGates names the blocking gates that are not ready, in order.
	BlockingGates []string
	// DesiredTaints are the owned taints the node should carry.
	DesiredTaints []v1.Taint
	// Taints is the change that brings the node's owned taints to
	// DesiredTaints without touching any other taint.
	Taints TaintDiff
	// StatusChanged reports whether Gates differs from Input.OldGates,
	// compared as name → ready.
	StatusChanged bool
}

// Evaluate computes each gate's readiness from the pods bound to in.Node, the
// node's readiness, and the taint change. Only pods whose spec.nodeName is the
// node's name count. Invalid or empty selectors and gates matching no pod make
// the gate not ready (fail closed).
//
// The error is only for input that cannot be evaluated at all: a nil or
// unnamed node, a nil pod, a zero Now, an empty, duplicate or (PerGate mode)
// unusable gate name, a bad or reserved taint key, prefix, effect or value, or
// an unknown mode or policy. It is a *[podstatus.InputError], matching
// [podstatus.ErrInvalidInput], whose field paths start at Input and say which
// part is at fault ("Input.Gates[1].Name", "Input.TaintKey").
func Evaluate(in Input) (Result, error) {
	in = in.withDefaults()
	if errs := validateInput(in); len(errs) > 0 {
		subject := ""
		if in.Node != nil && in.Node.Name != "" {
			subject = "node " + in.Node.Name
		}
		return Result{}, inputError("Evaluate", subject, errs)
	}
	node := in.Node

	res := Result{NodeReady: true}
	for _, g := range in.Gates {
		st := evaluateGate(node.Name, g, in)
		res.Gates = append(res.Gates, st)
		if st.Blocking && !st.Ready {
			res.NodeReady = false
			res.BlockingGates = append(res.BlockingGates, g.Name)
		}
	}
	if in.RequireNodeReadyCondition && !nodeConditionTrue(node, v1.NodeReady) {
		res.NodeReady = false
	}
	res.StatusChanged = statusChanged(in.OldGates, res.Gates)

	var timeAdded *metav1.Time
	if in.TaintEffect == v1.TaintEffectNoExecute {
		t := in.Now
		timeAdded = &t
	}
	taint := func(key string) v1.Taint {
		return v1.Taint{Key: key, Value: in.TaintValue, Effect: in.TaintEffect, TimeAdded: timeAdded}
	}
	switch in.TaintMode {
	case TaintModeSingle:
		if !res.NodeReady {
			res.DesiredTaints = []v1.Taint{taint(in.TaintKey)}
		}
	case TaintModePerGate:
		for _, name := range res.BlockingGates {
			res.DesiredTaints = append(res.DesiredTaints, taint(in.TaintKeyPrefix+name))
		}
	}
	if len(in.Gates) == 0 && in.NoGates == NoGatesLeaveTaints {
		res.Taints = TaintDiff{NewTaints: append([]v1.Taint(nil), node.Spec.Taints...)}
		return res, nil
	}
	res.Taints = diffTaints(node.Spec.Taints, res.DesiredTaints, in.owns, in.ReplaceOnValueMismatch)
	return res, nil
}

// owns reports whether the evaluator manages taint t under these options.
func (o Input) owns(t *v1.Taint) bool {
	if t.Effect != o.TaintEffect {
		return false
	}
	if o.TaintMode == TaintModePerGate {
		return strings.HasPrefix(t.Key, o.TaintKeyPrefix)
	}
	return t.Key == o.TaintKey
}

// evaluateGate computes one gate's status on node nodeName.
func evaluateGate(nodeName string, g Gate, in Input) GateResult {
	st := GateResult{Name: g.Name, Blocking: g.Blocking()}
	sel, err := metav1.LabelSelectorAsSelector(&g.Selector)
	if err != nil {
		st.Reason, st.Message = ReasonInvalidSelector, err.Error()
		return st
	}
	if sel.Empty() && !in.EmptySelectorMatchesAll {
		st.Reason, st.Message = ReasonEmptySelector, "the gate's selector is empty; it would match every pod"
		return st
	}
	if g.Namespace == "" && in.EmptyNamespaceInvalid {
		st.Reason, st.Message = ReasonInvalidNamespace, "the gate has no namespace"
		return st
	}
	for _, p := range in.Pods {
		if p.Spec.NodeName != nodeName || (g.Namespace != "" && p.Namespace != g.Namespace) ||
			!sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		terminating := p.DeletionTimestamp != nil
		if terminating && in.TerminatingPods == TerminatingExclude {
			continue
		}
		st.Matched++
		if podCountsReady(p, terminating, in) {
			st.ReadyCount++
		} else {
			st.NotReadyPods = append(st.NotReadyPods, p.Namespace+"/"+p.Name)
		}
	}
	sort.Strings(st.NotReadyPods)
	ns := g.Namespace
	if ns == "" {
		ns = "*"
	}
	switch {
	case st.Matched == 0:
		st.Reason = ReasonNoMatchingPods
		st.Message = fmt.Sprintf("no pods match selector %s in namespace %s on node %s", sel.String(), ns, nodeName)
	case len(st.NotReadyPods) == 0:
		st.Ready = true
		st.Reason = ReasonAllPodsReady
		st.Message = fmt.Sprintf("%d of %d pods ready", st.ReadyCount, st.Matched)
	default:
		st.Reason = ReasonPodsNotReady
		st.Message = fmt.Sprintf("%d of %d pods not ready: %s", len(st.NotReadyPods), st.Matched, strings.Join(st.NotReadyPods, ", "))
	}
	return st
}

// podCountsReady decides whether one candidate pod counts as ready. A Failed
// pod never does, a Succeeded pod only with SucceededPodsAreReady (a finished
// pod serves nothing, whatever stale condition it carries).
func podCountsReady(p *v1.Pod, terminating bool, in Input) bool {
	if terminating && in.TerminatingPods == TerminatingNotReady {
		return false
	}
	switch p.Status.Phase {
	case v1.PodFailed:
		return false
	case v1.PodSucceeded:
		return in.SucceededPodsAreReady
	}
	return in.IsPodReady(p)
}

// nodeConditionTrue reports whether the node's first condition of type t is True.
func nodeConditionTrue(node *v1.Node, t v1.NodeConditionType) bool {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return node.Status.Conditions[i].Status == v1.ConditionTrue
		}
	}
	return false
}

// statusChanged compares the published readiness with the new one as
// name → ready maps.
func statusChanged(prev []GateResult, now []GateResult) bool {
	old := map[string]bool{}
	for _, g := range prev {
		old[g.Name] = g.Ready
	}
	if len(old) != len(now) {
		return true
	}
	for _, g := range now {
		r, ok := old[g.Name]
		if !ok || r != g.Ready {
			return true
		}
	}
	return false
}
