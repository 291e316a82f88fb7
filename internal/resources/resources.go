// Package resources aggregates a pod's resource requests and limits from its spec, the
// rule the scheduler, the kubelet's admission and cgroups, and the pod-level status
// (status.allocatedResources, status.resources) share: PodRequests and PodLimits of
// k8s.io/component-helpers/resource (v0.37.0, resource/helpers.go), with the sidecar rule
// of KEP-753 (keps/sig-node/753-sidecar-containers, "Resources calculation for scheduling
// and pod admission") and pod-level resources of KEP-2837 (PodLevelResources).
//
// It is the repository's one implementation of that rule. It covers what the kubelet
// v1.37.0 writes into a pod's status with default gates: the spec's values (not the
// status-aware variant the scheduler uses while a resize is in flight), overhead
// included, and no DRA node-allocatable claims (gate DRANodeAllocatableResources is
// alpha and off in v1.37).
package resources

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Options selects what the aggregation honours. The zero value is the kubelet v1.37.0
// with default gates.
type Options struct {
	// NoSidecars treats init containers with restartPolicy Always as ordinary init
	// containers (an API server with gate SidecarContainers off strips the field).
	NoSidecars bool
	// NoPodLevelResources ignores spec.resources (gate PodLevelResources off).
	NoPodLevelResources bool
}

// IsPodLevelResource reports whether pod-level resources (spec.resources) may name
// resource name: cpu, memory and hugepages-<size> (IsSupportedPodLevelResource in
// component-helpers).
func IsPodLevelResource(name v1.ResourceName) bool {
	return name == v1.ResourceCPU || name == v1.ResourceMemory || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// PodRequests returns the pod's effective requests: for each resource, the larger of the
// sum over regular containers and sidecars and the largest need of any ordinary init
// container while it runs (its own requests plus the sidecars declared before it); then
// the pod-level requests of supported resources replace the aggregate; then the
// overhead is added. The result is a new map (never nil) whose quantities share no
// memory with pod.
func PodRequests(pod *v1.Pod, opts Options) v1.ResourceList {
	reqs := aggregate(pod, opts, func(r *v1.ResourceRequirements) v1.ResourceList { return r.Requests })
	if !opts.NoPodLevelResources && pod.Spec.Resources != nil {
		override(reqs, pod.Spec.Resources.Requests)
	}
	for name, q := range pod.Spec.Overhead {
		add(reqs, name, q)
	}
	return reqs
}

// PodLimits returns the pod's effective limits, aggregated as PodRequests aggregates
// requests; the pod-level limits of supported resources replace the aggregate, and the
// overhead is added only to resources that then have a non-zero limit (a resource
// without a limit stays unlimited). The result is a new map (never nil).
func PodLimits(pod *v1.Pod, opts Options) v1.ResourceList {
	lims := aggregate(pod, opts, func(r *v1.ResourceRequirements) v1.ResourceList { return r.Limits })
	if !opts.NoPodLevelResources && pod.Spec.Resources != nil {
		override(lims, pod.Spec.Resources.Limits)
	}
	for name, q := range pod.Spec.Overhead {
		if cur, ok := lims[name]; ok && !cur.IsZero() {
			add(lims, name, q)
		}
	}
	return lims
}

// aggregate is the container part of PodRequests and PodLimits: list picks requests or
// limits out of a container's resources.
func aggregate(pod *v1.Pod, opts Options, list func(*v1.ResourceRequirements) v1.ResourceList) v1.ResourceList {
	total := make(v1.ResourceList, 4)
	for i := range pod.Spec.Containers {
		addAll(total, list(&pod.Spec.Containers[i].Resources))
	}
	// sidecars: the running sum of the sidecars seen so far, which stay up while later
	// init containers run and alongside the regular containers.
	sidecars := v1.ResourceList{}
	initPeak := v1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		own := list(&c.Resources)
		var need v1.ResourceList
		if !opts.NoSidecars && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			addAll(total, own)
			addAll(sidecars, own)
			need = sidecars
		} else {
			need = v1.ResourceList{}
			addAll(need, own)
			addAll(need, sidecars)
		}
		maxAll(initPeak, need)
	}
	maxAll(total, initPeak)
	return total
}

// add adds q to dst[name], starting from a copy of q when dst has no such entry.
func add(dst v1.ResourceList, name v1.ResourceName, q resource.Quantity) {
	cur, ok := dst[name]
	if !ok {
		dst[name] = q.DeepCopy()
		return
	}
	cur.Add(q)
	dst[name] = cur
}

// addAll adds every entry of src to dst.
func addAll(dst, src v1.ResourceList) {
	for name, q := range src {
		add(dst, name, q)
	}
}

// maxAll raises every entry of dst to src's where src's is larger or dst has none.
func maxAll(dst, src v1.ResourceList) {
	for name, q := range src {
		if cur, ok := dst[name]; !ok || q.Cmp(cur) > 0 {
			dst[name] = q.DeepCopy()
		}
	}
}

// override replaces dst's entries by the pod-level values of supported resources.
func override(dst, podLevel v1.ResourceList) {
	for name, q := range podLevel {
		if IsPodLevelResource(name) {
			dst[name] = q.DeepCopy()
		}
	}
}
