// Package eviction predicts what the Kubernetes API server's eviction subresource
// (POST pods/<name>/eviction) answers for one pod and the PodDisruptionBudgets in
// its namespace, and computes a PodDisruptionBudget's status the way the
// disruption controller does.
//
// Both halves are pure functions of their inputs. Each takes one options
// struct ([Options], [BudgetOptions]) whose Now field is the time of the
// request or sync: nothing reads a clock, nothing is read from or written to a
// cluster, and no package-level state exists. They implement KEP-3017 (the PDB's unhealthyPodEvictionPolicy,
// IfHealthyBudget and AlwaysAllow) together with the rest of the eviction
// handler's rules, byte for byte as Kubernetes v1.37.0 does:
//
//   - [Decide] follows pkg/registry/core/pod/storage/eviction.go: which PDBs
//     select the pod, whether the budget is checked at all, the exact
//     metav1.Status the server answers (HTTP code, reason, message, causes,
//     Retry-After), the PDB status the handler writes, the delete options it
//     uses and the DisruptionTarget condition it adds.
//   - [ComputeStatus] follows pkg/controller/disruption/disruption.go:
//     currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed, the
//     pruning of disruptedPods and the fail-safe status on sync errors.
//
// "Healthy" means the pod's first Ready condition is True
// ([conditions.IsPodReady]), as upstream. Callers whose readiness is computed elsewhere (for example by this
// module's readiness engine) pass their own predicate in the options.
//
// Where upstream retries against live state (conflicts on the pod or the PDB),
// a snapshot evaluator cannot: Decide reports what the server does with the
// snapshot it is given, which is the outcome of the first attempt.
package eviction
