package readiness

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/accept"
)

// ApplyInput is what Apply writes into a status. Result and Now are required.
type ApplyInput struct {
	// Result is what Evaluate returned for the pod.
	Result Result
	// Now is the lastTransitionTime of a condition that is new or whose Status changes.
	// Required: a zero Now is an input error, never a year-0001 timestamp. It is
	// truncated to whole seconds, as the API server stores times.
	Now metav1.Time
	// Features selects version-dependent behaviour. Apply has none today; the field is
	// here so that callers pass the version the same way to every input. The zero value
	// is the kubelet v1.37.0 with default gates.
	Features features.Set
}

// Apply writes in.Result's conditions into status with the kubelet's lastTransitionTime
// rule and reports whether status changed. status is the destination, like the argument
// of json.Unmarshal: Apply changes it in place and keeps no reference to it.
//
// Each condition replaces the first one of its type or is appended (in the order
// PodReadyToStartContainers, Initialized, Ready, ContainersReady). Its lastTransitionTime
// is kept when the Status is unchanged and becomes in.Now otherwise. When status.Phase is
// terminal (Succeeded or Failed), Ready and ContainersReady are then forced False with
// reason PodCompleted or PodFailed, as the kubelet's status manager does before it sends
// a status, so a finished pod is never reported ready.
//
// The error is non-nil only when status is nil or in.Now is zero, and is then a
// *podstatus.InputError ("readiness: Apply: ApplyInput.Now: Required value"); status is
// not changed.
func Apply(status *v1.PodStatus, in ApplyInput) (bool, error) {
	var errs field.ErrorList
	if status == nil {
		errs = append(errs, field.Required(field.NewPath("status"), ""))
	}
	if in.Now.IsZero() {
		errs = append(errs, field.Required(field.NewPath("ApplyInput", "Now"), ""))
	}
	if len(errs) > 0 {
		return false, fmt.Errorf("readiness: Apply: %w", &podstatus.InputError{Errs: errs})
	}
	now := in.Now.Rfc3339Copy()
	changed := false
	set := func(c v1.PodCondition) {
		if c.Type == "" {
			return
		}
		var ch bool
		status.Conditions, ch = accept.SetCondition(status.Conditions, c, now)
		changed = changed || ch
	}
	r := &in.Result
	set(r.PodReadyToStartContainers)
	set(r.Initialized)
	set(r.Ready)
	set(r.ContainersReady)
	if accept.ForceTerminal(status, now) {
		changed = true
	}
	return changed, nil
}
