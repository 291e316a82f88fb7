package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/features"
)

// Input is everything [Decide] reads: the pod named in the request URL, the
// PodDisruptionBudgets of the cluster, the time of the request and the request
// itself. Pod and Now are required; every other field has a useful zero value (a
// plain eviction request with no delete options, no dry-run, and the upstream
// health rule).
type Input struct {
	// Pod is the pod to evict, as the API server has it (required, with a name).
	// It is not modified.
	Pod *v1.Pod

	// PDBs are the PodDisruptionBudgets the handler may read. Those of other
	// namespaces than the pod's are ignored, so a lister's whole list may be
	// passed. Entries must not be nil and must have a name; they are not
	// modified.
	PDBs []*policyv1.PodDisruptionBudget

	// Now is the time the API server handles the request (required). It becomes
	// the pod's entry in the PDB's status.disruptedPods, the lastTransitionTime
	// of a DisruptionAllowed condition the handler changes, and the
	// lastTransitionTime of the DisruptionTarget condition. A zero Now is an
	// input error.
	Now metav1.Time

	// Features selects version-dependent behaviour; its zero value is
	// Kubernetes v1.37.0. No behaviour of Decide depends on it yet: the field
	// is there so that callers pass the version the same way to every function
	// of the module.
	Features features.Set

	// EvictionName is metadata.name of the Eviction object in the request
	// body. The pod named in the URL is Pod; when this name differs the server
	// answers 400. Empty means Pod's name.
	EvictionName string

	// DeleteOptions is the Eviction object's deleteOptions (nil when the body
	// has none): dry-run, preconditions, grace period and so on. Its dryRun
	// values must be "All". It is not modified.
	DeleteOptions *metav1.DeleteOptions

	// DryRun is the request's dryRun query parameter (CreateOptions.DryRun).
	// The only value the API server accepts is metav1.DryRunAll ("All").
	DryRun []string

	// IsPodReady decides whether a pod is healthy. Nil means
	// [conditions.IsPodReady], the upstream rule. Pass another predicate only
	// for what-if analysis: the real server always uses the reported Ready
	// condition.
	IsPodReady func(*v1.Pod) bool

	// StrictUnknownPolicy makes an unrecognized unhealthyPodEvictionPolicy
	// value disallow the IfHealthyBudget shortcut for unhealthy pods, as the
	// policy/v1 API documentation asks of clients. False (the default) is
	// upstream parity: the server treats every value other than AlwaysAllow
	// like IfHealthyBudget. Validation keeps unknown values out of a real
	// server, so this matters only for objects built elsewhere.
	StrictUnknownPolicy bool
}

// BudgetInput is everything [ComputeStatus] reads: the PodDisruptionBudget, the
// pods of the cluster and the time of the sync. PDB and Now are required.
type BudgetInput struct {
	// PDB is the PodDisruptionBudget to sync (required). It is not modified.
	PDB *policyv1.PodDisruptionBudget

	// Pods are the pods the disruption controller lists. Pods of other
	// namespaces than the PDB's are ignored, so a lister's whole list may be
	// passed. Entries must not be nil; they are not modified.
	Pods []*v1.Pod

	// Now is the time of the sync (required). It decides which
	// status.disruptedPods entries have expired, and becomes the
	// lastTransitionTime of a DisruptionAllowed condition the sync changes. A
	// zero Now is an input error.
	Now metav1.Time

	// Features selects version-dependent behaviour; its zero value is
	// Kubernetes v1.37.0. No behaviour of ComputeStatus depends on it yet.
	Features features.Set

	// Scale resolves pods' controller references to workload scales; it is
	// needed for a percentage minAvailable and for any maxUnavailable. Nil
	// resolves nothing, so any managed pod makes such a sync fail (fail-safe,
	// with a SyncError wrapping [ErrNoScaleResolver]). [Workloads.Resolve]
	// implements the upstream finders.
	Scale ScaleResolver

	// IsPodReady decides whether a pod is healthy. Nil means
	// [conditions.IsPodReady], the upstream rule.
	IsPodReady func(*v1.Pod) bool
}

