package status

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxTerminationMessageBytes is the kubelet's budget for all termination messages of one
// pod (kubecontainer.MaxPodTerminationMessageLogLength): each container status gets an
// equal share.
const maxTerminationMessageBytes = 1024 * 12

// normalize brings s into the shape the API server stores and the kubelet caches, in
// place: every timestamp truncated to whole seconds (the API server keeps RFC 3339 with
// second precision, so a finer cached time would differ from the server's forever),
// termination messages cut to the pod's per-container share, regular and ephemeral
// container statuses sorted by name and init container statuses put in spec order.
//
// It is the kubelet's normalizeStatus. The only deliberate difference is that the name
// sort is stable, so duplicate names (which the API server never accepts) keep their order.
func normalize(pod *v1.Pod, s *v1.PodStatus) {
	limit := maxTerminationMessageBytes
	if pod != nil {
		if n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers) + len(pod.Spec.EphemeralContainers); n > 0 {
			limit /= n
		}
	}
	if s.StartTime != nil {
		truncate(s.StartTime)
	}
	for i := range s.Conditions {
		truncate(&s.Conditions[i].LastProbeTime)
		truncate(&s.Conditions[i].LastTransitionTime)
	}
	for _, list := range [][]v1.ContainerStatus{s.ContainerStatuses, s.InitContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			normalizeState(&list[i].State, limit)
			normalizeState(&list[i].LastTerminationState, limit)
		}
	}
	sortByName(s.ContainerStatuses)
	sortByName(s.EphemeralContainerStatuses)
	if pod != nil {
		sortInitStatuses(pod.Spec.InitContainers, s.InitContainerStatuses)
	}
}

// truncate cuts t to whole seconds, in UTC, in place: the value a JSON round trip through
// the API server gives (metav1.Time.Rfc3339Copy, without formatting and parsing a string).
func truncate(t *metav1.Time) { t.Time = t.Time.Truncate(time.Second).UTC() }

func normalizeState(c *v1.ContainerState, limit int) {
	if c.Running != nil {
		truncate(&c.Running.StartedAt)
	}
	if t := c.Terminated; t != nil {
		truncate(&t.StartedAt)
		truncate(&t.FinishedAt)
		if len(t.Message) > limit {
			// A byte cut, as the kubelet does: it may split a UTF-8 sequence.
			t.Message = t.Message[:limit]
		}
	}
}

func sortByName(list []v1.ContainerStatus) {
	sort.SliceStable(list, func(i, j int) bool { return list[i].Name < list[j].Name })
}

// sortInitStatuses moves the statuses into the order of the init containers in the spec
// with the kubelet's swap walk; statuses naming no init container end up after the
// matched ones.
func sortInitStatuses(spec []v1.Container, list []v1.ContainerStatus) {
	next := 0
	for _, c := range spec {
		for j := next; j < len(list); j++ {
			if list[j].Name == c.Name {
				list[next], list[j] = list[j], list[next]
				next++
				break
			}
		}
	}
}
