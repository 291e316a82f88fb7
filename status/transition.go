package status

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/kubeletrules"
)

// serverTransitionTimes is the fix for kubernetes#119514, applied to a merged status just
// before it is diffed against the server's copy. For every condition the kubelet owns:
//
//   - the server has it with the same Status: the server's lastTransitionTime is kept
//     (no transition happens on the server, so its time must not move; a zero server time
//     is filled in with ours);
//   - the server has it with another Status and our time is not after the server's: some
//     other writer (the node lifecycle controller, typically) flipped it after we last
//     did, so the transition we are about to make happens now;
//   - otherwise our time stands: it records a transition we made and have not sent yet.
//
// The kubelet compares only against its own cache, so after a node controller marks a pod
// not Ready it sends the old True time back and rolls lastTransitionTime backwards.
func serverTransitionTimes(merged *v1.PodStatus, server *v1.PodStatus, own conditions.Ownership, now metav1.Time) {
	for i := range merged.Conditions {
		c := &merged.Conditions[i]
		if !own.Owned(c.Type) {
			continue
		}
		sc := conditions.Get(server.Conditions, c.Type)
		if sc == nil {
			continue
		}
		switch {
		case sc.Status == c.Status:
			if !sc.LastTransitionTime.IsZero() {
				c.LastTransitionTime = sc.LastTransitionTime
			}
		case !sc.LastTransitionTime.Before(&c.LastTransitionTime):
			c.LastTransitionTime = now
		}
	}
}

// adoptTransitionTimes copies into the cached status s the server's lastTransitionTime of
// every kubelet-owned condition whose Status agrees with the server's, so that the cache
// reports the times the server holds (they differ after serverTransitionTimes gave a
// fresh time, or when the server recorded the transition first). s.Conditions is
// replaced, not modified, when anything changes: syncs may be reading it.
func adoptTransitionTimes(s, server *v1.PodStatus, own conditions.Ownership) {
	var out []v1.PodCondition
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if !own.Owned(c.Type) || conditions.Index(s.Conditions, c.Type) != i {
			continue
		}
		sc := conditions.Get(server.Conditions, c.Type)
		if sc == nil || sc.Status != c.Status || sc.LastTransitionTime.IsZero() || sc.LastTransitionTime.Equal(&c.LastTransitionTime) {
			continue
		}
		if out == nil {
			out = append([]v1.PodCondition(nil), s.Conditions...)
		}
		out[i].LastTransitionTime = sc.LastTransitionTime
	}
	if out != nil {
		s.Conditions = out
	}
}

// TransitionError is the error of a status the Manager rejected because it moves a
// terminated container back to a non-terminated state that the pod's restart rules do
// not allow, or because the previous init-container statuses do not match the spec (the
// kubelet's checkContainerStateTransition, pkg/kubelet/status/status_manager.go). The
// status is discarded. Test for it with errors.As.
type TransitionError struct {
	// Pod is the pod whose status was rejected.
	Pod PodRef
	// Container is the name of the container at fault.
	Container string
	// Init is true when Container is an init container.
	Init bool
	// SpecMismatch is true when the previous init-container statuses do not follow the
	// spec's init containers (Container is the first that does not), rather than an
	// illegal transition.
	SpecMismatch bool
}

// Error renders the error with the kubelet's wording, after the pod.
func (e *TransitionError) Error() string {
	pod := "pod " + e.Pod.Namespace + "/" + e.Pod.Name + " (uid " + string(e.Pod.UID) + "): "
	switch {
	case e.SpecMismatch:
		return pod + "found mismatch between pod spec and status, container: " + e.Container
	case e.Init:
		return pod + "terminated init container " + e.Container + " attempted illegal transition to non-terminated state"
	}
	return pod + "terminated container " + e.Container + " attempted illegal transition to non-terminated state"
}

// checkTransitions rejects a status that moves a terminated container back to a
// non-terminated state when the pod's restart rules do not allow a restart. It is the
// kubelet's checkContainerStateTransition; the error is a *TransitionError.
func checkTransitions(pod *v1.Pod, old, s *v1.PodStatus, f features.Set) error {
	spec := &pod.Spec
	ref := refOf(pod)
	if spec.RestartPolicy == v1.RestartPolicyAlways {
		return nil
	}
	if f.RestartAllContainers() && kubeletrules.CouldRestartAllContainers(spec) {
		return nil
	}
	for _, o := range old.ContainerStatuses {
		if o.State.Terminated == nil || mayRestart(spec.Containers, spec, o, f) {
			continue
		}
		for _, n := range s.ContainerStatuses {
			if n.Name == o.Name && n.State.Terminated == nil {
				return &TransitionError{Pod: ref, Container: n.Name}
			}
		}
	}
	for i, o := range old.InitContainerStatuses {
		if i >= len(spec.InitContainers) || spec.InitContainers[i].Name != o.Name {
			return &TransitionError{Pod: ref, Container: o.Name, Init: true, SpecMismatch: true}
		}
		if (kubeletrules.Rules{Features: f}).IsSidecar(&spec.InitContainers[i]) || o.State.Terminated == nil || mayRestart(spec.InitContainers, spec, o, f) {
			continue
		}
		for _, n := range s.InitContainerStatuses {
			if n.Name == o.Name && n.State.Terminated == nil {
				return &TransitionError{Pod: ref, Container: n.Name, Init: true}
			}
		}
	}
	return nil
}

// mayRestart reports whether the terminated container o may leave the terminated state:
// a failure under restartPolicy OnFailure, or (with container restart rules) a container
// whose own policy or rules restart it.
func mayRestart(containers []v1.Container, spec *v1.PodSpec, o v1.ContainerStatus, f features.Set) bool {
	code := o.State.Terminated.ExitCode
	if code != 0 && spec.RestartPolicy == v1.RestartPolicyOnFailure {
		return true
	}
	if !f.ContainerRestartRules() {
		return false
	}
	for i := range containers {
		if containers[i].Name == o.Name && (kubeletrules.Rules{Features: f}).ContainerShouldRestart(&containers[i], spec, code) {
			return true
		}
	}
	return false
}
