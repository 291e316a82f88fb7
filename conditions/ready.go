package conditions

import v1 "k8s.io/api/core/v1"

// IsPodReady reports whether the pod's first condition of type Ready has status True: the
// health rule of the eviction handler and of the disruption controller (IsPodReady in
// pkg/api/v1/pod/util.go). Phase, container statuses and readiness gates count only
// through the kubelet-reported Ready condition. A nil pod is not ready.
func IsPodReady(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	c := Get(pod.Status.Conditions, v1.PodReady)
	return c != nil && c.Status == v1.ConditionTrue
}
