package patch

import (
	v1 "k8s.io/api/core/v1"
)

// The diff* functions below write the patch of one matched pair of merge-list elements: an
// object with the changed members (null for removed ones) plus the merge key, or nothing.

func conditionKey(c *v1.PodCondition) string { return string(c.Type) }

func diffCondition(dst []byte, o, n *v1.PodCondition) ([]byte, bool) {
	start := len(dst)
	dst = append(dst, '{')
	dst = diffTime(dst, "lastProbeTime", o.LastProbeTime, n.LastProbeTime)
	dst = diffTime(dst, "lastTransitionTime", o.LastTransitionTime, n.LastTransitionTime)
	dst = diffString(dst, "message", o.Message, n.Message)
	dst = diffInt(dst, "observedGeneration", o.ObservedGeneration, n.ObservedGeneration)
	dst = diffString(dst, "reason", o.Reason, n.Reason)
	dst = diffRequiredString(dst, "status", string(o.Status), string(n.Status))
	if len(dst) == start+1 {
		return dst[:start], false
	}
	dst = appendString(member(dst, "type"), string(n.Type))
	return append(dst, '}'), true
}

func podIPKey(ip *v1.PodIP) string   { return ip.IP }
func hostIPKey(ip *v1.HostIP) string { return ip.IP }

// IP elements hold nothing but their merge key, so a matched pair never differs.
func diffPodIP(dst []byte, _, _ *v1.PodIP) ([]byte, bool)   { return dst, false }
func diffHostIP(dst []byte, _, _ *v1.HostIP) ([]byte, bool) { return dst, false }

func podClaimKey(s *v1.PodResourceClaimStatus) string { return s.Name }

// diffPodClaim diffs resourceClaimStatuses elements, whose strategy is merge,retainKeys: a
// changed element also lists, in "$retainKeys", the members the new element has.
func diffPodClaim(dst []byte, o, n *v1.PodResourceClaimStatus) ([]byte, bool) {
	on, nn := o.ResourceClaimName, n.ResourceClaimName
	switch {
	case nn == nil && on == nil:
		return dst, false
	case nn != nil && on != nil && eqString(*on, *nn):
		return dst, false
	}
	dst = append(dst, `{"$retainKeys":["name"`...)
	if nn != nil {
		dst = append(dst, `,"resourceClaimName"`...)
	}
	dst = appendString(append(dst, `],"name":`...), n.Name)
	dst = append(dst, `,"resourceClaimName":`...)
	if nn == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendString(dst, *nn)
	}
	return append(dst, '}'), true
}

func nodeClaimKey(s *v1.NodeAllocatableResourceClaimStatus) string { return s.ResourceClaimName }

func mappingKey(m *v1.NodeAllocatableMappedResources) string    { return string(m.Name) }
func overheadKey(m *v1.NodeAllocatableOverheadResources) string { return string(m.Name) }

func diffMapping(dst []byte, o, n *v1.NodeAllocatableMappedResources) ([]byte, bool) {
	switch {
	case o.Quantity == nil && n.Quantity == nil:
		return dst, false
	case o.Quantity != nil && n.Quantity != nil && eqQuantity(*o.Quantity, *n.Quantity):
		return dst, false
	}
	dst = appendString(append(dst, `{"name":`...), string(n.Name))
	dst = append(dst, `,"quantity":`...)
	if n.Quantity == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendQuantity(dst, *n.Quantity)
	}
	return append(dst, '}'), true
}

func diffOverhead(dst []byte, o, n *v1.NodeAllocatableOverheadResources) ([]byte, bool) {
	start := len(dst)
	dst = appendString(append(dst, `{"name":`...), string(n.Name))
	mark := len(dst)
	dst = diffQuantityPtr(dst, "perContainer", o.PerContainer, n.PerContainer)
	dst = diffQuantityPtr(dst, "perPod", o.PerPod, n.PerPod)
	if len(dst) == mark {
		return dst[:start], false
	}
	return append(dst, '}'), true
}

// diffNodeClaim diffs nodeAllocatableResourceClaimStatuses elements, which hold two merge
// lists of their own.
func diffNodeClaim(dst []byte, o, n *v1.NodeAllocatableResourceClaimStatus) ([]byte, bool) {
	mapping := listSpec[v1.NodeAllocatableMappedResources]{keyName: "name", key: mappingKey, full: appendMappedResources, diff: diffMapping}
	overhead := listSpec[v1.NodeAllocatableOverheadResources]{keyName: "name", key: overheadKey, full: appendOverheadResources, diff: diffOverhead}
	var scratch []byte
	scratch, mp := planList(scratch, o.Mapping, n.Mapping, &mapping)
	scratch, op := planList(scratch, o.Overhead, n.Overhead, &overhead)

	start := len(dst)
	dst = append(dst, '{')
	dst = appendSetElementOrder(dst, "mapping", n.Mapping, &mapping, mp)
	dst = appendSetElementOrder(dst, "overhead", n.Overhead, &overhead, op)
	dst = diffAtomicStrings(dst, "containers", o.Containers, n.Containers)
	dst = appendListField(dst, scratch, "mapping", n.Mapping, &mapping, mp)
	dst = appendListField(dst, scratch, "overhead", n.Overhead, &overhead, op)
	if len(dst) == start+1 {
		return dst[:start], false
	}
	dst = appendString(member(dst, "resourceClaimName"), n.ResourceClaimName)
	return append(dst, '}'), true
}

// diffAtomicStrings writes the patch member for an omitempty []string without a patch
// strategy: resent whole when it changed.
func diffAtomicStrings(dst []byte, key string, o, n []string) []byte {
	if len(n) == 0 {
		if len(o) != 0 {
			dst = append(member(dst, key), "null"...)
		}
		return dst
	}
	if len(o) == len(n) {
		same := true
		for i := range n {
			if !eqString(o[i], n[i]) {
				same = false
				break
			}
		}
		if same {
			return dst
		}
	}
	return appendStrings(member(dst, key), n)
}
