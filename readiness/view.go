package readiness

import (
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/conditions"
)

// view is the read-only lens both Evaluate and Explain look through: the kubelet's
// lookups (joined status list, sidecar test, observedGeneration rule) in one place.
type view struct {
	in    *Input
	spec  *v1.PodSpec
	known bool // the joined status list is non-nil
}

func newView(in *Input) (view, error) {
	if err := CheckPod(in.Pod); err != nil {
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
		if sameName(v.in.InitContainerStatuses[i].Name, name) {
			return &v.in.InitContainerStatuses[i]
		}
	}
	for i := range v.in.ContainerStatuses {
		if sameName(v.in.ContainerStatuses[i].Name, name) {
			return &v.in.ContainerStatuses[i]
		}
	}
	return nil
}

// sameName is a == b. Container names of one pod usually differ in length or in their
// last byte ("app-0", "app-1"), so those are compared before the bytes.
func sameName(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1]) && a == b
}

// sidecar reports whether init container c is a restartable init container (sidecar).
func (v *view) sidecar(c *v1.Container) bool { return IsSidecar(c, v.in.Features) }

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

// CheckPod returns an *InputError when pod cannot be evaluated: it is nil, or two of its
// containers (init, regular or ephemeral) share a name. The API server never accepts such
// a pod, and every name-keyed lookup would be ambiguous. Evaluate, Explain, Phase and
// podstate.Generate all check their pod with it. Small specs are checked without
// allocating.
func CheckPod(pod *v1.Pod) error {
	if pod == nil {
		return &InputError{Field: "Pod", Problem: "missing (nil)"}
	}
	if name, dup := duplicateName(&pod.Spec); dup {
		return &InputError{Namespace: pod.Namespace, Name: pod.Name, Field: "Pod.Spec", Problem: "duplicate container name " + strconv.Quote(name)}
	}
	return nil
}

// duplicateName returns a container name that two containers of spec share, if any.
func duplicateName(spec *v1.PodSpec) (string, bool) {
	n := len(spec.InitContainers) + len(spec.Containers) + len(spec.EphemeralContainers)
	name := func(i int) string {
		if i < len(spec.InitContainers) {
			return spec.InitContainers[i].Name
		}
		i -= len(spec.InitContainers)
		if i < len(spec.Containers) {
			return spec.Containers[i].Name
		}
		return spec.EphemeralContainers[i-len(spec.Containers)].Name
	}
	if n <= 32 {
		for i := 0; i < n; i++ {
			a := name(i)
			for j := i + 1; j < n; j++ {
				if sameName(name(j), a) {
					return a, true
				}
			}
		}
		return "", false
	}
	seen := make(map[string]struct{}, n)
	for i := 0; i < n; i++ {
		a := name(i)
		if _, dup := seen[a]; dup {
			return a, true
		}
		seen[a] = struct{}{}
	}
	return "", false
}
