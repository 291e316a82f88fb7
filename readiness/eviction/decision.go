package eviction

import (
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Path names the branch of the eviction handler a request took. It says why
// the answer is what it is; Decision.Allowed and Decision.Status say what it is.
type Path string

// The branches of the eviction handler, in the order it tries them.
const (
	// PathInvalidRequest: the request was refused before the pod was looked
	// at (name mismatch, forbidden delete option, conflicting dry-run values).
	PathInvalidRequest Path = "InvalidRequest"
	// PathPodStateIgnoresPDB: the pod is Pending, Succeeded, Failed or already
	// terminating, so it is deleted without reading any PDB.
	PathPodStateIgnoresPDB Path = "PodStateIgnoresPDB"
	// PathMultiplePDBs: more than one PDB selects the pod; the eviction
	// subresource refuses (500).
	PathMultiplePDBs Path = "MultiplePDBs"
	// PathNoPDB: no PDB selects the pod; it is deleted.
	PathNoPDB Path = "NoPDB"
	// PathUnhealthyAlwaysAllow: the pod is not healthy and its PDB's policy is
	// AlwaysAllow; it is deleted without touching the budget.
	PathUnhealthyAlwaysAllow Path = "UnhealthyAlwaysAllow"
	// PathUnhealthyIfHealthyBudget: the pod is not healthy and the PDB reports
	// currentHealthy >= desiredHealthy > 0; it is deleted without touching the
	// budget.
	PathUnhealthyIfHealthyBudget Path = "UnhealthyIfHealthyBudget"
	// PathPDBStale: the PDB's status.observedGeneration is behind its
	// generation (429, retry after 10 seconds).
	PathPDBStale Path = "PDBStale"
	// PathNegativeBudget: status.disruptionsAllowed is negative (403).
	PathNegativeBudget Path = "NegativeBudget"
	// PathDisruptedPodsOverflow: status.disruptedPods holds more than
	// [MaxDisruptedPodSize] entries (403).
	PathDisruptedPodsOverflow Path = "DisruptedPodsOverflow"
	// PathBudgetExhausted: status.disruptionsAllowed is 0 (429).
	PathBudgetExhausted Path = "BudgetExhausted"
	// PathBudgetAllowed: the budget allows one more disruption; it is
	// decremented and the pod is deleted.
	PathBudgetAllowed Path = "BudgetAllowed"
)

// Decision is what the API server does with one eviction request, predicted
// from a snapshot of the pod and the PDBs in its namespace.
type Decision struct {
	// Path is the branch of the handler that produced the answer.
	Path Path

	// Allowed reports whether the pod is deleted (or, in dry-run, would be):
	// Status.Status is Success.
	Allowed bool

	// Status is the response body exactly as the server sends it (kind
	// Status, apiVersion v1): status, code, reason, message and details
	// (causes, retryAfterSeconds, group/kind/name). Its code is also the
	// HTTP status line: 201 when the pod is evicted, otherwise the error code
	// client-go reports (400, 403, 409, 422, 429, 500), even for the "more
	// than one PodDisruptionBudget" answer, which the handler returns as a
	// result object (the request finisher of k8s.io/apiserver turns a result
	// Status that is not Success into an error). When
	// Status.Details.RetryAfterSeconds is positive the server also sends a
	// Retry-After header with that value.
	Status metav1.Status

	// MatchedPDBs are the names of every PDB that selects the pod, in input
	// order; the pod's budget is checked only when there is exactly one. It is
	// empty when the handler reads no PDB (PathInvalidRequest,
	// PathPodStateIgnoresPDB).
	MatchedPDBs []string

	// PDBStatus is the status the handler writes to the PDB with
	// UpdateStatus, or nil when it writes none. It is non-nil exactly when the
	// budget allowed a non-dry-run eviction: status.disruptionsAllowed is
	// decremented and the pod is recorded in status.disruptedPods at Now (and
	// DisruptionAllowed turns False when the budget reaches 0). It is still
	// written when a precondition then refuses the delete.
	PDBStatus *policyv1.PodDisruptionBudgetStatus

	// ResourceVersionPrecondition reports whether the handler made the delete
	// conditional on the pod's resourceVersion from the snapshot (Pending pods
	// without a caller precondition, and the two unhealthy-pod shortcuts). It
	// guards against the pod becoming healthy between the check and the
	// delete.
	ResourceVersionPrecondition bool

	// DeleteOptions are the options of the delete the handler issues, or nil
	// when it issues none.
	DeleteOptions *metav1.DeleteOptions

	// DisruptionTarget is the condition the handler writes to the pod before
	// deleting it, or nil when it writes none (dry-run, refused eviction, or a
	// precondition that fails).
	DisruptionTarget *v1.PodCondition

	// DryRun reports whether the request was a dry-run after merging the
	// query parameter with the body's delete options.
	DryRun bool
}

// Err returns the error client-go reports for this answer: nil when the pod is
// evicted, otherwise an *apierrors.StatusError carrying Status. As in
// client-go's error, whose Status is decoded without its type information,
// ErrStatus has empty kind and apiVersion.
func (d Decision) Err() error {
	if d.Status.Status == metav1.StatusSuccess {
		return nil
	}
	s := d.Status.DeepCopy()
	s.TypeMeta = metav1.TypeMeta{}
	return &apierrors.StatusError{ErrStatus: *s}
}
