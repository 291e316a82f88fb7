package podstate

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/internal/accept"
)

// Stamp does to s, a status Generate returned for in, what the kubelet's status manager
// does when it accepts a status from generateAPIPodStatus (SetPodStatus), for callers
// that do not use a status manager. It applies the same rule as status.Manager:
//
//   - the lastTransitionTime of PodReadyToStartContainers, Initialized, Ready,
//     ContainersReady, PodScheduled, DisruptionTarget and AllContainersRestarting is the
//     one in the base status when the condition's Status is unchanged there (even a zero
//     time), and now otherwise; other conditions keep theirs;
//   - startTime is the base status's when it has one, else now;
//   - the pod-level observedGeneration is in.Pod's metadata.generation (with
//     observedGeneration tracking, the default; otherwise only when the server's status
//     already has one), and never lower than the base status's.
//
// The base status is in.Previous, or the server's (in.Pod.Status) when there is none, as
// in the kubelet. now is truncated to whole seconds, as the manager stores times. Stamp
// changes only s.
func (in *Input) Stamp(s *v1.PodStatus, now metav1.Time) {
	old := &v1.PodStatus{}
	if in.Pod != nil || in.Previous != nil {
		old = in.base()
	}
	if in.Pod != nil {
		s.ObservedGeneration = accept.ObservedGeneration(in.Pod, in.Features)
	}
	accept.Stamp(s, old, now.Rfc3339Copy())
}
