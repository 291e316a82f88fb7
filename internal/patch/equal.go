package patch

import (
	v1 "k8s.io/api/core/v1"
)

// The functions in this file decide cheaply, from the typed values, that two statuses are
// equal after a JSON round trip, so that the no-op case (every sync of a settled pod) is
// answered without encoding anything. They are conservative: true means equal for certain;
// false means "different, or too rare a shape to compare here", and the encoder decides.

func equalStatus(o, n *v1.PodStatus) bool {
	return o.ObservedGeneration == n.ObservedGeneration &&
		eqString(string(o.Phase), string(n.Phase)) &&
		eqString(o.Message, n.Message) &&
		eqString(o.Reason, n.Reason) &&
		eqString(o.NominatedNodeName, n.NominatedNodeName) &&
		eqString(o.HostIP, n.HostIP) &&
		eqString(o.PodIP, n.PodIP) &&
		eqString(string(o.QOSClass), string(n.QOSClass)) &&
		eqString(string(o.Resize), string(n.Resize)) && //nolint:staticcheck // deprecated, still marshalled
		equalTimePtr(o, n) &&
		equalConditions(o.Conditions, n.Conditions) &&
		equalIPs(o.PodIPs, n.PodIPs, podIPKey) &&
		equalIPs(o.HostIPs, n.HostIPs, hostIPKey) &&
		equalContainers(o.ContainerStatuses, n.ContainerStatuses) &&
		equalContainers(o.InitContainerStatuses, n.InitContainerStatuses) &&
		equalContainers(o.EphemeralContainerStatuses, n.EphemeralContainerStatuses) &&
		equalPodClaims(o.ResourceClaimStatuses, n.ResourceClaimStatuses) &&
		// Rare fields: equal here only when absent on both sides.
		len(o.AllocatedResources) == 0 && len(n.AllocatedResources) == 0 &&
		o.Resources == nil && n.Resources == nil &&
		o.ExtendedResourceClaimStatus == nil && n.ExtendedResourceClaimStatus == nil &&
		len(o.NodeAllocatableResourceClaimStatuses) == 0 && len(n.NodeAllocatableResourceClaimStatuses) == 0 &&
		len(o.VolumeHealth) == 0 && len(n.VolumeHealth) == 0
}

func equalTimePtr(o, n *v1.PodStatus) bool {
	a, b := o.StartTime, n.StartTime
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return eqTime(*a, *b)
}

// equalConditions compares position by position: equal lists give an empty merge diff (the
// same keys in the same order pair up the same way, duplicates included), and a reordered
// list is a change ($setElementOrder).
func equalConditions(o, n []v1.PodCondition) bool {
	if len(o) != len(n) {
		return false
	}
	for i := range o {
		a, b := &o[i], &n[i]
		if !eqString(string(a.Type), string(b.Type)) || !eqString(string(a.Status), string(b.Status)) ||
			!eqTime(a.LastTransitionTime, b.LastTransitionTime) || !eqTime(a.LastProbeTime, b.LastProbeTime) ||
			!eqString(a.Reason, b.Reason) || !eqString(a.Message, b.Message) || a.ObservedGeneration != b.ObservedGeneration {
			return false
		}
	}
	return true
}

func equalIPs[T any](o, n []T, key func(*T) string) bool {
	if len(o) != len(n) {
		return false
	}
	for i := range o {
		if !eqString(key(&o[i]), key(&n[i])) {
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

func equalContainers(o, n []v1.ContainerStatus) bool {
	if len(o) != len(n) {
		return false
	}
	for i := range o {
		if !equalContainer(&o[i], &n[i]) {
			return false
		}
	}
	return true
}

func equalContainer(a, b *v1.ContainerStatus) bool {
	if a.Ready != b.Ready || a.RestartCount != b.RestartCount ||
		!eqString(a.Name, b.Name) || !eqString(a.Image, b.Image) || !eqString(a.ImageID, b.ImageID) ||
		!eqString(a.ContainerID, b.ContainerID) {
		return false
	}
	if (a.Started == nil) != (b.Started == nil) || (a.Started != nil && *a.Started != *b.Started) {
		return false
	}
	if (a.StopSignal == nil) != (b.StopSignal == nil) || (a.StopSignal != nil && !eqString(string(*a.StopSignal), string(*b.StopSignal))) {
		return false
	}
	if !equalState(&a.State, &b.State) || !equalState(&a.LastTerminationState, &b.LastTerminationState) {
		return false
	}
	// Rare fields: equal here only when absent on both sides.
	return len(a.AllocatedResources) == 0 && len(b.AllocatedResources) == 0 &&
		a.Resources == nil && b.Resources == nil &&
		len(a.VolumeMounts) == 0 && len(b.VolumeMounts) == 0 &&
		a.User == nil && b.User == nil &&
		len(a.AllocatedResourcesStatus) == 0 && len(b.AllocatedResourcesStatus) == 0
}

func equalState(a, b *v1.ContainerState) bool {
	if (a.Waiting == nil) != (b.Waiting == nil) || (a.Running == nil) != (b.Running == nil) || (a.Terminated == nil) != (b.Terminated == nil) {
		return false
	}
	if w, x := a.Waiting, b.Waiting; w != nil && (!eqString(w.Reason, x.Reason) || !eqString(w.Message, x.Message)) {
		return false
	}
	if r, s := a.Running, b.Running; r != nil && !eqTime(r.StartedAt, s.StartedAt) {
		return false
	}
	if t, u := a.Terminated, b.Terminated; t != nil {
		if t.ExitCode != u.ExitCode || t.Signal != u.Signal || !eqString(t.Reason, u.Reason) || !eqString(t.Message, u.Message) ||
			!eqString(t.ContainerID, u.ContainerID) || !eqTime(t.StartedAt, u.StartedAt) || !eqTime(t.FinishedAt, u.FinishedAt) {
			return false
		}
	}
	return true
}
