package eviction

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/conditions"
)

// readyFunc returns f, or [conditions.IsPodReady] (the upstream health rule,
// podutil.IsPodReady) when f is nil.
func readyFunc(f func(*v1.Pod) bool) func(*v1.Pod) bool {
	if f == nil {
		return conditions.IsPodReady
	}
	return f
}
