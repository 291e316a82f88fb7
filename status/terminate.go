package status

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/kubeletrules"
)

// exitCodeUnknown is the exit code TerminatePod gives a container it could not see
// terminate (SIGKILL), with reason kubeletrules.ReasonContainerStatusUnknown.
const exitCodeUnknown = 137

// terminatedStatus returns the status TerminatePod writes for the pod: every container
// that could have started and is not terminated is marked terminated with exit code 137
// and reason ContainerStatusUnknown, and a non-terminal phase becomes Failed. base is
// the cached status (or the pod's) and is deep-copied; conditions are not touched.
//
// Regular containers are defaulted only once the pod has initialised (judged from
// pod.Status, the API copy, as the kubelet does); init containers up to the last one that
// shows any sign of having started are always defaulted.
func terminatedStatus(pod *v1.Pod, base *v1.PodStatus, f features.Set) v1.PodStatus {
	s := *base.DeepCopy()
	unknown := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		ExitCode: exitCodeUnknown, Reason: kubeletrules.ReasonContainerStatusUnknown, Message: kubeletrules.MessageContainerNotLocated,
	}}
	if podInitialized(pod, f) {
		for i := range s.ContainerStatuses {
			if s.ContainerStatuses[i].State.Terminated == nil {
				s.ContainerStatuses[i].State = *unknown.DeepCopy()
			}
		}
	}
	for i := range startedInitPrefix(s.InitContainerStatuses) {
		if s.InitContainerStatuses[i].State.Terminated == nil {
			s.InitContainerStatuses[i].State = *unknown.DeepCopy()
		}
	}
	if !terminal(s.Phase) {
		s.Phase = v1.PodFailed // Pending, Running and any unknown phase.
	}
	return s
}

// podInitialized is the kubelet's hasPodInitialized: whether the API copy of the pod shows
// evidence that its regular containers were ever started.
func podInitialized(pod *v1.Pod, f features.Set) bool {
	if len(pod.Spec.InitContainers) == 0 {
		return true
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.LastTerminationState.Terminated != nil || s.State.Waiting == nil {
			return true
		}
	}
	l := len(pod.Status.InitContainerStatuses)
	if l == 0 {
		return false
	}
	last := pod.Status.InitContainerStatuses[l-1]
	if l > len(pod.Spec.InitContainers) || pod.Spec.InitContainers[l-1].Name != last.Name {
		return false
	}
	if (kubeletrules.Rules{Features: f}).IsSidecar(&pod.Spec.InitContainers[l-1]) {
		return last.State.Running != nil && last.Started != nil && *last.Started
	}
	for _, t := range []*v1.ContainerStateTerminated{last.LastTerminationState.Terminated, last.State.Terminated} {
		if t != nil && t.ExitCode == 0 {
			return true
		}
	}
	return false
}

// startedInitPrefix returns the init statuses up to and including the last one that is
// not untouched (waiting, never terminated); when all are untouched, only the first.
func startedInitPrefix(list []v1.ContainerStatus) []v1.ContainerStatus {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].State.Waiting == nil || list[i].LastTerminationState.Terminated != nil {
			return list[:i+1]
		}
	}
	if len(list) > 0 {
		return list[:1]
	}
	return nil
}
