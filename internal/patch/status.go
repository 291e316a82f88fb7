package patch

import (
	"bytes"
	"strconv"

	v1 "k8s.io/api/core/v1"
)

// PodStatus returns the strategic-merge patch that takes a pod's status from old to new, with
// a metadata.uid precondition, and whether it changes nothing.
//
// It equals, byte for byte, the kubelet's preparePatchBytesForPodStatus, including its edge
// cases: an empty uid yields no metadata member (and so never counts as unchanged), and a uid
// that strconv.Quote writes differently from encoding/json never counts as unchanged either.
func PodStatus(uid string, old, new *v1.PodStatus) (patch []byte, unchanged bool) {
	// The typed check answers the common no-op case without encoding anything.
	same := equalStatus(old, new)
	size := 24 + len(uid)
	if !same {
		size += sizeHint(new)
	}
	dst := make([]byte, 0, size)
	dst = append(dst, '{')
	if uid != "" {
		dst = appendString(append(dst, `"metadata":{"uid":`...), uid)
		dst = append(dst, '}')
	}
	if !same {
		dst = appendStatus(dst, old, new)
	}
	dst = append(dst, '}')
	return dst, uidOnly(dst, uid)
}

// uidOnly reports whether patch is exactly what the reference compares against to decide
// "unchanged": fmt.Sprintf(`{"metadata":{"uid":%q}}`, uid).
func uidOnly(patch []byte, uid string) bool {
	if uid == "" {
		return false
	}
	const prefix, suffix = `{"metadata":{"uid":`, `}}`
	if !bytes.HasPrefix(patch, []byte(prefix)) || !bytes.HasSuffix(patch, []byte(suffix)) {
		return false
	}
	var buf [128]byte
	quoted := strconv.AppendQuote(buf[:0], uid)
	return bytes.Equal(patch[len(prefix):len(patch)-len(suffix)], quoted)
}

// sizeHint guesses the patch size so that it is written without growing the buffer. A
// container status runs to about 700 bytes: the first patch of a running pod with one
// container and five conditions is some 1,360 bytes (its image ID and container ID alone
// are 160), and growing the buffer once would allocate twice that again.
func sizeHint(n *v1.PodStatus) int {
	return 256 + 96*len(n.Conditions) + 700*(len(n.ContainerStatuses)+len(n.InitContainerStatuses)+len(n.EphemeralContainerStatuses))
}

// appendStatus writes the "status" member of the patch, or nothing when the statuses are
// equal. Members are written in sorted order.
func appendStatus(dst []byte, o, n *v1.PodStatus) []byte {
	conditions := listSpec[v1.PodCondition]{keyName: "type", key: conditionKey, full: appendCondition, diff: diffCondition}
	hostIPs := listSpec[v1.HostIP]{keyName: "ip", key: hostIPKey, full: appendHostIP, diff: diffHostIP}
	podIPs := listSpec[v1.PodIP]{keyName: "ip", key: podIPKey, full: appendPodIP, diff: diffPodIP}
	podClaims := listSpec[v1.PodResourceClaimStatus]{keyName: "name", key: podClaimKey, full: appendPodResourceClaimStatus, diff: diffPodClaim}
	nodeClaims := listSpec[v1.NodeAllocatableResourceClaimStatus]{keyName: "resourceClaimName", key: nodeClaimKey, full: appendNodeAllocatableClaimStatus, diff: diffNodeClaim}

	scratch := make([]byte, 0, 128+64*len(n.Conditions)+320*len(n.ContainerStatuses))
	scratch, cp := planList(scratch, o.Conditions, n.Conditions, &conditions)
	scratch, hp := planList(scratch, o.HostIPs, n.HostIPs, &hostIPs)
	scratch, np := planList(scratch, o.NodeAllocatableResourceClaimStatuses, n.NodeAllocatableResourceClaimStatuses, &nodeClaims)
	scratch, pp := planList(scratch, o.PodIPs, n.PodIPs, &podIPs)
	scratch, rp := planList(scratch, o.ResourceClaimStatuses, n.ResourceClaimStatuses, &podClaims)

	mark := len(dst)
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = append(dst, `"status":{`...)
	open := len(dst)

	dst = appendSetElementOrder(dst, "conditions", n.Conditions, &conditions, cp)
	dst = appendSetElementOrder(dst, "hostIPs", n.HostIPs, &hostIPs, hp)
	dst = appendSetElementOrder(dst, "nodeAllocatableResourceClaimStatuses", n.NodeAllocatableResourceClaimStatuses, &nodeClaims, np)
	dst = appendSetElementOrder(dst, "podIPs", n.PodIPs, &podIPs, pp)
	dst = appendSetElementOrder(dst, "resourceClaimStatuses", n.ResourceClaimStatuses, &podClaims, rp)

	dst = diffResourceList(dst, "allocatedResources", o.AllocatedResources, n.AllocatedResources)
	dst = appendListField(dst, scratch, "conditions", n.Conditions, &conditions, cp)
	dst, scratch = diffAtomic(dst, scratch, "containerStatuses", o.ContainerStatuses, n.ContainerStatuses, appendContainerStatus)
	dst, scratch = diffAtomic(dst, scratch, "ephemeralContainerStatuses", o.EphemeralContainerStatuses, n.EphemeralContainerStatuses, appendContainerStatus)
	dst = diffExtendedClaim(dst, o.ExtendedResourceClaimStatus, n.ExtendedResourceClaimStatus)
	dst = diffString(dst, "hostIP", o.HostIP, n.HostIP)
	dst = appendListField(dst, scratch, "hostIPs", n.HostIPs, &hostIPs, hp)
	dst, scratch = diffAtomic(dst, scratch, "initContainerStatuses", o.InitContainerStatuses, n.InitContainerStatuses, appendContainerStatus)
	dst = diffString(dst, "message", o.Message, n.Message)
	dst = appendListField(dst, scratch, "nodeAllocatableResourceClaimStatuses", n.NodeAllocatableResourceClaimStatuses, &nodeClaims, np)
	dst = diffString(dst, "nominatedNodeName", o.NominatedNodeName, n.NominatedNodeName)
	dst = diffInt(dst, "observedGeneration", o.ObservedGeneration, n.ObservedGeneration)
	dst = diffString(dst, "phase", string(o.Phase), string(n.Phase))
	dst = diffString(dst, "podIP", o.PodIP, n.PodIP)
	dst = appendListField(dst, scratch, "podIPs", n.PodIPs, &podIPs, pp)
	dst = diffString(dst, "qosClass", string(o.QOSClass), string(n.QOSClass))
	dst = diffString(dst, "reason", o.Reason, n.Reason)
	dst = diffString(dst, "resize", string(o.Resize), string(n.Resize)) //nolint:staticcheck // resize is deprecated but still part of the API
	dst = appendListField(dst, scratch, "resourceClaimStatuses", n.ResourceClaimStatuses, &podClaims, rp)
	dst, scratch = diffResources(dst, scratch, o.Resources, n.Resources)
	dst = diffTimePtr(dst, "startTime", o.StartTime, n.StartTime)
	dst, _ = diffAtomic(dst, scratch, "volumeHealth", o.VolumeHealth, n.VolumeHealth, appendVolumeHealth)

	if len(dst) == open {
		return dst[:mark]
	}
	return append(dst, '}')
}

