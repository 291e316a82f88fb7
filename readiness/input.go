package readiness

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/sandbox"
)

// Input is everything the engine reads. Only Pod is required.
type Input struct {
	// Pod supplies the spec (containers, init containers, readiness gates, hostNetwork)
	// and metadata.generation. Its status is not read: pass what you want evaluated in
	// the fields below.
	Pod *v1.Pod
	// Phase is the pod phase the conditions are computed for.
	Phase v1.PodPhase
	// InitContainerStatuses and ContainerStatuses are the container statuses, as in
	// v1.PodStatus. The kubelet evaluates the two lists joined (init first), so the
	// statuses are "unknown" (UnknownContainerStatuses) exactly when
	// InitContainerStatuses is nil and ContainerStatuses is empty: nil and an empty,
	// non-nil list mean different things. A status whose name is not in the spec is
	// ignored; with two statuses of one name, the first (init list first) wins.
	InitContainerStatuses []v1.ContainerStatus
	ContainerStatuses     []v1.ContainerStatus
	// Conditions is where readiness-gate conditions are read (first of each type wins).
	// Usually the conditions of the server's copy of the pod.
	Conditions []v1.PodCondition
	// Sandboxes are the pod's sandboxes as the runtime reports them, newest first. They
	// decide PodReadyToStartContainers.
	Sandboxes []sandbox.Status
	// OldStatus is the previous status, for observedGeneration and the sticky Initialized
	// rule. nil means "no previous status" and is the same as an empty v1.PodStatus.
	OldStatus *v1.PodStatus
	// Features selects version-dependent behaviour. The zero value is the kubelet
	// v1.37.0 with default gates.
	Features features.Set
}

// Result holds the four conditions the engine computes. LastTransitionTime and
// LastProbeTime are always zero: time is the caller's business (see Apply).
type Result struct {
	// PodReadyToStartContainers is True when the pod has a ready sandbox with networking
	// (KEP-3085). Its Type is empty when the feature is off (Features.NoReadyToStartContainers).
	PodReadyToStartContainers v1.PodCondition
	// Initialized is True when every init container has completed (sidecars: started).
	Initialized v1.PodCondition
	// ContainersReady is True when every regular container and every sidecar is ready.
	ContainersReady v1.PodCondition
	// Ready is ContainersReady and every readiness gate True.
	Ready v1.PodCondition
}

// Conditions returns the computed conditions in the order the kubelet writes them into a
// status: PodReadyToStartContainers (when on), Initialized, Ready, ContainersReady.
func (r Result) Conditions() []v1.PodCondition {
	out := make([]v1.PodCondition, 0, 4)
	if r.PodReadyToStartContainers.Type != "" {
		out = append(out, r.PodReadyToStartContainers)
	}
	return append(out, r.Initialized, r.Ready, r.ContainersReady)
}
