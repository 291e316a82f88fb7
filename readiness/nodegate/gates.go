package nodegate

import (
	"errors"
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
	// invalid unless Options.EmptySelectorMatchesAll is set.
	Selector metav1.LabelSelector
	// Namespace restricts the gate to pods of one namespace; "" means every
	// namespace (unless Options.EmptyNamespaceInvalid is set).
	Namespace string
	// BlocksReadiness says whether the gate holds the node back; nil means
	// true. A non-blocking gate is still evaluated and reported.
	BlocksReadiness *bool
}

// Blocking reports whether g holds the node back when not ready (nil
// BlocksReadiness counts as true).
func (g Gate) Blocking() bool { return g.BlocksReadiness == nil || *g.BlocksReadiness }

// Reasons a gate is or is not ready, in GateStatus.Reason.
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
	// ReasonInvalidNS: the gate has no namespace and EmptyNamespaceInvalid is set.
	ReasonInvalidNS = "InvalidNamespace"
)

// GateStatus is one gate's readiness on the node (the KEP's
// status.readiness entry, with the reasons a person needs).
type GateStatus struct {
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
	// Gates holds one status per gate, in the order of the gates.
	Gates []GateStatus
	// NodeReady reports whether every blocking gate is ready (and the node's
	// Ready condition is True, with Options.RequireNodeReadyCondition).
	NodeReady bool
	// BlockingGates names the blocking gates that are not ready, in order.
	BlockingGates []string
	// DesiredTaints are the owned taints the node should carry.
	DesiredTaints []v1.Taint
	// Taints is the change that brings the node's owned taints to
	// DesiredTaints without touching any other taint.
	Taints TaintDiff
	// StatusChanged reports whether Gates differs from Options.Previous,
	// compared as name → ready.
	StatusChanged bool
}

// ErrInvalidGates is wrapped by Evaluate's error for gates that cannot be
// evaluated at all: an empty or duplicate name, or a name that makes an
// invalid PerGate taint key.
var ErrInvalidGates = errors.New("invalid node readiness gates")

// ErrInvalidOptions is wrapped by Evaluate's errors for a configuration that
// cannot be applied (a bad or reserved taint key, effect or value, or an
// unknown mode), and by Evaluate's and EvaluateRule's errors for a nil node.
var ErrInvalidOptions = errors.New("invalid options")

// Evaluate computes each gate's readiness from the pods bound to node, the
// node's readiness, and the taint change. pods may hold any pods (other
// nodes, unscheduled, any namespace): only pods whose spec.nodeName is the
// node's name count. Invalid or empty selectors and gates matching no pod make
// the gate not ready (fail closed). The error, which wraps ErrInvalidGates or
// ErrInvalidOptions, is only for a nil or unnamed node and unusable gates or
// options.
func Evaluate(node *v1.Node, gates []Gate, pods []v1.Pod, opts Options) (Result, error) {
	if node == nil || node.Name == "" {
		return Result{}, fmt.Errorf("nodegate: node is nil or has no name: %w", ErrInvalidOptions)
	}
	opts = opts.withDefaults()
	if err := validateOptions(opts); err != nil {
		return Result{}, err
	}
	if err := validateGates(gates, opts); err != nil {
		return Result{}, err
	}

	res := Result{NodeReady: true}
	for _, g := range gates {
		st := evaluateGate(node.Name, g, pods, opts)
		res.Gates = append(res.Gates, st)
		if st.Blocking && !st.Ready {
			res.NodeReady = false
			res.BlockingGates = append(res.BlockingGates, g.Name)
		}
	}
	if opts.RequireNodeReadyCondition && !nodeConditionTrue(node, v1.NodeReady) {
		res.NodeReady = false
	}
	res.StatusChanged = statusChanged(opts.Previous, res.Gates)

	var timeAdded *metav1.Time
	if opts.TaintEffect == v1.TaintEffectNoExecute {
		t := opts.Now
		timeAdded = &t
	}
	taint := func(key string) v1.Taint {
		return v1.Taint{Key: key, Value: opts.TaintValue, Effect: opts.TaintEffect, TimeAdded: timeAdded}
	}
	switch opts.TaintMode {
	case TaintModeSingle:
		if !res.NodeReady {
			res.DesiredTaints = []v1.Taint{taint(opts.TaintKey)}
		}
	case TaintModePerGate:
		for _, name := range res.BlockingGates {
			res.DesiredTaints = append(res.DesiredTaints, taint(opts.TaintKeyPrefix+name))
		}
	}
	if len(gates) == 0 && opts.NoGates == NoGatesLeaveTaints {
		res.Taints = TaintDiff{NewTaints: append([]v1.Taint(nil), node.Spec.Taints...)}
		return res, nil
	}
	res.Taints = diffTaints(node.Spec.Taints, res.DesiredTaints, opts.owns, opts.ReplaceOnValueMismatch)
	return res, nil
}

// owns reports whether the evaluator manages taint t under these options.
func (o Options) owns(t *v1.Taint) bool {
	if t.Effect != o.TaintEffect {
		return false
	}
	if o.TaintMode == TaintModePerGate {
		return strings.HasPrefix(t.Key, o.TaintKeyPrefix)
	}
	return t.Key == o.TaintKey
}

// evaluateGate computes one gate's status on node nodeName.
func evaluateGate(nodeName string, g Gate, pods []v1.Pod, opts Options) GateStatus {
	st := GateStatus{Name: g.Name, Blocking: g.Blocking()}
	sel, err := metav1.LabelSelectorAsSelector(&g.Selector)
	if err != nil {
		st.Reason, st.Message = ReasonInvalidSelector, err.Error()
		return st
	}
	if sel.Empty() && !opts.EmptySelectorMatchesAll {
		st.Reason, st.Message = ReasonEmptySelector, "the gate's selector is empty; it would match every pod"
		return st
	}
	if g.Namespace == "" && opts.EmptyNamespaceInvalid {
		st.Reason, st.Message = ReasonInvalidNS, "the gate has no namespace"
		return st
	}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != nodeName || (g.Namespace != "" && p.Namespace != g.Namespace) ||
			!sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		terminating := p.DeletionTimestamp != nil
		if terminating && opts.TerminatingPods == TerminatingExclude {
			continue
		}
		st.Matched++
		if podCountsReady(p, terminating, opts) {
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
func podCountsReady(p *v1.Pod, terminating bool, opts Options) bool {
	if terminating && opts.TerminatingPods == TerminatingNotReady {
		return false
	}
	switch p.Status.Phase {
	case v1.PodFailed:
		return false
	case v1.PodSucceeded:
		return opts.SucceededPodsAreReady
	}
	return opts.IsPodReady(p)
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
func statusChanged(prev []GateStatus, now []GateStatus) bool {
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
