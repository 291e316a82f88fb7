package nodegate

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
)

// DefaultTaintKey is the taint the pod-selector evaluator puts on a node while
// a blocking gate is not ready (Single mode). It lives in the reserved
// readiness.k8s.io/ domain that node-readiness-controller and Karpenter treat
// as ephemeral readiness taints. This is a library choice: the 2019 KEP never
// named a key.
const DefaultTaintKey = "readiness.k8s.io/node-readiness-gates"

// DefaultTaintKeyPrefix prefixes the per-gate taint keys in PerGate mode
// ("readiness.k8s.io/gate-<gate name>"). Every taint with this prefix and the
// configured effect is owned by the evaluator, so the prefix must not be
// shared with another controller.
const DefaultTaintKeyPrefix = "readiness.k8s.io/gate-"

// TaintMode chooses how many taints the evaluator manages.
type TaintMode string

const (
	// TaintModeSingle (the default) keeps one taint, TaintKey, on the node
	// while any blocking gate is not ready, as the KEP describes.
	TaintModeSingle TaintMode = "Single"
	// TaintModePerGate keeps one taint per blocking gate that is not ready,
	// keyed TaintKeyPrefix + gate name, so operators see which gate blocks.
	TaintModePerGate TaintMode = "PerGate"
)

// TerminatingPolicy says how pods with a deletionTimestamp count for a gate.
type TerminatingPolicy string

const (
	// TerminatingExclude (the default) ignores terminating pods: a gate whose
	// only pod is terminating has no matching pods and is not ready.
	TerminatingExclude TerminatingPolicy = "Exclude"
	// TerminatingNotReady keeps terminating pods and counts them as not ready.
	TerminatingNotReady TerminatingPolicy = "CountAsNotReady"
	// TerminatingAsIs judges terminating pods by their readiness like any pod.
	TerminatingAsIs TerminatingPolicy = "CountAsIs"
)

// NoGatesPolicy says what the evaluator does with its taint on a node that
// has no gates.
type NoGatesPolicy string

const (
	// NoGatesReady (the default): a node without gates is ready, so the owned
	// taints are removed.
	NoGatesReady NoGatesPolicy = "Ready"
	// NoGatesLeaveTaints: a node without gates is reported ready but its
	// taints are left as they are, so a node that registers with the taint
	// before its gates are written is not released early.
	NoGatesLeaveTaints NoGatesPolicy = "LeaveTaints"
)

