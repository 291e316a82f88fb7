package podstate

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/internal/accept"
	"github.com/podstatus/podstatus/internal/kubeletrules"
)

// Stamp does to status, a status Generate returned for in, what the kubelet's status
// manager does when it accepts a status from generateAPIPodStatus (SetPodStatus), for
// callers that do not use a status manager. It applies the same rule as status.Manager:
//
//   - the lastTransitionTime of PodReadyToStartContainers, Initialized, Ready,
//     ContainersReady, PodScheduled, DisruptionTarget and AllContainersRestarting is the
//     one in the base status when the condition's Status is unchanged there (even a zero
//     time), and in.Now otherwise; other conditions keep theirs;
//   - startTime is the base status's when it has one, else in.Now;
//   - the pod-level observedGeneration is in.Pod's metadata.generation (with
//     observedGeneration tracking, the default; otherwise only when the server's status
//     already has one), and never lower than the base status's.
//
// The base status is in.OldStatus, or the server's (in.Pod.Status) when there is none, as
// in the kubelet. in.Now is truncated to whole seconds, as the manager stores times.
// Stamp reads in.Pod, in.OldStatus, in.Features and in.Now; status is the destination,
// changed in place, and Stamp keeps no reference to it.
//
// The error is non-nil only when status or in.Pod is nil or in.Now is zero, and is then a
// *podstatus.InputError ("podstate: Stamp: Input.Now: Required value"); status is not
// changed.
func Stamp(status *v1.PodStatus, in Input) error {
	var errs field.ErrorList
	if status == nil {
		errs = append(errs, field.Required(field.NewPath("status"), ""))
	}
	if in.Pod == nil {
		errs = append(errs, field.Required(field.NewPath("Input", "Pod"), ""))
	}
	if in.Now.IsZero() {
		errs = append(errs, field.Required(field.NewPath("Input", "Now"), ""))
	}
	if len(errs) > 0 {
		ie := &podstatus.InputError{Errs: errs}
		if in.Pod != nil {
			ie.Pod = kubeletrules.PodName(in.Pod)
		}
		return fmt.Errorf("podstate: Stamp: %w", ie)
	}
	status.ObservedGeneration = accept.ObservedGeneration(in.Pod, in.Features)
	accept.Stamp(status, in.base(), in.Now.Rfc3339Copy())
	return nil
}
