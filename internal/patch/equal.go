package patch

import (
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The functions in this file compare two statuses field by field from the typed values,
// under one of two equalities (see Equality), so that the no-op case (every sync of a
// settled pod, every SetPodStatus that changes nothing) is answered without reflection or
// encoding.

// Equality says how EqualFields compares leaf values.
type Equality uint8

const (
	// Semantic is apimachinery's equality.Semantic.DeepEqual: strings exactly, times as
	// a.UTC() == b.UTC(), quantities by value, nil and empty lists and maps alike. It is
	// the kubelet's isPodStatusByKubeletEqual's equality (package status).
	Semantic Equality = iota
	// RoundTrip is equality after a JSON round trip, conservatively: times at whole
	// seconds, strings with invalid UTF-8 replaced; a rarely set field (resources,
	// volume mounts, ...) counts as equal only when absent on both sides. True means the
	// encoder writes nothing for the pair; false means "different, or too rare a shape
	// to compare here", and the encoder decides.
	RoundTrip
)

func (e Equality) str(a, b string) bool {
	if e == Semantic {
		return a == b
	}
	return eqString(a, b)
}

func (e Equality) time(a, b metav1.Time) bool {
	if e == Semantic {
		return a.UTC() == b.UTC()
	}
	return eqTime(a, b)
}

func (e Equality) timePtr(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return e.time(*a, *b)
}

// EqualFields reports whether a and b are equal under e on every field but the
// conditions and the resource-claim statuses (ResourceClaimStatuses,
// ExtendedResourceClaimStatus, NodeAllocatableResourceClaimStatuses), which the kubelet
// never writes and which the patch encoder merges by key.
func EqualFields(a, b *v1.PodStatus, e Equality) bool {
	return a.ObservedGeneration == b.ObservedGeneration &&
		e.str(string(a.Phase), string(b.Phase)) &&
		e.str(a.Message, b.Message) &&
		e.str(a.Reason, b.Reason) &&
		e.str(a.NominatedNodeName, b.NominatedNodeName) &&
		e.str(a.HostIP, b.HostIP) &&
		e.str(a.PodIP, b.PodIP) &&
		e.str(string(a.QOSClass), string(b.QOSClass)) &&
		e.str(string(a.Resize), string(b.Resize)) && //nolint:staticcheck // deprecated, still marshalled
		e.timePtr(a.StartTime, b.StartTime) &&
		equalIPs(a.PodIPs, b.PodIPs, podIPKey, e) &&
		equalIPs(a.HostIPs, b.HostIPs, hostIPKey, e) &&
		equalContainers(a.ContainerStatuses, b.ContainerStatuses, e) &&
		equalContainers(a.InitContainerStatuses, b.InitContainerStatuses, e) &&
		equalContainers(a.EphemeralContainerStatuses, b.EphemeralContainerStatuses, e) &&
		// Rare fields: compared by reflection only when one side has them.
		(len(a.AllocatedResources) == 0 && len(b.AllocatedResources) == 0 ||
			e == Semantic && apiequality.Semantic.DeepEqual(a.AllocatedResources, b.AllocatedResources)) &&
		(a.Resources == nil && b.Resources == nil ||
			e == Semantic && apiequality.Semantic.DeepEqual(a.Resources, b.Resources)) &&
		(len(a.VolumeHealth) == 0 && len(b.VolumeHealth) == 0 ||
			e == Semantic && apiequality.Semantic.DeepEqual(a.VolumeHealth, b.VolumeHealth))
}

// equalStatus is EqualFields under RoundTrip plus the conditions and the resource-claim
// statuses: true means the patch of o to n is empty.
func equalStatus(o, n *v1.PodStatus) bool {
	return EqualFields(o, n, RoundTrip) &&
		EqualConditions(o.Conditions, n.Conditions, RoundTrip) &&
		equalPodClaims(o.ResourceClaimStatuses, n.ResourceClaimStatuses) &&
		// Rare fields: equal here only when absent on both sides.
		o.ExtendedResourceClaimStatus == nil && n.ExtendedResourceClaimStatus == nil &&
		len(o.NodeAllocatableResourceClaimStatuses) == 0 && len(n.NodeAllocatableResourceClaimStatuses) == 0
}

// EqualConditions reports whether two condition lists are equal under e, position by
// position, every field compared. Under RoundTrip, equal lists give an empty merge diff
// (the same keys in the same order pair up the same way, duplicates included), and a
// reordered list is a change ($setElementOrder).
func EqualConditions(o, n []v1.PodCondition, e Equality) bool {
	if len(o) != len(n) {
		return false
	}
	for i := range o {
		a, b := &o[i], &n[i]
		if !e.str(string(a.Type), string(b.Type)) || !e.str(string(a.Status), string(b.Status)) ||
			!e.time(a.LastTransitionTime, b.LastTransitionTime) || !e.time(a.LastProbeTime, b.LastProbeTime) ||
			!e.str(a.Reason, b.Reason) || !e.str(a.Message, b.Message) || a.ObservedGeneration != b.ObservedGeneration {
			return false
		}
	}
	return true
}

func equalIPs[T any](o, n []T, key func(*T) string, e Equality) bool {
	if len(o) != len(n) {
		return false
	}
	for i := range o {
		if !e.str(key(&o[i]), key(&n[i])) {
			return false
		}
	}
	return true
}

func equalPodClaims(o, n []v1.PodResourceClaimStatus) bool {
	if len(o) != len(n) {
		return false
	}
	for i := range o {
		a, b := &o[i], &n[i]
		if !eqString(a.Name, b.Name) || !equalStringPtr(a.ResourceClaimName, b.ResourceClaimName) {
			return false
		}
	}
	return true
}

func equalStringPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return eqString(*a, *b)
}

