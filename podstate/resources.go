package podstate

import (
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podstatus/podstatus/internal/resources"
)

// PodCgroup is the pod-level cgroup as the node reads it back (the kubelet's
// GetPodCgroupConfig, pkg/kubelet/cm/pod_container_manager_linux.go), in cgroup units.
// It decides status.resources of a pod the API server shows Running.
type PodCgroup struct {
	// CPU is the pod cgroup's CPU controller; nil means it was not read (the kubelet
	// logs the error and keeps the previous status's CPU values).
	CPU *CPUCgroup
	// MemoryLimit is the memory limit in bytes (memory.max on cgroup v2,
	// memory.limit_in_bytes on v1); nil, zero or negative means none was read, and the
	// previous status's memory limit is kept.
	MemoryLimit *int64
}

// CPUCgroup is a pod cgroup's CPU settings as the kubelet reads them.
type CPUCgroup struct {
	// Shares is cpu.shares (cgroup v1), or cpu.weight converted to shares (cgroup v2:
	// 2 + (weight-1)*262142/9999). It becomes the CPU request (milliCPU =
	// ceil(shares*1000/1024)); below 2 there is none, and the previous status's is kept.
	Shares uint64
	// Quota and Period are the CFS quota and period in microseconds (cpu.max on cgroup
	// v2); a Quota of -1 means no limit. The CPU limit is Quota*1000/Period milliCPU;
	// when there is none (Period 0, Quota -1, or a result not above 0) the previous
	// status's is kept.
	Quota  int64
	Period uint64
}

// Constants of pkg/kubelet/cm/helpers_linux.go: the kernel's bounds of cpu.shares, and the
// smallest CPU limit a 1ms quota over the 100ms period expresses.
const (
	minShares        = 2
	maxShares        = 262144
	sharesPerCPU     = 1024
	milliCPUToCPU    = 1000
	minMilliCPULimit = 10
	maxCPUWeight     = 10000
)

// setPodResources writes status.allocatedResources and status.resources as the kubelet
// v1.37.0's convertStatusToAPIStatus does with gate InPlacePodLevelResourcesVerticalScaling
// on (pkg/kubelet/kubelet_pods.go).
func (g *gen) setPodResources(s *v1.PodStatus) {
	if !g.features.PodLevelResourcesStatus() {
		return
	}
	opts := resources.Options{NoSidecars: g.features.NoSidecars}
	s.AllocatedResources = resources.PodRequests(g.pod, opts)
	s.Resources = g.podLevelResources(opts)
}

