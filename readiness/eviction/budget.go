package eviction

import (
	"errors"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DeletionTimeout is how long a pod stays in a PDB's status.disruptedPods
// after the eviction handler recorded it. Until then the pod does not count as
// healthy; after it, the disruption controller drops the entry (the pod was
// expected to be deleted but was not).
const DeletionTimeout = 2 * time.Minute

// Event is an event the disruption controller records during a sync.
type Event struct {
	// Object is "pdb" for events on the PodDisruptionBudget, or the pod's
	// name for events on a pod.
	Object string
	// Type is v1.EventTypeNormal or v1.EventTypeWarning.
	Type string
	// Reason and Message are the event's reason and message, as upstream.
	Reason, Message string
}

// BudgetResult is the outcome of one disruption-controller sync of a PDB.
type BudgetResult struct {
	// Status is the PDB's status after the sync: the computed status, the
	// unchanged input status when the controller skips the write, or the
	// fail-safe status when the sync failed.
	Status policyv1.PodDisruptionBudgetStatus

	// Write reports whether the controller calls UpdateStatus.
	Write bool

	// SyncError is the error that made the sync fail (invalid selector,
	// invalid intOrString, unresolvable controller). The fail-safe status then
	// has disruptionsAllowed 0 and a DisruptionAllowed=False/SyncFailed
	// condition carrying this error's text.
	SyncError error

	// SelectedPods are the names of the pods the selector selected, sorted.
	SelectedPods []string

	// UnmanagedPods are selected pods without a controller, which
	// percentages and maxUnavailable cannot account for (in input order).
	UnmanagedPods []string

	// RecheckAt is when the earliest kept disruptedPods entry expires, so the
	// controller syncs again; nil when no entry is kept.
	RecheckAt *metav1.Time

	// Events are the events the controller records, in order.
	Events []Event
}

// ComputeStatus computes the status the disruption controller gives in.PDB,
// from the pods in the cluster (pods of other namespaces are ignored; all
// phases count as selected), at time in.Now. It follows
// DisruptionController.trySync in Kubernetes v1.37.0
// (pkg/controller/disruption/disruption.go):
//
//   - selection: the PDB's selector (nil selects nothing, {} everything);
//   - expectedPods and desiredHealthy: maxUnavailable (scale of the owners,
//     percentage rounded up, desired = max(0, expected - maxUnavailable)),
//     else an integer minAvailable (desired = it, expected = every selected
//     pod, terminating and terminal included), else a percentage minAvailable
//     (scale of the owners, rounded up), else both 0;
//   - disruptedPods: entries for selected pods that are not terminating and
//     whose time + [DeletionTimeout] is not before now are kept;
//   - currentHealthy: selected pods that are not terminating, not in
//     disruptedPods (unexpired), and healthy;
//   - disruptionsAllowed = currentHealthy - desiredHealthy, 0 when that is
//     negative or expectedPods is 0.
//
// A sync error (invalid selector, bad intOrString, unresolvable controller)
// yields the fail-safe status and BudgetResult.SyncError, never an error. The
// error return is only for input no controller could sync (a nil PDB, a nil
// pod, a zero Now): a *[podstatus.InputError], matching
// [podstatus.ErrInvalidInput], whose field paths start at BudgetInput
// ("BudgetInput.Pods[3]").
func ComputeStatus(in BudgetInput) (BudgetResult, error) {
	if err := validateBudgetInput(in); err != nil {
		return BudgetResult{}, err
	}
	pdb, now := in.PDB, in.Now
	var res BudgetResult
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		res.Events = append(res.Events, Event{Object: "pdb", Type: v1.EventTypeWarning, Reason: "NoPods", Message: fmt.Sprintf("Failed to get pods: %v", err)})
		return failSafe(res, pdb, err, now), nil
	}
	var selected []*v1.Pod
	for _, p := range in.Pods {
		if p.Namespace == pdb.Namespace && sel.Matches(labels.Set(p.Labels)) {
			selected = append(selected, p)
			res.SelectedPods = append(res.SelectedPods, p.Name)
		}
	}
	sort.Strings(res.SelectedPods)
	if len(selected) == 0 {
		res.Events = append(res.Events, Event{Object: "pdb", Type: v1.EventTypeNormal, Reason: "NoPods", Message: "No matching pods found"})
	}

	expected, desired, unmanaged, err := expectedAndDesired(pdb, selected, in.Scale)
	res.UnmanagedPods = unmanaged
	if err != nil {
		res.Events = append(res.Events, Event{Object: "pdb", Type: v1.EventTypeWarning, Reason: "CalculateExpectedPodCountFailed",
			Message: fmt.Sprintf("Failed to calculate the number of expected pods: %v", err)})
		return failSafe(res, pdb, err, now), nil
	}
	if len(unmanaged) > 0 {
		res.Events = append(res.Events, Event{Object: "pdb", Type: v1.EventTypeWarning, Reason: "UnmanagedPods",
			Message: fmt.Sprintf("Pods selected by this PodDisruptionBudget (selector: %v) were found "+
				"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
				"To account for these pods please set \".spec.minAvailable\" "+
				"field of the PDB to an integer value.", pdb.Spec.Selector)})
	}

	disrupted, recheck, notDeleted := pruneDisruptedPods(pdb, selected, now.Time)
	for _, name := range notDeleted {
		// Upstream prints the PDB's namespace twice (not its name); kept for parity.
		res.Events = append(res.Events, Event{Object: name, Type: v1.EventTypeWarning, Reason: "NotDeleted",
			Message: fmt.Sprintf("Pod was expected by PDB %s/%s to be deleted but it wasn't", pdb.Namespace, pdb.Namespace)})
	}
	if recheck != nil {
		t := metav1.NewTime(*recheck)
		res.RecheckAt = &t
	}
	healthy := countHealthy(selected, disrupted, now.Time, readyFunc(in.IsPodReady))

	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}

	if pdb.Status.CurrentHealthy == healthy &&
		pdb.Status.DesiredHealthy == desired &&
		pdb.Status.ExpectedPods == expected &&
		pdb.Status.DisruptionsAllowed == allowed &&
		sameDisruptedPods(pdb.Status.DisruptedPods, disrupted) &&
		pdb.Status.ObservedGeneration == pdb.Generation &&
		conditionsUpToDate(pdb) {
		res.Status = *pdb.Status.DeepCopy()
		return res, nil
	}
	res.Write = true
	res.Status = policyv1.PodDisruptionBudgetStatus{
		CurrentHealthy:     healthy,
		DesiredHealthy:     desired,
		ExpectedPods:       expected,
		DisruptionsAllowed: allowed,
		DisruptedPods:      disrupted,
		ObservedGeneration: pdb.Generation,
		Conditions:         append([]metav1.Condition(nil), pdb.Status.Conditions...),
	}
	updateDisruptionAllowed(&res.Status, now)
	return res, nil
}

