package podsim

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/podstate"
)

// Facts is the runtime's view of a pod at one instant: what podstate.Generate takes besides
// the pod and its previous status.
type Facts struct {
	// Runtime is what a container runtime reports (sandboxes, IPs, containers) and the
	// pod worker's decisions (Terminal: no container of the pod will run again, because
	// the pod was deleted, exceeded its active deadline, or ran to completion; Eviction,
	// set when the pod exceeded spec.activeDeadlineSeconds), as podstate.Generate and
	// status.Manager.SyncPod read them.
	podstate.Runtime
	// Stopped is true when the pod is Terminal and every container has stopped: the pod
	// worker has finished terminating it. The kubelet then calls its status manager's
	// TerminatePod (pkg/kubelet/kubelet.go: SyncTerminatingPod); a node agent calls
	// status.Manager.TerminatePod, which gives a pod whose containers never ran (deleted
	// while Pending) its terminal phase.
	Stopped bool
	// Done is true when a deleted pod has finished terminating (Stopped, and the pod has a
	// deletionTimestamp). The node agent then reports the terminal status and deletes the
	// pod object (with its UID as a precondition and grace period 0, as the kubelet does).
	Done bool
	// Features is the Config's feature set; Input passes it on to podstate.Generate.
	Features features.Set
}

// Input builds the podstate.Input for pod, with oldStatus as the status last reported
// (nil when there is none).
func (f Facts) Input(pod *v1.Pod, oldStatus *v1.PodStatus) podstate.Input {
	return podstate.Input{Pod: pod, OldStatus: oldStatus, Runtime: f.Runtime, Features: f.Features}
}