// podLevelResources is the kubelet's convertToAPIPodLevelResourcesStatus. A pod the server
// does not show Running gets its effective allocated resources (getEffectiveAllocatedResources):
// spec.resources with the aggregate requests and limits. A Running one gets spec.resources
// with the pod cgroup's values (Input.PodCgroup) where they are above the cgroup floors,
// the previous status's values where the cgroup was not read, and the aggregate memory
// request where the spec names none.
func (g *gen) podLevelResources(opts resources.Options) *v1.ResourceRequirements {
	pod := g.pod
	r := &v1.ResourceRequirements{}
	if pod.Spec.Resources != nil {
		r = pod.Spec.Resources.DeepCopy()
	}
	if pod.Status.Phase != v1.PodRunning {
		r.Requests = resources.PodRequests(pod, opts)
		r.Limits = resources.PodLimits(pod, opts)
		return r
	}
	if r.Requests == nil {
		r.Requests = v1.ResourceList{}
	}
	if r.Limits == nil {
		r.Limits = v1.ResourceList{}
	}
	// The previous status's values stand in for a value the cgroup did not give, when
	// that status was Running too.
	var old v1.ResourceRequirements
	if g.base.Resources != nil {
		old = *g.base.Resources
	}
	keep := func(name v1.ResourceName, from, to v1.ResourceList) {
		if g.base.Phase != v1.PodRunning {
			return
		}
		if q, ok := from[name]; ok {
			to[name] = q.DeepCopy()
		}
	}

	var cpu *CPUCgroup
	var memLimit *int64
	if cg := g.in.PodCgroup; cg != nil {
		cpu, memLimit = cg.CPU, cg.MemoryLimit
	}

	if req := cpuRequest(cpu); req != nil {
		allocated := r.Requests.Cpu().MilliValue()
		// At or below the shares floor on both sides the spec's value stays; a read-back
		// that only differs by the lossy cgroup v2 weight conversion is no change.
		if req.MilliValue() > minShares || allocated > minShares {
			if !sharesEqualAfterV2RoundTrip(milliCPUToShares(allocated), cpu.Shares) {
				r.Requests[v1.ResourceCPU] = *req
			}
		}
	} else {
		keep(v1.ResourceCPU, old.Requests, r.Requests)
	}

	if _, ok := r.Requests[v1.ResourceMemory]; !ok {
		if q, ok := resources.PodRequests(pod, opts)[v1.ResourceMemory]; ok {
			r.Requests[v1.ResourceMemory] = q
		}
	}

	if lim := cpuLimit(cpu); lim != nil {
		if lim.MilliValue() > minMilliCPULimit || r.Limits.Cpu().MilliValue() > minMilliCPULimit {
			r.Limits[v1.ResourceCPU] = *lim
		}
	} else {
		keep(v1.ResourceCPU, old.Limits, r.Limits)
	}

	if memLimit != nil && *memLimit > 0 {
		r.Limits[v1.ResourceMemory] = *resource.NewQuantity(*memLimit, resource.BinarySI)
	} else {
		keep(v1.ResourceMemory, old.Limits, r.Limits)
	}
	return r
}

// cpuRequest is the CPU request the pod cgroup's shares express (CPURequestsFromConfig
// and SharesToMilliCPU in pkg/kubelet/cm/helpers_linux.go), nil when there is none.
func cpuRequest(c *CPUCgroup) *resource.Quantity {
	if c == nil || c.Shares == 0 {
		return nil
	}
	shares := int64(c.Shares)
	if shares < minShares {
		return nil
	}
	milli := int64(math.Ceil(float64(shares*milliCPUToCPU) / float64(sharesPerCPU)))
	if milli <= 0 {
		return nil
	}
	return resource.NewMilliQuantity(milli, resource.DecimalSI)
}

// cpuLimit is the CPU limit the pod cgroup's quota and period express
// (CPULimitsFromConfig and QuotaToMilliCPU), nil when there is none.
func cpuLimit(c *CPUCgroup) *resource.Quantity {
	if c == nil || c.Period == 0 || c.Quota == -1 {
		return nil
	}
	milli := c.Quota * milliCPUToCPU / int64(c.Period)
	if milli <= 0 {
		return nil
	}
	return resource.NewMilliQuantity(milli, resource.DecimalSI)
}

// milliCPUToShares is the cpu.shares the kubelet writes for a CPU request
// (MilliCPUToShares): 2 for none, clamped to the kernel's bounds.
func milliCPUToShares(milli int64) uint64 {
	if milli == 0 {
		return minShares
	}
	shares := milli * sharesPerCPU / milliCPUToCPU
	switch {
	case shares < minShares:
		return minShares
	case shares > maxShares:
		return maxShares
	}
	return uint64(shares)
}

// sharesEqualAfterV2RoundTrip reports whether readback is what shares become once
// written as a cgroup v2 cpu.weight and read back (CPUSharesEqualAfterV2RoundTrip in
// pkg/kubelet/cm/helpers_linux.go, with getCPUWeight of cgroup_manager_linux.go and
// cpuWeightToCPUShares of cgroup_v2_manager_linux.go).
func sharesEqualAfterV2RoundTrip(shares, readback uint64) bool {
	weight := uint64(maxCPUWeight)
	if shares < maxShares {
		weight = 1 + ((shares-minShares)*(maxCPUWeight-1))/(maxShares-minShares)
	}
	return ((weight-1)*(maxShares-minShares))/(maxCPUWeight-1)+minShares == readback
}