// failSafe is the status the controller writes when a sync fails: the old
// status with disruptionsAllowed 0 and DisruptionAllowed=False/SyncFailed
// (observedGeneration is not bumped).
func failSafe(res BudgetResult, pdb *policyv1.PodDisruptionBudget, err error, now metav1.Time) BudgetResult {
	res.SyncError = err
	res.Write = true
	res.Status = *pdb.Status.DeepCopy()
	res.Status.DisruptionsAllowed = 0
	res.Status.Conditions = setCondition(res.Status.Conditions, metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             policyv1.SyncFailedReason,
		Message:            err.Error(),
		ObservedGeneration: res.Status.ObservedGeneration,
	}, now)
	return res
}

// expectedAndDesired is getExpectedPodCount.
func expectedAndDesired(pdb *policyv1.PodDisruptionBudget, pods []*v1.Pod, scale ScaleResolver) (expected, desired int32, unmanaged []string, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		expected, unmanaged, err = expectedScale(pods, scale)
		if err != nil {
			return 0, 0, unmanaged, err
		}
		mu, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, unmanaged, err
		}
		desired = expected - int32(mu)
		if desired < 0 {
			desired = 0
		}
		return expected, desired, unmanaged, nil
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		return int32(len(pods)), pdb.Spec.MinAvailable.IntVal, nil, nil
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.String:
		expected, unmanaged, err = expectedScale(pods, scale)
		if err != nil {
			return 0, 0, unmanaged, err
		}
		ma, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, 0, unmanaged, err
		}
		return expected, int32(ma), unmanaged, nil
	}
	return 0, 0, nil, nil
}

