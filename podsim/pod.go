package podsim

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Node is the node the simulated pods run on.
type Node struct {
	// Name is the node's name.
	Name string
	// PodCIDR is the node's pod CIDR, for example "10.244.3.0/24".
	PodCIDR string
	// HostIPs are the node's IP addresses, primary first.
	HostIPs []string
}

// Config is what a simulated pod needs besides the pod.
type Config struct {
	// Node is the node the pod runs on.
	Node Node
	// IPAM hands out the pod IPs; share one per node. nil derives each pod's IP from a
	// hash of its namespace and name inside Node.PodCIDR (unique only by luck).
	IPAM *IPAM
	// Profile is the node's behaviour profile; the zero Profile behaves like Fast with
	// probe delays honoured. Use Default() for realistic timing.
	Profile Profile
	// Seed makes a run reproducible: every random draw of a pod comes from a hash of Seed,
	// the pod's namespace and its name.
	Seed uint64
}

// Pod is one simulated pod: the kubelet's pod worker and the container runtime for it. It
// is not safe for concurrent use (serialise calls per pod); it starts no goroutines.
type Pod struct {
	pod *v1.Pod
}

// New starts simulating pod, which has just been bound to the node, at time now. The errors
// are the pod's invalid annotations (each fell back to the profile's value) and a failed
// IP allocation; the Pod is always usable.
func New(pod *v1.Pod, cfg Config, now time.Time) (*Pod, []error) {
	return &Pod{pod: pod}, nil
}

// Adopt resumes a pod that a previous agent process already ran, from its status on the
// server (phase, pod IPs, container states, IDs, restart counts, startedAt, started and
// ready): the pod's phase does not regress, a Ready container stays ready, and no restart
// is counted.
func Adopt(pod *v1.Pod, cfg Config, now time.Time) (*Pod, []error) {
	return New(pod, cfg, now)
}

// Update gives the simulation the newest pod object: a deletionTimestamp starts graceful
// termination (with deletionGracePeriodSeconds), a changed activeDeadlineSeconds moves the
// deadline.
func (p *Pod) Update(pod *v1.Pod, now time.Time) { p.pod = pod }

// Facts advances the simulation to now and returns the runtime facts at now. Time never
// goes backwards: an earlier now is treated as the latest one seen.
func (p *Pod) Facts(now time.Time) Facts { return Facts{} }

// Next returns when the facts change next without outside input; the zero time means never
// (a steady running pod, or a finished one).
func (p *Pod) Next() time.Time { return time.Time{} }

// Release frees the pod's IP.
func (p *Pod) Release() {}
