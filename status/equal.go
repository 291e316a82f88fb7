package status

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/conditions"
	patchenc "github.com/podstatus/podstatus/internal/patch"
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
// the conditions and the resource-claim statuses: internal/patch's EqualFields under its
// Semantic equality, the one field-by-field engine the patch encoder's no-op check uses
// too. TestSameKubeletFieldsCovers fails when the API grows a field it does not know
// about.
func sameKubeletFields(a, b *v1.PodStatus) bool {
	return patchenc.EqualFields(a, b, patchenc.Semantic)
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

// shareBase makes s share the memory of base, the server's copy of the pod's status, where
// the two are equal: every field but the conditions and the resource-claim statuses when
// sameKubeletFields holds, and the conditions when the two lists are equal item by item
// (internal/patch's EqualConditions under its Semantic equality). s's value is unchanged
// under apimachinery's semantic equality (a time may change its location, never its
// instant; a nil list may become an empty one). fieldsEqual tells it the caller has found
// sameKubeletFields(s, base) true already (ObservePod has); false, it checks itself.
//
// Why: once a pod is synced, its cached status and the base say the same thing, and a
// cached status of its own costs about a kilobyte per pod (a condition list, container
// statuses and what they point to), which the Manager held for every pod it caches, twice
// with the base's. Both are read-only (the cache is copy-on-write, and a base is an object
// the caller must not modify: ObservePod, SetPodStatus), so sharing is safe.
func shareBase(s *v1.PodStatus, base *v1.PodStatus, fieldsEqual bool) {
	if shared(s.ContainerStatuses, base.ContainerStatuses) && shared(s.Conditions, base.Conditions) {
		return // already (a watch event of the Manager's own PATCH, say)
	}
	if fieldsEqual || sameKubeletFields(s, base) {
		shared := *base
		shared.Conditions = s.Conditions
		shared.ResourceClaimStatuses = s.ResourceClaimStatuses
		shared.ExtendedResourceClaimStatus = s.ExtendedResourceClaimStatus
		shared.NodeAllocatableResourceClaimStatuses = s.NodeAllocatableResourceClaimStatuses
		*s = shared
	}
	if patchenc.EqualConditions(s.Conditions, base.Conditions, patchenc.Semantic) {
		s.Conditions = base.Conditions
	}
}

// shared reports whether two lists are one, or both empty.
func shared[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
