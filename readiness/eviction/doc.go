// Package eviction predicts what the Kubernetes API server's eviction subresource
// (POST pods/<name>/eviction) answers for one pod and the PodDisruptionBudgets in
// its namespace, and computes a PodDisruptionBudget's status the way the
// disruption controller does.
//
// EXPERIMENTAL: this package follows the eviction handler and the disruption
// controller of one Kubernetes release (v1.37.0), whose answers (messages,
// causes, status codes) are not part of any API guarantee and change between
// releases; its API may change in any release of this module, outside the
// module's compatibility promise.
//
// # Functions
//
// Every function is a pure function of one input struct ([Input], [BudgetInput],
// [StaleInput]) holding the objects it reads, the time (Now, required: nothing
// reads a clock), the Kubernetes version ([features.Set], whose zero value is
// v1.37.0; no behaviour depends on it yet) and optional knobs. Nothing is read
// from or written to a cluster, inputs are never modified, and no package-level
// state exists. Input the API server or the controller could never see (a nil
// pod, a zero Now, a dry-run value other than "All") is reported as a
// *[podstatus.InputError] matching [podstatus.ErrInvalidInput]; refusals and
// failed syncs are results, not errors.
//
// They implement KEP-3017 (the PDB's unhealthyPodEvictionPolicy, IfHealthyBudget
// and AlwaysAllow) together with the rest of the eviction handler's rules, byte
// for byte as Kubernetes v1.37.0 does:
//
//   - [Decide] follows pkg/registry/core/pod/storage/eviction.go
//     (EvictionREST.Create and checkAndDecrement): which PDBs select the pod,
//     whether the budget is checked at all, the exact metav1.Status the server
//     answers (HTTP code, reason, message, causes, Retry-After), the PDB status
//     the handler writes, the delete options it uses and the DisruptionTarget
//     condition it adds.
//   - [ComputeStatus] follows pkg/controller/disruption/disruption.go
//     (DisruptionController.trySync): currentHealthy, desiredHealthy,
//     expectedPods, disruptionsAllowed, the pruning of disruptedPods and the
//     fail-safe status on sync errors.
//   - [StaleDisruptionTarget] is the same controller's check of a
//     DisruptionTarget condition whose delete never happened.
//
// "Healthy" means the pod's first Ready condition is True
// ([conditions.IsPodReady]), as upstream. Callers whose readiness is computed
// elsewhere (for example by this module's readiness engine) pass their own
// predicate in the input, for what-if analysis.
//
// Where upstream retries against live state (conflicts on the pod or the PDB),
// a snapshot evaluator cannot: Decide reports what the server does with the
// snapshot it is given, which is the outcome of the first attempt.
//
// # Details of the handler that Decide follows
//
// These are easy to get wrong; each is checked against a live kube-apiserver
// v1.37.0 by the differential test in internal/upstream/eviction, and against
// upstream's own tests (pkg/registry/core/pod/storage/eviction_test.go and
// pkg/controller/disruption/disruption_test.go) by this package's tests.
//
//  1. The two 403 answers of checkAndDecrement (a negative disruptionsAllowed,
//     or disruptedPods over [MaxDisruptedPodSize]) carry a DisruptionBudget
//     cause: "The disruption budget <P> does not allow evicting pods currently:
//     ...".
//  2. The 429 for disruptionsAllowed == 0 has four cause texts, chosen from the
//     PDB's DisruptionAllowed condition: failed sync, then currentHealthy <=
//     desiredHealthy ("needs N healthy pods and has M currently"), then another
//     False condition with a message, then a generic text.
//  3. deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential is refused
//     with 422 Invalid before anything else.
//  4. The DisruptionTarget condition is written before every non-dry-run delete
//     (addConditionAndDeletePod), with no feature gate.
//  5. The "more than one PodDisruptionBudget" answer is a result object, but the
//     request finisher (k8s.io/apiserver
//     pkg/endpoints/handlers/finisher/finisher.go) turns a result Status that is
//     not Success into an error, so the HTTP status line is 500 like the body.
//  6. "Terminating" is !DeletionTimestamp.IsZero() in the handler (a non-nil
//     zero timestamp is not terminating), while the disruption controller tests
//     DeletionTimestamp != nil.
//  7. A caller precondition that fails in the store (always in dry-run; an empty
//     UID outside dry-run) is reported by rest.BeforeDelete, with the same
//     wording and the same resource name ("Pod") as the handler's own check,
//     not with a StorageError that embeds the etcd key.
package eviction
