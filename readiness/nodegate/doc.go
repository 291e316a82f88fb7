// Package nodegate evaluates node readiness gates: whether a node may accept
// workloads, given the pods or the node conditions its gates name, and which
// taints to add to or remove from the node so the scheduler agrees.
//
// Two models are offered, both as pure functions (no client, no clock, no
// package-level state):
//
//   - Pod-selector gates ([Evaluate]), the 2019 "Node Readiness Gates" KEP
//     model: each [Gate] selects pods by label and namespace; a gate is ready
//     when at least one pod bound to the node matches and every matching pod
//     is ready; the node is ready when every blocking gate is. The evaluator
//     owns one taint key (by default [DefaultTaintKey]) or one key prefix, and
//     never touches any other taint. Invalid or empty selectors fail closed.
//   - Condition rules ([EvaluateRule], [DryRun], [ValidateRule]), compatible
//     with kubernetes-sigs/node-readiness-controller's NodeReadinessRule
//     (api/v1alpha1, at commit e5ff8d103234: v0.5.0 plus the conditionPolicy
//     field of kubernetes-sigs/node-readiness-controller#315, which no tag
//     has yet) and with KEP-5233: all-of / any-of node conditions with a
//     default status for missing ones, one taint per rule, bootstrap-only or
//     continuous enforcement, and dry-run counters. [ValidateRule] gives the
//     verdict and the field paths the cluster gives on create.
//
// The evaluators never use node.kubernetes.io/not-ready or any other key the
// node lifecycle controller manages: it would remove such a taint from a node
// whose Ready condition is True.
package nodegate
