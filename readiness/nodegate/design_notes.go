package nodegate

// Notes for maintainers: the library choices of this package.
//
// Pod-selector gates have no upstream implementation; the 2019 Node Readiness
// Gates KEP describes the model and leaves these open:
//
//  1. Duplicate or empty gate names, and (PerGate mode) names that make an
//     invalid taint key, are errors from Evaluate (ErrInvalidGates), not
//     gates reported as not ready: a gate list that cannot be evaluated is a
//     caller's mistake, and reporting it as a node state would hold the node
//     back over a typo without saying why.
//  2. An empty TaintKey means DefaultTaintKey. Keys in node.kubernetes.io/
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
// Condition rules follow kubernetes-sigs/node-readiness-controller at commit
// e5ff8d103234 (v0.5.0 and 14 later commits; conditionPolicy and anyOf came
// after v0.5.0, in kubernetes-sigs/node-readiness-controller#315):
//
//  5. ValidateRule checks one rule as the cluster does on create (CRD schema,
//     CEL rules, webhook validateSpec). Not checked: the webhook's cross-rule
//     check (validateTaintConflicts in
//     internal/webhook/nodereadinessgaterule_webhook.go, with
//     internal/webhook/selector_overlap.go), its NoExecute warnings
//     (generateNoExecuteWarnings), and the update-only immutability rules.
//  6. A completed bootstrap-only rule never touches the node again, as the
//     node reconciler does; the rule reconciler would remove a re-added taint
//     (see EvaluateRule for the functions involved).
