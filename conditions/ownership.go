package conditions

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
)

// Ownership tells which condition types the kubelet writes for the feature set
// Features. The zero value is the kubelet v1.37.0 with default gates.
//
// Owned types are written only by the kubelet: its value replaces the server's. The shared
// type (DisruptionTarget) is written by the kubelet and by others (the eviction API, the
// taint manager); the kubelet sends its own copy only when a pod becomes terminal. Every
// other type (readiness gates, custom conditions) is foreign: the kubelet reads it but
// never writes it.
type Ownership struct {
	// Features selects version-dependent behaviour: which of PodReadyToStartContainers
	// and AllContainersRestarting the kubelet owns.
	Features features.Set
}

// Owned reports whether the kubelet owns condition type t: PodScheduled, Ready,
// Initialized, ContainersReady, PodResizeInProgress, PodResizePending, plus
// PodReadyToStartContainers and AllContainersRestarting when their features are on.
func (o Ownership) Owned(t v1.PodConditionType) bool {
	switch t {
	case v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
		v1.PodResizeInProgress, v1.PodResizePending:
		return true
	case v1.PodReadyToStartContainers:
		return o.Features.ReadyToStartContainers()
	case v1.AllContainersRestarting:
		return o.Features.RestartAllContainers()
	}
	return false
}

// Shared reports whether the kubelet shares condition type t with other writers: only
// DisruptionTarget.
func (o Ownership) Shared(t v1.PodConditionType) bool { return t == v1.DisruptionTarget }

// Foreign reports whether t is neither owned nor shared: the kubelet never writes it.
func (o Ownership) Foreign(t v1.PodConditionType) bool { return !o.Owned(t) && !o.Shared(t) }
