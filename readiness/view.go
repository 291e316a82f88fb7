package readiness

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/kubeletrules"
)

// view is the read-only lens both Evaluate and Explain look through: the kubelet's
// lookups (joined status list, sidecar test, observedGeneration rule) in one place.
type view struct {
	in    *Input
	spec  *v1.PodSpec
	known bool // the joined status list is non-nil
}

func newView(in *Input) (view, error) {
	if err := kubeletrules.CheckPod(in.Pod, "Input.Pod"); err != nil {
		return view{}, err
	}
	// append(init, regular...) is nil exactly when init is nil and regular is empty.
	known := in.InitContainerStatuses != nil || len(in.ContainerStatuses) > 0
	return view{in: in, spec: &in.Pod.Spec, known: known}, nil
}

// status returns the first status named name, init statuses first, as the kubelet's
// GetContainerStatus does on the joined list; nil when there is none.
func (v *view) status(name string) *v1.ContainerStatus {
	for i := range v.in.InitContainerStatuses {
		if kubeletrules.SameName(v.in.InitContainerStatuses[i].Name, name) {
			return &v.in.InitContainerStatuses[i]
		}
	}
	for i := range v.in.ContainerStatuses {
		if kubeletrules.SameName(v.in.ContainerStatuses[i].Name, name) {
			return &v.in.ContainerStatuses[i]
		}
	}
	return nil
}

// sidecar reports whether init container c is a restartable init container (sidecar).
func (v *view) sidecar(c *v1.Container) bool {
	return kubeletrules.Rules{Features: v.in.Features}.IsSidecar(c)
}

// anyRegularStarted reports whether some status, in either list, names a regular container
// and is running or terminated (the kubelet's HasAnyRegularContainerStarted).
func (v *view) anyRegularStarted() bool {
	check := func(list []v1.ContainerStatus) bool {
		for i := range list {
			s := &list[i]
			if s.State.Running == nil && s.State.Terminated == nil {
				continue
			}
			for j := range v.spec.Containers {
				if v.spec.Containers[j].Name == s.Name {
					return true
				}
			}
		}
		return false
	}
	return check(v.in.InitContainerStatuses) || check(v.in.ContainerStatuses)
}

// generation returns the observedGeneration a condition of type t gets.
func (v *view) generation(t v1.PodConditionType) int64 {
	gen := v.in.Pod.Generation
	if v.in.Features.ObservedGenerationTracking() {
		return gen
	}
	if v.in.OldStatus != nil {
		for i := range v.in.OldStatus.Conditions {
			if c := &v.in.OldStatus.Conditions[i]; c.Type == t && c.ObservedGeneration != 0 {
				return gen
			}
		}
	}
	return 0
}

// oldInitializedTrue reports whether the previous status had Initialized True.
func (v *view) oldInitializedTrue() bool {
	if v.in.OldStatus == nil {
		return false
	}
	for i := range v.in.OldStatus.Conditions {
		if c := &v.in.OldStatus.Conditions[i]; c.Type == v1.PodInitialized && c.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

// gate returns the condition a readiness gate reads (first of its type), or nil.
func (v *view) gate(t v1.PodConditionType) *v1.PodCondition {
	return conditions.Get(v.in.Conditions, t)
}
