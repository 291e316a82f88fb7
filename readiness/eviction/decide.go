package eviction

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/podstatus/podstatus/internal/accept"
)

// Decide predicts the eviction subresource's answer for in.Pod, given the
// PDBs in its namespace (PDBs of other namespaces are ignored, as upstream
// does) and the request described by in. The rules, in order, are those of
// EvictionREST.Create in Kubernetes v1.37.0
// (pkg/registry/core/pod/storage/eviction.go):
//
//  1. request checks: body name vs URL name (400), the forbidden
//     ignoreStoreReadErrorWithClusterBreakingPotential delete option (422),
//     conflicting dry-run values in query and body (500);
//  2. a Pending, Succeeded, Failed or terminating pod is deleted without
//     reading PDBs (Pending pods conditionally on their resourceVersion);
//  3. PDBs whose selector matches the pod's labels are collected (a nil
//     selector matches nothing, {} matches everything, an invalid selector
//     silently matches nothing); two or more → 500, none → delete;
//  4. with exactly one PDB, an unhealthy pod skips the budget when the policy
//     is AlwaysAllow, or when currentHealthy >= desiredHealthy > 0;
//  5. otherwise the budget is checked: stale observedGeneration (429),
//     negative disruptionsAllowed (403), more than [MaxDisruptedPodSize]
//     disruptedPods (403), no disruptions left (429), else decrement, record
//     the pod in disruptedPods (not in dry-run) and delete.
//
// Every delete (outside dry-run) first writes the DisruptionTarget condition
// and checks the caller's UID/resourceVersion preconditions against the pod,
// which can turn the answer into 409 Conflict (or into 429 after an
// unhealthy-pod shortcut without a caller resourceVersion).
//
// The error is non-nil only for input the server could never see (a nil or
// unnamed pod, a nil or unnamed PDB, a zero Now, a dry-run value other than
// "All"): a *[podstatus.InputError], matching [podstatus.ErrInvalidInput],
// whose field paths start at Input ("Input.PDBs[1].Name"). Refusals are
// answers, not errors: see [Decision.Err].
func Decide(in Input) (Decision, error) {
	if err := validateInput(in); err != nil {
		return Decision{}, err
	}
	pod := in.Pod
	d := Decision{}
	evictionName := in.EvictionName
	if evictionName == "" {
		evictionName = pod.Name
	}

	// Request checks, before the pod is read.
	if evictionName != pod.Name {
		return refuse(d, PathInvalidRequest, apierrors.NewBadRequest(MessageNameMismatch)), nil
	}
	if in.DeleteOptions != nil && in.DeleteOptions.IgnoreStoreReadErrorWithClusterBreakingPotential != nil &&
		*in.DeleteOptions.IgnoreStoreReadErrorWithClusterBreakingPotential {
		return refuse(d, PathInvalidRequest, ignoreStoreReadErrorInvalid(pod.Name)), nil
	}
	deleteOpts, err := mergeDryRun(in.DeleteOptions, in.DryRun)
	if err != nil {
		d.Path = PathInvalidRequest
		d.Status = internalUnknown(err.Error())
		return d, nil
	}
	d.DryRun = len(deleteOpts.DryRun) > 0
	callerRV := deleteOpts.Preconditions != nil && deleteOpts.Preconditions.ResourceVersion != nil

	// Pods whose state makes the PDB irrelevant.
	if podStateIgnoresPDB(pod) {
		d.Path = PathPodStateIgnoresPDB
		del := deleteOpts
		if enforceResourceVersion(pod) && !callerRV {
			del = withResourceVersion(deleteOpts, pod.ResourceVersion)
			d.ResourceVersionPrecondition = true
		}
		return deletePod(d, pod, del, in.Now, ""), nil
	}

	// PDBs that select the pod.
	var pdb *policyv1.PodDisruptionBudget
	for _, p := range in.PDBs {
		if selects(p, pod) {
			d.MatchedPDBs = append(d.MatchedPDBs, p.Name)
			if pdb == nil {
				pdb = p
			}
		}
	}
	switch len(d.MatchedPDBs) {
	case 0:
		d.Path = PathNoPDB
		return deletePod(d, pod, deleteOpts, in.Now, ""), nil
	case 1:
	default:
		d.Path = PathMultiplePDBs
		// The handler returns this as a result object, not an error, but the
		// request finisher turns a result Status that is not Success into an
		// error, so the status line is the body's 500 too.
		d.Status = withStatusTypeMeta(metav1.Status{
			Status:  metav1.StatusFailure,
			Message: MessageMultiplePDBs,
			Code:    http.StatusInternalServerError,
		})
		return d, nil
	}

	// Unhealthy pods may bypass the budget (KEP-3017).
	if !readyFunc(in.IsPodReady)(pod) {
		if path, skip := unhealthyShortcut(pdb, in.StrictUnknownPolicy); skip {
			d.Path = path
			d.ResourceVersionPrecondition = true
			// The snapshot's resourceVersion replaces any the caller gave.
			del := withResourceVersion(deleteOpts, pod.ResourceVersion)
			return deletePod(d, pod, del, in.Now, conflictBecomes429(pdb.Name, callerRV)), nil
		}
	}

	// The budget check (checkAndDecrement).
	path, refusal, status := checkBudget(pdb, pod.Name, d.DryRun, in.Now)
	d.Path = path
	if refusal != nil {
		return refuse(d, path, refusal), nil
	}
	d.PDBStatus = status
	return deletePod(d, pod, deleteOpts, in.Now, ""), nil
}

