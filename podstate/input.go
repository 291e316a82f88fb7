package podstate

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/sandbox"
)

// Input is everything Generate and Stamp read. Generate requires Pod; Stamp requires Pod
// and Now.
type Input struct {
	// Pod is the pod as the API server has it: its spec, metadata.generation,
	// deletionTimestamp, and its status (the server's copy), whose foreign conditions
	// (readiness gates, custom conditions, DisruptionTarget) are carried over and whose
	// terminal phase is never left.
	Pod *v1.Pod
	// OldStatus is the status the status manager has cached for the pod, the last status
	// this node reported. nil means there is none (a node agent that just started), and
	// then the server's status (Pod.Status) stands in for it, as in the kubelet.
	OldStatus *v1.PodStatus
	// Runtime is what the node's runtime reports about the pod: sandboxes, IPs,
	// containers, and the pod worker's decisions (terminal, evicted).
	Runtime
	// Features selects version-dependent behaviour. The zero value is the kubelet
	// v1.37.0 with default gates.
	Features features.Set
	// Now is the time Stamp writes into the conditions that transition and into
	// startTime; Stamp requires it. Generate does not read it: the status Generate
	// returns carries no times of its own, and a status manager stamps them
	// (status.Manager.SetPodStatus, with its clock).
	Now metav1.Time
}

// Runtime is what a node's container runtime and pod worker report about one pod: the
// facts a status is generated from, beside the pod itself. It is part of Input, and it is
// what a node agent hands to status.Manager.SyncPod (status.SyncPodInput.Runtime) and what
// podsim's Facts carry. The zero value is a pod with no sandbox and no container yet.
type Runtime struct {
	// Sandboxes are the pod's sandboxes as the runtime reports them, newest first. They
	// decide PodReadyToStartContainers; pod IPs are taken from the newest one, and only
	// when it is ready.
	Sandboxes []sandbox.Status
	// PodIPs are all the IP addresses of the newest sandbox, in the order the runtime
	// reports them. nil means Sandboxes[0].IP alone. The status gets at most one per IP
	// family: the first of the node's family (HostIPs[0]; IPv4 without host IPs), then the
	// first of the other family, as the kubelet orders them.
	PodIPs []string
	// HostIPs are the node's IP addresses, primary first (at most two are used). Empty
	// leaves hostIP and hostIPs unset, as a kubelet without an API client does. A
	// host-network pod without a pod IP gets the host IPs as its pod IPs.
	HostIPs []string
	// Containers are the runtime's facts about the pod's containers (init, regular and
	// ephemeral alike, matched by name). A container of the spec without a fact gets the
	// status the kubelet gives a container the runtime does not report (waiting in
	// ContainerCreating or PodInitializing, or its previous terminated state). Facts for
	// names not in the spec are ignored; two facts of one name are an error.
	Containers []Container
	// Terminal is the kubelet's podIsTerminal: the pod worker has decided that the pod is
	// finished and none of its containers will run again (it was deleted or evicted, or
	// ran to completion). A pod whose containers have all stopped is then Succeeded or
	// Failed whatever its restart policy, and its resize conditions are dropped.
	Terminal bool
	// Eviction, when non-nil, is an internal decision to fail the pod (the kubelet's pod
	// sync handlers, such as activeDeadlineSeconds): the phase becomes Failed with its
	// reason and message.
	Eviction *Eviction
	// Resize holds the resize conditions the node agent keeps for the pod
	// (PodResizePending, PodResizeInProgress; the kubelet keeps them outside the status).
	// They are written after the foreign conditions, Pending first, unless Terminal.
	// Conditions of other types are ignored.
	Resize []v1.PodCondition
	// PodCgroup is the pod-level cgroup as the node reads it back. It decides
	// status.resources of a pod the server shows Running: nil means nothing was read (a
	// node without pod cgroups, or kubemark's stub container manager), and then the
	// previous status's CPU request, CPU limit and memory limit are kept when that status
	// was Running, and the spec's pod-level values stand otherwise.
	PodCgroup *PodCgroup
	// RecursiveReadOnlyMounts reports whether the pod's runtime handler supports
	// recursive read-only mounts; it decides the recursiveReadOnly of a read-only volume
	// mount with mode IfPossible in the container statuses.
	RecursiveReadOnlyMounts bool
}

// Eviction is a decision to fail a pod, with the reason and message the status carries.
type Eviction struct {
	// Reason is a CamelCase word, for example "DeadlineExceeded".
	Reason string
	// Message says why, for a human.
	Message string
}

// Container is what the container runtime knows about one container of the pod, already
// in API form.
type Container struct {
	// Name is the container's name in the spec.
	Name string
	// ContainerID is the runtime's ID in "<type>://<id>" form, for example
	// "containerd://4f1c...".
	ContainerID string
	// Image is the image the container runs; "" means the spec's image. ImageID is the
	// image's digest reference.
	Image   string
	ImageID string
	// RestartCount is how often the container has been restarted.
	RestartCount int32
	// State is the container's current state. Running, Terminated and Waiting are taken
	// as given (a created but not started container is Waiting). An empty state means
	// the runtime reports the container in an unknown state: it becomes Terminated with
	// reason ContainerStatusUnknown (exit code 137) when it was running before, and
	// Waiting otherwise, as the kubelet does.
	State v1.ContainerState
	// LastTerminationState is the state of the container's previous instance, if any.
	LastTerminationState v1.ContainerState
	// SandboxID is the sandbox the container belongs to; "" means the newest sandbox. A
	// regular container in the newest, ready sandbox means the pod has initialized: a
	// restarting sidecar does not put it back to Pending.
	SandboxID string
	// Startup and Readiness are the latest results of the container's startup and
	// readiness probes. Whether the container has a probe is read from the spec, as the
	// kubelet's prober does; a result for a probe the spec does not declare is ignored.
	Startup   ProbeResult
	Readiness ProbeResult
	// Resources are the resources the runtime reports as applied; nil means the spec's.
	Resources *v1.ResourceRequirements
	// User is the identity the container process runs as, when the runtime reports it.
	User *v1.ContainerUser
}

// ProbeResult is the latest result of a probe.
type ProbeResult int

const (
	// ProbeUnknown means the probe has not produced a result yet. A container whose
	// startup probe has not succeeded is not started; one whose readiness probe has not
	// succeeded is not ready.
	ProbeUnknown ProbeResult = iota
	// ProbeSuccess means the last probe succeeded.
	ProbeSuccess
	// ProbeFailure means the last probe failed.
	ProbeFailure
)

// String returns "Unknown", "Success" or "Failure".
func (r ProbeResult) String() string {
	switch r {
	case ProbeSuccess:
		return "Success"
	case ProbeFailure:
		return "Failure"
	}
	return "Unknown"
}

// base returns the status the kubelet compares against: the cached one, else the
// server's.
func (in *Input) base() *v1.PodStatus {
	if in.OldStatus != nil {
		return in.OldStatus
	}
	return &in.Pod.Status
}