// Input is everything [Evaluate] reads: the node, its gates, the pods that may
// be bound to it, the time, and how the evaluator manages its taints. Node and
// Now are required; every other field's zero value is the documented default:
// Single mode with [DefaultTaintKey], effect NoSchedule, empty value,
// terminating pods excluded, empty selectors invalid, "" namespace meaning
// every namespace, the reported Ready condition as pod readiness. None of the
// objects is modified.
type Input struct {
	// Node is the node to evaluate (required, with a name).
	Node *v1.Node
	// Gates are the node's pod-selector gates. Names must be non-empty and
	// unique (and, in PerGate mode, make a valid taint key).
	Gates []Gate
	// Pods are the candidate pods. Any pods may be passed (other nodes,
	// unscheduled, any namespace; a lister's whole list): only pods whose
	// spec.nodeName is the node's name count. Entries must not be nil.
	Pods []*v1.Pod
	// Now is the time of the evaluation (required); a zero Now is an input
	// error. It fills TimeAdded of added NoExecute taints, as the API server
	// expects; other effects leave TimeAdded nil.
	Now metav1.Time
	// Features selects version-dependent behaviour; its zero value is
	// Kubernetes v1.37.0. No behaviour of Evaluate depends on it yet: the
	// field is there so that callers pass the version the same way to every
	// function of the module.
	Features features.Set
	// OldGates is the readiness last published for the node (the KEP's
	// status.readiness), nil for none; it only feeds Result.StatusChanged.
	OldGates []GateResult

	// TaintKey is the Single-mode taint key; "" means DefaultTaintKey. Keys
	// the node lifecycle controller manages (node.kubernetes.io/...) are
	// refused.
	TaintKey string
	// TaintValue is the value of the taints the evaluator adds; "" is allowed.
	TaintValue string
	// TaintEffect is the effect of the owned taints; "" means NoSchedule.
	TaintEffect v1.TaintEffect
	// TaintMode is Single ("" too) or PerGate.
	TaintMode TaintMode
	// TaintKeyPrefix is the PerGate-mode key prefix; "" means
	// DefaultTaintKeyPrefix.
	TaintKeyPrefix string
	// ReplaceOnValueMismatch makes an owned taint whose value differs from
	// TaintValue count as wrong (removed and re-added). By default the value
	// is not part of a taint's identity, as for the node lifecycle
	// controller, node-readiness-controller and Karpenter.
	ReplaceOnValueMismatch bool

	// TerminatingPods is how terminating pods count; "" means Exclude.
	TerminatingPods TerminatingPolicy
	// SucceededPodsAreReady counts Succeeded pods as ready, for one-shot
	// setup pods whose Ready condition the kubelet sets to False on exit.
	SucceededPodsAreReady bool
	// EmptySelectorMatchesAll lets a gate's empty selector ({}) match every
	// pod. By default an empty selector is a mistake: the gate is not ready
	// (reason EmptySelector).
	EmptySelectorMatchesAll bool
	// EmptyNamespaceInvalid makes a gate with namespace "" not ready (reason
	// InvalidNamespace) instead of matching pods in every namespace.
	EmptyNamespaceInvalid bool
	// RequireNodeReadyCondition also requires the node's own Ready condition
	// to be True for the node to be ready (the KEP-5233 rule). In PerGate
	// mode it changes NodeReady only: no per-gate taint stands for the
	// node's own condition, which the node lifecycle controller taints.
	RequireNodeReadyCondition bool
	// NoGates is what happens to the owned taints of a node without gates;
	// "" means NoGatesReady.
	NoGates NoGatesPolicy

	// IsPodReady decides pod readiness; nil means [conditions.IsPodReady] (the
	// pod's first Ready condition is True). The module's readiness engine can
	// be plugged in here.
	IsPodReady func(*v1.Pod) bool
}

// RuleInput is everything [EvaluateRule] reads. Rule and Node are required.
type RuleInput struct {
	// Rule is the rule to apply; it must pass [ValidateRule].
	Rule Rule
	// Node is the node to apply it to (required). It is not modified.
	Node *v1.Node
	// Features selects version-dependent behaviour; its zero value is
	// Kubernetes v1.37.0. No behaviour of EvaluateRule depends on it yet.
	Features features.Set
}

// DryRunInput is everything [DryRun] reads. Rule is required.
type DryRunInput struct {
	// Rule is the rule to report on; it must pass [ValidateRule].
	Rule Rule
	// Nodes are the nodes of the cluster (a lister's whole list may be
	// passed). Entries must not be nil; they are not modified.
	Nodes []*v1.Node
	// Features selects version-dependent behaviour; its zero value is
	// Kubernetes v1.37.0. No behaviour of DryRun depends on it yet.
	Features features.Set
}

// withDefaults fills in the documented defaults.
func (o Input) withDefaults() Input {
	if o.TaintKey == "" {
		o.TaintKey = DefaultTaintKey
	}
	if o.TaintEffect == "" {
		o.TaintEffect = v1.TaintEffectNoSchedule
	}
	if o.TaintMode == "" {
		o.TaintMode = TaintModeSingle
	}
	if o.TaintKeyPrefix == "" {
		o.TaintKeyPrefix = DefaultTaintKeyPrefix
	}
	if o.TerminatingPods == "" {
		o.TerminatingPods = TerminatingExclude
	}
	if o.NoGates == "" {
		o.NoGates = NoGatesReady
	}
	if o.IsPodReady == nil {
		o.IsPodReady = conditions.IsPodReady
	}
	return o
}