// mergeDryRun is propagateDryRun: the body's delete options take the query's
// dry-run value when they have none; both set and different is an error.
// The result aliases neither body nor query.
func mergeDryRun(body *metav1.DeleteOptions, query []string) (*metav1.DeleteOptions, error) {
	if body == nil {
		return &metav1.DeleteOptions{DryRun: slices.Clone(query)}, nil
	}
	out := body.DeepCopy()
	if len(out.DryRun) == 0 {
		out.DryRun = slices.Clone(query)
		return out, nil
	}
	if len(query) == 0 {
		return out, nil
	}
	if !reflect.DeepEqual(query, out.DryRun) {
		//lint:ignore ST1005 upstream's exact text (propagateDryRun in pkg/registry/core/pod/storage/eviction.go), which the server answers in its 400
		return nil, fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", query, out.DryRun)
	}
	return out, nil
}

// podStateIgnoresPDB is canIgnorePDB. Note the terminating test is
// DeletionTimestamp.IsZero(), so a non-nil zero timestamp is not terminating.
func podStateIgnoresPDB(pod *v1.Pod) bool {
	return accept.Terminal(pod.Status.Phase) || pod.Status.Phase == v1.PodPending || !pod.DeletionTimestamp.IsZero()
}

// enforceResourceVersion is shouldEnforceResourceVersion: every pod that is
// neither terminal nor terminating (in practice Pending pods).
func enforceResourceVersion(pod *v1.Pod) bool {
	return !accept.Terminal(pod.Status.Phase) && pod.DeletionTimestamp.IsZero()
}

// withResourceVersion returns a copy of o whose precondition resourceVersion is rv.
func withResourceVersion(o *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	out := o.DeepCopy()
	if out.Preconditions == nil {
		out.Preconditions = &metav1.Preconditions{}
	}
	out.Preconditions.ResourceVersion = &rv
	return out
}

// selects reports whether pdb guards pod in the eviction handler's eyes: same
// namespace and a selector that parses and matches the pod's labels.
func selects(pdb *policyv1.PodDisruptionBudget, pod *v1.Pod) bool {
	if pdb.Namespace != pod.Namespace {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(pod.Labels))
}

// unhealthyShortcut reports whether an unhealthy pod skips the budget, and on
// which path.
func unhealthyShortcut(pdb *policyv1.PodDisruptionBudget, strict bool) (Path, bool) {
	policy := pdb.Spec.UnhealthyPodEvictionPolicy
	if policy != nil && *policy == policyv1.AlwaysAllow {
		return PathUnhealthyAlwaysAllow, true
	}
	if strict && policy != nil && *policy != policyv1.IfHealthyBudget {
		return "", false
	}
	if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
		return PathUnhealthyIfHealthyBudget, true
	}
	return "", false
}