func equalContainers(o, n []v1.ContainerStatus, e Equality) bool {
	if len(o) != len(n) {
		return false
	}
	for i := range o {
		if !equalContainer(&o[i], &n[i], e) {
			return false
		}
	}
	return true
}

func equalContainer(a, b *v1.ContainerStatus, e Equality) bool {
	if a.Ready != b.Ready || a.RestartCount != b.RestartCount ||
		!e.str(a.Name, b.Name) || !e.str(a.Image, b.Image) || !e.str(a.ImageID, b.ImageID) ||
		!e.str(a.ContainerID, b.ContainerID) {
		return false
	}
	if (a.Started == nil) != (b.Started == nil) || (a.Started != nil && *a.Started != *b.Started) {
		return false
	}
	if (a.StopSignal == nil) != (b.StopSignal == nil) || (a.StopSignal != nil && !e.str(string(*a.StopSignal), string(*b.StopSignal))) {
		return false
	}
	if !equalState(&a.State, &b.State, e) || !equalState(&a.LastTerminationState, &b.LastTerminationState, e) {
		return false
	}
	// Rare fields: compared by reflection only when one side has them.
	semantic := e == Semantic
	return (len(a.AllocatedResources) == 0 && len(b.AllocatedResources) == 0 ||
		semantic && apiequality.Semantic.DeepEqual(a.AllocatedResources, b.AllocatedResources)) &&
		(a.Resources == nil && b.Resources == nil || semantic && apiequality.Semantic.DeepEqual(a.Resources, b.Resources)) &&
		(len(a.VolumeMounts) == 0 && len(b.VolumeMounts) == 0 || semantic && apiequality.Semantic.DeepEqual(a.VolumeMounts, b.VolumeMounts)) &&
		(a.User == nil && b.User == nil || semantic && apiequality.Semantic.DeepEqual(a.User, b.User)) &&
		(len(a.AllocatedResourcesStatus) == 0 && len(b.AllocatedResourcesStatus) == 0 ||
			semantic && apiequality.Semantic.DeepEqual(a.AllocatedResourcesStatus, b.AllocatedResourcesStatus))
}

func equalState(a, b *v1.ContainerState, e Equality) bool {
	if (a.Waiting == nil) != (b.Waiting == nil) || (a.Running == nil) != (b.Running == nil) || (a.Terminated == nil) != (b.Terminated == nil) {
		return false
	}
	if w, x := a.Waiting, b.Waiting; w != nil && (!e.str(w.Reason, x.Reason) || !e.str(w.Message, x.Message)) {
		return false
	}
	if r, s := a.Running, b.Running; r != nil && !e.time(r.StartedAt, s.StartedAt) {
		return false
	}
	if t, u := a.Terminated, b.Terminated; t != nil {
		if t.ExitCode != u.ExitCode || t.Signal != u.Signal || !e.str(t.Reason, u.Reason) || !e.str(t.Message, u.Message) ||
			!e.str(t.ContainerID, u.ContainerID) || !e.time(t.StartedAt, u.StartedAt) || !e.time(t.FinishedAt, u.FinishedAt) {
			return false
		}
	}
	return true
}