// ErrNoScaleResolver is wrapped by BudgetResult.SyncError when a managed pod
// needed a scale but BudgetInput.Scale was nil. The error's text stays
// upstream's ("found no controllers for pod ...").
var ErrNoScaleResolver = errors.New("no ScaleResolver in BudgetInput")

// noControllerError is upstream's "found no controllers" error; it unwraps to
// ErrNoScaleResolver when no resolver was configured.
type noControllerError struct {
	pod        string
	noResolver bool
}

func (e *noControllerError) Error() string {
	return fmt.Sprintf("found no controllers for pod %q", e.pod)
}

func (e *noControllerError) Unwrap() error {
	if e.noResolver {
		return ErrNoScaleResolver
	}
	return nil
}

// expectedScale is getExpectedScale: the sum of the distinct controllers'
// scales; pods without a controller are reported, not counted.
func expectedScale(pods []*v1.Pod, scale ScaleResolver) (int32, []string, error) {
	var unmanaged []string
	scales := map[types.UID]int32{}
	for _, pod := range pods {
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			unmanaged = append(unmanaged, pod.Name)
			continue
		}
		if _, ok := scales[ref.UID]; ok {
			continue
		}
		var t ScaleTarget
		found := false
		if scale != nil {
			var err error
			t, found, err = scale(*ref, pod.Namespace)
			if err != nil {
				return 0, unmanaged, err
			}
		}
		if !found {
			return 0, unmanaged, &noControllerError{pod: pod.Name, noResolver: scale == nil}
		}
		scales[t.UID] = t.Replicas
	}
	var sum int32
	for _, n := range scales {
		sum += n
	}
	return sum, unmanaged, nil
}

// pruneDisruptedPods is buildDisruptedPodMap: it keeps entries of selected,
// non-terminating pods that have not expired, and returns the earliest expiry
// of a kept entry and the pods whose entry expired.
func pruneDisruptedPods(pdb *policyv1.PodDisruptionBudget, pods []*v1.Pod, now time.Time) (map[string]metav1.Time, *time.Time, []string) {
	result := map[string]metav1.Time{}
	if pdb.Status.DisruptedPods == nil {
		return result, nil, nil
	}
	var recheck *time.Time
	var expired []string
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		t, ok := pdb.Status.DisruptedPods[pod.Name]
		if !ok {
			continue
		}
		deadline := t.Add(DeletionTimeout)
		if deadline.Before(now) {
			expired = append(expired, pod.Name)
			continue
		}
		if recheck == nil || deadline.Before(*recheck) {
			d := deadline
			recheck = &d
		}
		result[pod.Name] = t
	}
	return result, recheck, expired
}

// countHealthy is countHealthyPods. At exactly time + DeletionTimeout a
// disrupted pod counts as healthy again although its entry is still kept.
func countHealthy(pods []*v1.Pod, disrupted map[string]metav1.Time, now time.Time, ready func(*v1.Pod) bool) int32 {
	var n int32
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if t, ok := disrupted[pod.Name]; ok && t.Add(DeletionTimeout).After(now) {
			continue
		}
		if ready(pod) {
			n++
		}
	}
	return n
}

// sameDisruptedPods is apimachinery's semantic equality for the map: nil and
// empty are equal and times compare as instants.
func sameDisruptedPods(a, b map[string]metav1.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for k, ta := range a {
		tb, ok := b[k]
		if !ok || !ta.Time.Equal(tb.Time) {
			return false
		}
	}
	return true
}

// conditionsUpToDate is component-helpers' ConditionsAreUpToDate.
func conditionsUpToDate(pdb *policyv1.PodDisruptionBudget) bool {
	c := findCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if c == nil || pdb.Status.ObservedGeneration != pdb.Generation {
		return false
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		return c.Status == metav1.ConditionTrue && c.Reason == policyv1.SufficientPodsReason
	}
	return c.Status == metav1.ConditionFalse && c.Reason == policyv1.InsufficientPodsReason
}
