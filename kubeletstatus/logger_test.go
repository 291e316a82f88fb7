package kubeletstatus

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestKubeletLoggerReachesPodstatus: the klog.Logger the kubelet passes to a mutator is
// the one podstatus's Manager logs with (the kubelet's status manager logs with it too),
// not the adapter's default.
func TestKubeletLoggerReachesPodstatus(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		lines = append(lines, args)
		mu.Unlock()
	}, funcr.Options{Verbosity: 10})
	w := newWorld(t, webPod(), newAdapter(clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))))
	pod := w.server("web")
	w.pm.AddPod(pod)
	st := v1.PodStatus{Phase: v1.PodPending}
	w.m.SetPodStatus(logger, pod, st)
	w.m.SetPodStatus(logger, pod, st) // equal to the cached status: podstatus logs it at V(4)
	mu.Lock()
	defer mu.Unlock()
	for _, l := range lines {
		if strings.Contains(l, `"Ignoring same status"`) {
			return
		}
	}
	t.Errorf("the kubelet's logger got %q, want podstatus's \"Ignoring same status\"", lines)
}