// checkBudget is checkAndDecrement on a snapshot. It returns the path, the
// refusal if any, and the status the handler writes on success (nil in
// dry-run, where nothing is written).
func checkBudget(pdb *policyv1.PodDisruptionBudget, podName string, dryRun bool, now metav1.Time) (Path, *apierrors.StatusError, *policyv1.PodDisruptionBudgetStatus) {
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return PathPDBStale, stillProcessing(pdb.Name), nil
	case pdb.Status.DisruptionsAllowed < 0:
		return PathNegativeBudget, forbiddenBudget(pdb.Name, "pdb disruptions allowed is negative", "pdb disruptions allowed is negative"), nil
	case len(pdb.Status.DisruptedPods) > MaxDisruptedPodSize:
		return PathDisruptedPodsOverflow, forbiddenBudget(pdb.Name,
			"DisruptedPods map too big - too many evictions not confirmed by PDB controller",
			"too many pending evictions not confirmed by PDB controller"), nil
	case pdb.Status.DisruptionsAllowed == 0:
		return PathBudgetExhausted, budgetExhausted(pdb), nil
	}
	if dryRun {
		return PathBudgetAllowed, nil, nil
	}
	status := pdb.Status.DeepCopy()
	status.DisruptionsAllowed--
	if status.DisruptionsAllowed == 0 {
		updateDisruptionAllowed(status, now)
	}
	if status.DisruptedPods == nil {
		status.DisruptedPods = map[string]metav1.Time{}
	}
	status.DisruptedPods[podName] = now
	return PathBudgetAllowed, nil, status
}

// conflictBecomes429 returns the PDB name whose "still being processed" 429
// replaces a delete conflict, or "" when conflicts pass through: only after an
// unhealthy-pod shortcut and only if the caller gave no resourceVersion.
func conflictBecomes429(pdbName string, callerRV bool) string {
	if callerRV {
		return ""
	}
	return pdbName
}

// deletePod is addConditionAndDeletePod against the snapshot: outside dry-run
// the handler re-reads the pod, checks the UID and resourceVersion
// preconditions, writes DisruptionTarget and deletes with the bumped
// resourceVersion; in dry-run only the store's precondition check runs. A
// conflict becomes the 429 of conflictTo429 when that is non-empty.
func deletePod(d Decision, pod *v1.Pod, del *metav1.DeleteOptions, now metav1.Time, conflictTo429 string) Decision {
	d.DeleteOptions = del
	var conflict *apierrors.StatusError
	if d.DryRun {
		conflict = storePreconditionConflict(pod, del.Preconditions, true)
	} else {
		conflict = handlerPreconditionConflict(pod, del.Preconditions)
		if conflict == nil {
			// The resourceVersion precondition, if any, was bumped to the
			// version the condition update produced, so only the UID is
			// checked again by the store.
			// The condition update succeeded, so the condition is written
			// even if the store's delete then refuses.
			d.DisruptionTarget = disruptionTargetFor(pod, now)
			conflict = storePreconditionConflict(pod, del.Preconditions, false)
		}
	}
	if conflict != nil {
		if conflictTo429 != "" {
			return refuse(d, d.Path, stillProcessing(conflictTo429))
		}
		return refuse(d, d.Path, conflict)
	}
	d.Allowed = true
	d.Status = successStatus()
	return d
}

// handlerPreconditionConflict is getLatestPod's check in
// addConditionAndDeletePod: empty precondition values are ignored.
func handlerPreconditionConflict(pod *v1.Pod, p *metav1.Preconditions) *apierrors.StatusError {
	if p == nil {
		return nil
	}
	gr := podResource
	if p.UID != nil && len(*p.UID) > 0 && *p.UID != pod.UID {
		return apierrors.NewConflict(gr, pod.Name, fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, pod.UID))
	}
	if p.ResourceVersion != nil && len(*p.ResourceVersion) > 0 && *p.ResourceVersion != pod.ResourceVersion {
		return apierrors.NewConflict(gr, pod.Name, fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, pod.ResourceVersion))
	}
	return nil
}

// storePreconditionConflict is the generic store's early precondition check
// on delete (rest.BeforeDelete, which runs before storage is touched): values
// are compared even when empty, and the resource is named by the pod's kind.
func storePreconditionConflict(pod *v1.Pod, p *metav1.Preconditions, checkRV bool) *apierrors.StatusError {
	if p == nil {
		return nil
	}
	switch {
	case p.UID != nil && *p.UID != pod.UID:
		return apierrors.NewConflict(podResource, pod.Name, fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, pod.UID))
	case checkRV && p.ResourceVersion != nil && *p.ResourceVersion != pod.ResourceVersion:
		return apierrors.NewConflict(podResource, pod.Name, fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, pod.ResourceVersion))
	}
	return nil
}

// podResource is how both the handler's own precondition check and the
// store's name pods in 409 messages: by kind ("Pod"), not by resource.
var podResource = schema.GroupResource{Group: "", Resource: "Pod"}

// refuse records a refusal.
func refuse(d Decision, path Path, err *apierrors.StatusError) Decision {
	d.Path = path
	d.Allowed = false
	d.Status = withStatusTypeMeta(err.ErrStatus)
	return d
}
