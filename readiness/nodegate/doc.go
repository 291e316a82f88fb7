// Package nodegate evaluates node readiness gates: whether a node may accept
// workloads, given the pods or the node conditions its gates name, and which
// taints to add to or remove from the node so the scheduler agrees.
//
// EXPERIMENTAL: neither model is a stable Kubernetes API. The pod-selector
// model has no upstream implementation, and the condition rules track an
// untagged commit of an alpha CRD (v1alpha1 of
// kubernetes-sigs/node-readiness-controller). This package's API and
// behaviour may change in any release of this module, outside the module's
// compatibility promise.
//
// # Functions
//
// Every function is a pure function of one input struct ([Input], [RuleInput],
// [DryRunInput]) holding the objects it reads, the time where it needs one
// (Now, required: nothing reads a clock), the Kubernetes version
// ([features.Set], whose zero value is v1.37.0; no behaviour depends on it
// yet) and optional knobs. Nothing is read from or written to a cluster, the
// objects passed in are never modified, and no package-level state exists.
// Input that cannot be evaluated is reported as a *[podstatus.InputError]
// matching [podstatus.ErrInvalidInput]; its field paths say which part is at
// fault ("Input.Gates[1].Name" for a gate, "Input.TaintKey" for the taint
// configuration, "RuleInput.Rule.spec.taint" for a rule).
//
// Two models are offered:
//
//   - Pod-selector gates ([Evaluate]), the 2019 "Node Readiness Gates" KEP
//     model: each [Gate] selects pods by label and namespace; a gate is ready
//     when at least one pod bound to the node matches and every matching pod
//     is ready; the node is ready when every blocking gate is. The evaluator
//     owns one taint key (by default [DefaultTaintKey]) or one key prefix, and
//     never touches any other taint. Invalid or empty selectors fail closed.
//   - Condition rules ([EvaluateRule], [DryRun], [ValidateRule]), compatible
//     with kubernetes-sigs/node-readiness-controller's NodeReadinessRule
//     (api/v1alpha1 at commit e5ff8d103234: v0.5.0 plus the conditionPolicy
//     field and anyOf of kubernetes-sigs/node-readiness-controller#315, which
//     no tag has yet) and with KEP-5233: all-of / any-of node conditions with
//     a default status for missing ones, one taint per rule, bootstrap-only or
//     continuous enforcement, and dry-run counters. [ValidateRule] gives the
//     verdict and the field paths the cluster gives on create.
//
// The evaluators never use node.kubernetes.io/not-ready or any other key the
// node lifecycle controller manages: it would remove such a taint from a node
// whose Ready condition is True.
//
// # Choices of the pod-selector model
//
// The 2019 KEP describes the model and leaves these open; this package
// decides:
//
//  1. Empty or duplicate gate names, and (PerGate mode) names that make an
//     invalid taint key, are input errors from Evaluate, not gates reported
//     as not ready: a gate list that cannot be evaluated is a caller's
//     mistake, and reporting it as a node state would hold the node back
//     over a typo without saying why.
//  2. An empty TaintKey means [DefaultTaintKey]. Keys in node.kubernetes.io/
//     and node.cloudprovider.kubernetes.io/ are refused: the node lifecycle
//     controller (pkg/controller/nodelifecycle/node_lifecycle_controller.go)
//     removes node.kubernetes.io/not-ready from a node whose Ready condition
//     is True, and the cloud node controller owns its own taints.
//  3. The empty-selector and empty-namespace behaviours are booleans
//     (EmptySelectorMatchesAll, EmptyNamespaceInvalid) whose zero values are
//     the defaults: an empty selector fails closed, an empty namespace means
//     every namespace.
//  4. A Failed pod never counts as ready and a Succeeded pod only with
//     SucceededPodsAreReady, whatever Ready condition it still carries (the
//     kubelet sets Ready to False when a pod finishes, but an object built
//     elsewhere may not).
//
// # Limits of the condition rules
//
//  1. [ValidateRule] checks one rule as the cluster does on create (CRD
//     schema, CEL rules, webhook validateSpec). Not checked: the webhook's
//     cross-rule check (validateTaintConflicts in
//     internal/webhook/nodereadinessgaterule_webhook.go, with
//     internal/webhook/selector_overlap.go), its NoExecute warnings
//     (generateNoExecuteWarnings), and the update-only immutability rules.
//  2. A completed bootstrap-only rule never touches the node again, as the
//     node reconciler does; the rule reconciler would remove a re-added taint
//     (see [EvaluateRule] for the functions involved).
package nodegate
