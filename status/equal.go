package status

import (
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
)

// equalByKubelet reports whether two normalised statuses agree on every field the kubelet
// owns, so that replacing a by b would not be worth a request. It is the kubelet's
// isPodStatusByKubeletEqual (v1.37):
//
//   - the owned and shared (DisruptionTarget) conditions must match one to one by type on
//     Status, Reason and Message; a missing or extra one is a difference, while
//     lastTransitionTime, lastProbeTime, observedGeneration and order are ignored;
//   - conditions of foreign types and the resource-claim statuses, which the kubelet never
//     writes, are ignored;
//   - every other field counts, compared with apimachinery's semantic equality.
func equalByKubelet(a, b *v1.PodStatus, own conditions.Ownership) bool {
	return sameKubeletConditions(a.Conditions, b.Conditions, own) && sameKubeletFields(a, b)
}

// sameKubeletFields is apiequality.Semantic.DeepEqual over every PodStatus field except
// the conditions and the resource-claim statuses, with the same results (nil and empty
// lists and maps equal, times compared as a.UTC() == b.UTC(), quantities by value). The
// fields every status carries are compared directly, without reflection, which makes the
// no-op check of a typical SetPodStatus about ten times cheaper; rarely set ones go
// through Semantic.DeepEqual only when one side has them. TestSameKubeletFieldsCovers
// fails when the API grows a field this does not know about.
func sameKubeletFields(a, b *v1.PodStatus) bool {
	return a.ObservedGeneration == b.ObservedGeneration && a.Phase == b.Phase &&
		a.Message == b.Message && a.Reason == b.Reason && a.NominatedNodeName == b.NominatedNodeName &&
		a.HostIP == b.HostIP && a.PodIP == b.PodIP && a.QOSClass == b.QOSClass && a.Resize == b.Resize &&
		sameList(a.HostIPs, b.HostIPs, func(x, y *v1.HostIP) bool { return *x == *y }) &&
		sameList(a.PodIPs, b.PodIPs, func(x, y *v1.PodIP) bool { return *x == *y }) &&
		sameTimePtr(a.StartTime, b.StartTime) &&
		sameList(a.InitContainerStatuses, b.InitContainerStatuses, sameContainerStatus) &&
		sameList(a.ContainerStatuses, b.ContainerStatuses, sameContainerStatus) &&
		sameList(a.EphemeralContainerStatuses, b.EphemeralContainerStatuses, sameContainerStatus) &&
		(len(a.AllocatedResources) == 0 && len(b.AllocatedResources) == 0 ||
			apiequality.Semantic.DeepEqual(a.AllocatedResources, b.AllocatedResources)) &&
		(a.Resources == nil && b.Resources == nil || apiequality.Semantic.DeepEqual(a.Resources, b.Resources)) &&
		(len(a.VolumeHealth) == 0 && len(b.VolumeHealth) == 0 || apiequality.Semantic.DeepEqual(a.VolumeHealth, b.VolumeHealth))
}

func sameContainerStatus(x, y *v1.ContainerStatus) bool {
	return x.Name == y.Name && x.Ready == y.Ready && x.RestartCount == y.RestartCount &&
		x.Image == y.Image && x.ImageID == y.ImageID && x.ContainerID == y.ContainerID &&
		(x.Started == nil) == (y.Started == nil) && (x.Started == nil || *x.Started == *y.Started) &&
		(x.StopSignal == nil) == (y.StopSignal == nil) && (x.StopSignal == nil || *x.StopSignal == *y.StopSignal) &&
		sameState(&x.State, &y.State) && sameState(&x.LastTerminationState, &y.LastTerminationState) &&
		(len(x.AllocatedResources) == 0 && len(y.AllocatedResources) == 0 ||
			apiequality.Semantic.DeepEqual(x.AllocatedResources, y.AllocatedResources)) &&
		(x.Resources == nil && y.Resources == nil || apiequality.Semantic.DeepEqual(x.Resources, y.Resources)) &&
		(len(x.VolumeMounts) == 0 && len(y.VolumeMounts) == 0 || apiequality.Semantic.DeepEqual(x.VolumeMounts, y.VolumeMounts)) &&
		(x.User == nil && y.User == nil || apiequality.Semantic.DeepEqual(x.User, y.User)) &&
		(len(x.AllocatedResourcesStatus) == 0 && len(y.AllocatedResourcesStatus) == 0 ||
			apiequality.Semantic.DeepEqual(x.AllocatedResourcesStatus, y.AllocatedResourcesStatus))
}

func sameState(x, y *v1.ContainerState) bool {
	if (x.Waiting == nil) != (y.Waiting == nil) || (x.Running == nil) != (y.Running == nil) ||
		(x.Terminated == nil) != (y.Terminated == nil) {
		return false
	}
	if x.Waiting != nil && *x.Waiting != *y.Waiting {
		return false
	}
	if x.Running != nil && !sameTime(x.Running.StartedAt, y.Running.StartedAt) {
		return false
	}
	if t, u := x.Terminated, y.Terminated; t != nil {
		return t.ExitCode == u.ExitCode && t.Signal == u.Signal && t.Reason == u.Reason &&
			t.Message == u.Message && t.ContainerID == u.ContainerID &&
			sameTime(t.StartedAt, u.StartedAt) && sameTime(t.FinishedAt, u.FinishedAt)
	}
	return true
}

// sameTime is apimachinery's semantic rule for metav1.Time.
func sameTime(a, b metav1.Time) bool { return a.UTC() == b.UTC() }

func sameTimePtr(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameTime(*a, *b)
}

// sameList compares two lists element by element; nil and empty are equal.
func sameList[T any](a, b []T, eq func(x, y *T) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !eq(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// sameKubeletConditions compares the owned and shared conditions of two lists as the
// kubelet does: keyed by type (the last duplicate wins), same count, and equal Status,
// Reason and Message.
func sameKubeletConditions(a, b []v1.PodCondition, own conditions.Ownership) bool {
	relevant := func(t v1.PodConditionType) bool { return own.Owned(t) || own.Shared(t) }
	// Lists are short (at most a dozen kubelet types): quadratic scans beat maps here.
	last := func(list []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].Type == t {
				return &list[i]
			}
		}
		return nil
	}
	distinct := func(list []v1.PodCondition) int {
		n := 0
		for i := range list {
			if !relevant(list[i].Type) {
				continue
			}
			if last(list[:i], list[i].Type) == nil {
				n++
			}
		}
		return n
	}
	if distinct(a) != distinct(b) {
		return false
	}
	for i := range b {
		if !relevant(b[i].Type) {
			continue
		}
		nb := last(b, b[i].Type)
		na := last(a, b[i].Type)
		if na == nil || na.Status != nb.Status || na.Reason != nb.Reason || na.Message != nb.Message {
			return false
		}
	}
	return true
}
