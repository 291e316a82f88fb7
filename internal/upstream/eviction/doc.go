// Package eviction checks podstatus' eviction predictor, readiness/eviction.Decide,
// against the real eviction subresource of a kube-apiserver v1.37.0 (with etcd) started
// inside the test process by internal/upstream/apiserver.
//
// The test builds random, seeded cases. Each case gets its own namespace holding one pod
// and zero to three PodDisruptionBudgets:
//
//   - the pod is Pending, Running, Succeeded, Failed or Unknown, with or without a Ready
//     condition (True, False, Unknown) and a DisruptionTarget condition, written through
//     the pods/status subresource; some pods are terminating (a finalizer, then a delete,
//     so they stay with a deletionTimestamp); some are not bound to a node;
//   - each PDB has a selector (nil, {} matching everything, matchLabels,
//     matchExpressions), an unhealthyPodEvictionPolicy (nil, IfHealthyBudget,
//     AlwaysAllow), a generation bumped by spec updates, and a status written through the
//     poddisruptionbudgets/status subresource: observedGeneration equal to, behind or
//     ahead of the generation, disruptionsAllowed, currentHealthy, desiredHealthy,
//     expectedPods, disruptedPods of 0 to 2001 entries and a DisruptionAllowed condition
//     (SufficientPods, InsufficientPods, SyncFailed with or without a message, another
//     reason);
//   - the request is a plain eviction or carries delete options: dry-run in the query,
//     in the body, both, or conflicting; UID and resourceVersion preconditions that are
//     right, wrong or empty; a grace period; the forbidden
//     ignoreStoreReadErrorWithClusterBreakingPotential; or an Eviction whose name differs
//     from the pod's.
//
// No controller manager runs, so the disruption controller never rewrites the PDB status
// the test wrote. Just before the request the test reads the pod and the namespace's PDBs
// back from the server (plus a decoy PDB of another namespace that selects everything,
// which Decide must ignore) and asks Decide for its prediction. Then it checks, every
// time:
//
//   - the HTTP status line, the Retry-After header and the whole response body (a
//     metav1.Status: status, code, reason, message, details with causes and
//     retryAfterSeconds) against Decision.Status, whose code is also the status line and
//     whose retryAfterSeconds is also the Retry-After header;
//   - the error client-go returns against Decision.Err();
//   - the side effects: a pod Decide says is evicted is gone or terminating; the
//     DisruptionTarget condition Decide predicts is on the pod (with lastTransitionTime
//     kept or set to the request time); a pod Decide says is untouched keeps its
//     resourceVersion; the PDB status Decide says the handler writes (disruptionsAllowed
//     decremented, the pod recorded in disruptedPods, DisruptionAllowed=False when the
//     budget reaches 0) is the status on the server, and every other PDB keeps its
//     resourceVersion.
//
// Requests go through client-go's Evict where that is possible. client-go retries a 429
// that carries Retry-After (up to ten times, sleeping the advertised 10 s each time) and
// Evict cannot send the dryRun query parameter or a URL name that differs from the body's,
// so those requests are built with the same request chain as Evict plus MaxRetries(0).
// A transport wrapper records each response's status line, headers and body.
//
// Some PDBs cannot be written through the API: a negative status.disruptionsAllowed
// (policy/v1 status validation rejects it and policy/v1beta1 is no longer served), a
// selector that does not parse, an unknown unhealthyPodEvictionPolicy. The test stores
// those straight into etcd, as JSON, under the API server, which serves them as they are.
//
// What is not exercised: the handler's retries against concurrent writers (nothing else
// writes), and admission webhooks.
//
// The number of cases is 200, or PODSTATUS_EVICTION_CASES when that is larger; the seed
// is fixed unless PODSTATUS_EVICTION_SEED sets it. The test prints
// "eviction: N cases, M mismatches" with t.Logf and on standard output. Run it with
//
//	cd internal/upstream && go test -count=1 -v ./eviction/
//
// and never under -race (building kube-apiserver with the race detector takes too long).
package eviction
