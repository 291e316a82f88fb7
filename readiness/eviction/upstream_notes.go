package eviction

// Notes for maintainers: where the project's reference document
// (shared/reference/eviction-node.md, written against roughly v1.31-v1.32)
// and the Kubernetes v1.37.0 source disagree, this package follows v1.37.0:
//
//  1. The two 403 answers (negative disruptionsAllowed, disruptedPods over
//     MaxDisruptedPodSize) carry a DisruptionBudget cause in v1.37.0
//     ("The disruption budget <P> does not allow evicting pods currently: ...");
//     the reference lists none. See forbiddenBudget.
//  2. The 429 for disruptionsAllowed == 0 has four cause texts in v1.37.0,
//     chosen from the PDB's DisruptionAllowed condition (failed sync, then
//     currentHealthy <= desiredHealthy, then another False condition with a
//     message, then a generic text); the reference knows only "needs N
//     healthy pods and has M currently". See budgetExhausted.
//  3. v1.37.0 refuses deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential
//     with 422 Invalid before anything else; the reference has no such rule.
//  4. The DisruptionTarget condition is written before every non-dry-run
//     delete, with no feature gate (the reference marked this UNVERIFIED).
//  5. The "more than one PodDisruptionBudget" answer is a result object, but
//     the request finisher (k8s.io/apiserver v0.37.0 handlers/finisher) turns a
//     result Status that is not Success into an error, so the status line is
//     500 like the body. The reference left this UNVERIFIED; a live v1.37.0
//     server answers 500 (internal/upstream/eviction).
//  6. "Terminating" is !DeletionTimestamp.IsZero() in the handler (a non-nil
//     zero timestamp is not terminating), while the disruption controller
//     tests DeletionTimestamp != nil; the reference says != nil for both.
//  7. Upstream test names moved: the reference's TestEviction (etcd) is
//     TestEvictionWithETCD, its TestEvictionIgnorePDB is TestEviction, its
//     TestEvictionDryRun is TestEvictionWithDeleteOptions; v1.37.0 adds the
//     SyncFailed, negative-budget, overflow and condition-reason cases.
//
// Checked against a live v1.37.0 server (internal/upstream/eviction): a caller
// precondition that fails in the store (always in dry-run; an empty UID
// outside dry-run) is reported by rest.BeforeDelete, with the same wording
// and the same resource name ("Pod") as the handler's own check, not with a
// StorageError that embeds the etcd key.
