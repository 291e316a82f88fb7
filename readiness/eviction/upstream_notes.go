package eviction

// Notes for maintainers: details of Kubernetes v1.37.0 that this package
// follows and that are easy to get wrong. The handler is
// pkg/registry/core/pod/storage/eviction.go (EvictionREST.Create and
// checkAndDecrement), the controller pkg/controller/disruption/disruption.go
// (DisruptionController.trySync); their tests are in
// pkg/registry/core/pod/storage/eviction_test.go (TestEvictionWithETCD,
// TestEviction, TestEvictionWithDeleteOptions, TestEvictionPDBStatus,
// TestAddConditionAndDelete) and pkg/controller/disruption/disruption_test.go.
//
//  1. The two 403 answers of checkAndDecrement (a negative
//     disruptionsAllowed, or disruptedPods over MaxDisruptedPodSize) carry a
//     DisruptionBudget cause: "The disruption budget <P> does not allow
//     evicting pods currently: ...". See forbiddenBudget.
//  2. The 429 for disruptionsAllowed == 0 has four cause texts, chosen from
//     the PDB's DisruptionAllowed condition: failed sync, then
//     currentHealthy <= desiredHealthy ("needs N healthy pods and has M
//     currently"), then another False condition with a message, then a
//     generic text. See budgetExhausted.
//  3. deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential is
//     refused with 422 Invalid before anything else.
//  4. The DisruptionTarget condition is written before every non-dry-run
//     delete (addConditionAndDeletePod), with no feature gate.
//  5. The "more than one PodDisruptionBudget" answer is a result object, but
//     the request finisher (k8s.io/apiserver
//     pkg/endpoints/handlers/finisher/finisher.go) turns a result Status that
//     is not Success into an error, so the status line is 500 like the body;
//     a live v1.37.0 server answers 500 (internal/upstream/eviction).
//  6. "Terminating" is !DeletionTimestamp.IsZero() in the handler (a non-nil
//     zero timestamp is not terminating), while the disruption controller
//     tests DeletionTimestamp != nil.
//
// Checked against a live v1.37.0 server (internal/upstream/eviction): a caller
// precondition that fails in the store (always in dry-run; an empty UID
// outside dry-run) is reported by rest.BeforeDelete, with the same wording
// and the same resource name ("Pod") as the handler's own check, not with a
// StorageError that embeds the etcd key.