// diffAtomic writes the patch member for an omitempty list without a patch strategy: null when
// it was emptied, the whole new list when it differs in any way after a JSON round trip.
func diffAtomic[T any](dst, scratch []byte, key string, o, n []T, enc func([]byte, *T) []byte) ([]byte, []byte) {
	if len(n) == 0 {
		if len(o) != 0 {
			dst = append(member(dst, key), "null"...)
		}
		return dst, scratch
	}
	mark := len(dst)
	dst = member(dst, key)
	val := len(dst)
	dst = appendList(dst, n, enc)
	if len(o) == 0 {
		return dst, scratch
	}
	if sameList(dst[val:], o, scratch, enc) {
		dst = dst[:mark]
	}
	return dst, scratch
}

// sameList reports whether encoded, a JSON array written by appendList, holds exactly the
// canonical encodings of o's elements. It encodes one element of o at a time into the spare
// capacity of scratch and stops at the first difference, which is usually the first element.
// Canonical encodings are complete JSON values, so a prefix match followed by a separator is
// a match of the whole element.
func sameList[T any](encoded []byte, o []T, scratch []byte, enc func([]byte, *T) []byte) bool {
	rest := encoded[1:] // after '['
	for i := range o {
		if i > 0 {
			if len(rest) == 0 || rest[0] != ',' {
				return false
			}
			rest = rest[1:]
		}
		e := enc(scratch[len(scratch):], &o[i])
		if !bytes.HasPrefix(rest, e) {
			return false
		}
		rest = rest[len(e):]
	}
	return len(rest) == 1 && rest[0] == ']'
}

// diffResources writes the patch member for the pod-level resources: a struct whose two maps
// are diffed member by member and whose claims list is atomic.
func diffResources(dst, scratch []byte, o, n *v1.ResourceRequirements) ([]byte, []byte) {
	switch {
	case n == nil:
		if o != nil {
			dst = append(member(dst, "resources"), "null"...)
		}
		return dst, scratch
	case o == nil:
		return appendResourceRequirements(member(dst, "resources"), n), scratch
	}
	mark := len(dst)
	dst = append(member(dst, "resources"), '{')
	open := len(dst)
	dst, scratch = diffAtomic(dst, scratch, "claims", o.Claims, n.Claims, appendResourceClaim)
	dst = diffResourceList(dst, "limits", o.Limits, n.Limits)
	dst = diffResourceList(dst, "requests", o.Requests, n.Requests)
	if len(dst) == open {
		return dst[:mark], scratch
	}
	return append(dst, '}'), scratch
}

// diffExtendedClaim writes the patch member for extendedResourceClaimStatus, a struct whose
// requestMappings list is atomic and marshalled even when nil.
func diffExtendedClaim(dst []byte, o, n *v1.PodExtendedResourceClaimStatus) []byte {
	const key = "extendedResourceClaimStatus"
	switch {
	case n == nil:
		if o != nil {
			dst = append(member(dst, key), "null"...)
		}
		return dst
	case o == nil:
		return appendExtendedResourceClaimStatus(member(dst, key), n)
	}
	mark := len(dst)
	dst = append(member(dst, key), '{')
	open := len(dst)
	if !equalRequestMappings(o.RequestMappings, n.RequestMappings) {
		dst = appendRequestMappings(member(dst, "requestMappings"), n.RequestMappings)
	}
	dst = diffRequiredString(dst, "resourceClaimName", o.ResourceClaimName, n.ResourceClaimName)
	if len(dst) == open {
		return dst[:mark]
	}
	return append(dst, '}')
}

// equalRequestMappings compares two lists marshalled without omitempty: nil is null, and an
// empty list is [].
func equalRequestMappings(a, b []v1.ContainerExtendedResourceRequest) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if !eqString(x.ContainerName, y.ContainerName) || !eqString(x.RequestName, y.RequestName) || !eqString(x.ResourceName, y.ResourceName) {
			return false
		}
	}
	return true
}
