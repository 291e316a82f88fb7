package eviction

import (
	"errors"
	"fmt"
	"net/http"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxDisruptedPodSize is the largest status.disruptedPods the eviction handler
// accepts: with more entries (evictions the disruption controller has not yet
// confirmed) it refuses with 403. Exactly this many is still accepted.
const MaxDisruptedPodSize = 2000

// MessageViolatesBudget is the message of every 429 answer: the eviction would
// violate the pod's disruption budget. The cause in the details says why.
const MessageViolatesBudget = "Cannot evict pod as it would violate the pod's disruption budget."

// MessageMultiplePDBs is the message of the 500 answer for a pod that more than
// one PodDisruptionBudget selects.
const MessageMultiplePDBs = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."

// MessageNameMismatch is the message of the 400 answer when the name in the URL
// differs from the Eviction object's name.
const MessageNameMismatch = "name in URL does not match name in Eviction object"

// The DisruptionTarget condition the eviction handler writes before deleting.
const (
	// ReasonEvictionByEvictionAPI is the DisruptionTarget condition's reason.
	ReasonEvictionByEvictionAPI = "EvictionByEvictionAPI"
	// MessageEvicting is the DisruptionTarget condition's message.
	MessageEvicting = "Eviction API: evicting"
)

// pdbResource is how the handler names PDBs in its 403 answers
// (policy.Resource("poddisruptionbudget"), singular).
var pdbResource = schema.GroupResource{Group: policyv1.GroupName, Resource: "poddisruptionbudget"}

// evictionKind is the kind named by a 422 answer.
var evictionKind = schema.GroupKind{Group: policyv1.GroupName, Kind: "Eviction"}

// withStatusTypeMeta sets kind and apiVersion as the API server does when it
// serializes a Status.
func withStatusTypeMeta(s metav1.Status) metav1.Status {
	s.Kind = "Status"
	s.APIVersion = "v1"
	return s
}

// successStatus is the body of a successful eviction: the handler returns
// Status{status: Success} and the create handler fills in code 201.
func successStatus() metav1.Status {
	return withStatusTypeMeta(metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

// stillProcessing is the 429 for a stale PDB status, and for a delete that
// conflicted after an unhealthy-pod shortcut.
func stillProcessing(pdbName string) *apierrors.StatusError {
	err := apierrors.NewTooManyRequests(MessageViolatesBudget, 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName),
	})
	return err
}

// forbiddenBudget is a 403 naming the PDB, with a DisruptionBudget cause.
// v1.37.0 adds the cause; older servers sent the 403 without one.
func forbiddenBudget(pdbName, problem, causeDetail string) *apierrors.StatusError {
	err := apierrors.NewForbidden(pdbResource, pdbName, errors.New(problem))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", pdbName, causeDetail),
	})
	return err
}

// budgetExhausted is the 429 for disruptionsAllowed == 0. Its cause depends on
// the PDB's DisruptionAllowed condition and counts, in this order (v1.37.0):
// a failed sync, then too few healthy pods, then any other False condition
// with a message, then a generic text.
func budgetExhausted(pdb *policyv1.PodDisruptionBudget) *apierrors.StatusError {
	err := apierrors.NewTooManyRequests(MessageViolatesBudget, 0)
	cond := findCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	var msg string
	switch {
	case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "" && cond.Reason == policyv1.SyncFailedReason:
		msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, cond.Message)
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		msg = fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
	case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "":
		msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, cond.Reason, cond.Message)
	default:
		msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
	}
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: msg,
	})
	return err
}

// ignoreStoreReadErrorInvalid is the 422 for deleteOptions that set
// ignoreStoreReadErrorWithClusterBreakingPotential, which eviction refuses.
func ignoreStoreReadErrorInvalid(name string) *apierrors.StatusError {
	return apierrors.NewInvalid(evictionKind, name, field.ErrorList{
		field.Invalid(field.NewPath("deleteOptions").Child("ignoreStoreReadErrorWithClusterBreakingPotential"),
			true, "can not be set for pod eviction, try after removing the option"),
	})
}

// internalUnknown is how the API server serves an error that is not an API
// status: 500, reason Unknown, the error text as message.
func internalUnknown(msg string) metav1.Status {
	return withStatusTypeMeta(metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Reason:  metav1.StatusReasonUnknown,
		Message: msg,
	})
}