// StaleInput is everything [StaleDisruptionTarget] reads. Pod and Now are
// required.
type StaleInput struct {
	// Pod is the pod whose DisruptionTarget condition is checked (required). It
	// is not modified.
	Pod *v1.Pod

	// Now is the time of the check (required); a zero Now is an input error.
	Now metav1.Time

	// Features selects version-dependent behaviour; its zero value is
	// Kubernetes v1.37.0. No behaviour of StaleDisruptionTarget depends on it
	// yet.
	Features features.Set
}

// validateNow reports a zero now at path.
func validateNow(now metav1.Time, path *field.Path) field.ErrorList {
	if now.IsZero() {
		return field.ErrorList{field.Required(path, "the time of the request is required")}
	}
	return nil
}

// inputError wraps errs, if any, as the *podstatus.InputError of function fn
// about pod (nil: no pod to name).
func inputError(fn string, pod *v1.Pod, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	e := &podstatus.InputError{Errs: errs}
	if pod != nil && pod.Name != "" {
		e.Pod = pod.Namespace + "/" + pod.Name
	}
	return fmt.Errorf("eviction: %s: %w", fn, e)
}

// validateInput rejects input no API server request can produce.
func validateInput(in Input) error {
	p := field.NewPath("Input")
	var errs field.ErrorList
	switch {
	case in.Pod == nil:
		errs = append(errs, field.Required(p.Child("Pod"), ""))
	case in.Pod.Name == "":
		errs = append(errs, field.Required(p.Child("Pod", "Name"), ""))
	}
	for i, pdb := range in.PDBs {
		switch {
		case pdb == nil:
			errs = append(errs, field.Required(p.Child("PDBs").Index(i), ""))
		case pdb.Name == "":
			errs = append(errs, field.Required(p.Child("PDBs").Index(i).Child("Name"), ""))
		}
	}
	errs = append(errs, validateNow(in.Now, p.Child("Now"))...)
	errs = append(errs, validateDryRun(in.DryRun, p.Child("DryRun"))...)
	if in.DeleteOptions != nil {
		errs = append(errs, validateDryRun(in.DeleteOptions.DryRun, p.Child("DeleteOptions", "DryRun"))...)
	}
	return inputError("Decide", in.Pod, errs)
}

// validateDryRun checks that every dry-run value is the only one the API server
// accepts.
func validateDryRun(values []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, v := range values {
		if v != metav1.DryRunAll {
			errs = append(errs, field.NotSupported(path.Index(i), v, []string{metav1.DryRunAll}))
		}
	}
	return errs
}

// validateBudgetInput rejects a missing PDB, nil pods and a zero Now.
func validateBudgetInput(in BudgetInput) error {
	p := field.NewPath("BudgetInput")
	var errs field.ErrorList
	if in.PDB == nil {
		errs = append(errs, field.Required(p.Child("PDB"), ""))
	}
	for i, pod := range in.Pods {
		if pod == nil {
			errs = append(errs, field.Required(p.Child("Pods").Index(i), ""))
		}
	}
	errs = append(errs, validateNow(in.Now, p.Child("Now"))...)
	if len(errs) == 0 {
		return nil
	}
	err := &podstatus.InputError{Errs: errs}
	if in.PDB != nil {
		return fmt.Errorf("eviction: ComputeStatus: pdb %s/%s: %w", in.PDB.Namespace, in.PDB.Name, err)
	}
	return fmt.Errorf("eviction: ComputeStatus: %w", err)
}

// validateStaleInput rejects a missing pod and a zero Now.
func validateStaleInput(in StaleInput) error {
	p := field.NewPath("StaleInput")
	var errs field.ErrorList
	if in.Pod == nil {
		errs = append(errs, field.Required(p.Child("Pod"), ""))
	}
	errs = append(errs, validateNow(in.Now, p.Child("Now"))...)
	return inputError("StaleDisruptionTarget", in.Pod, errs)
}
