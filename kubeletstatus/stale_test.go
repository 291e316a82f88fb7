package kubeletstatus

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestPodWorkerCopyCostsNoGET: the pod worker hands SetPodStatus (and TerminatePod) the
// copy of the pod it was dispatched with, whose status may predate the adapter's last
// PATCH. That copy is not the server's: it must not look like drift, which costs a GET
// never followed by a PATCH. Only its deletionTimestamp counts, and costs the one GET the
// kubelet's syncPod also makes before the final DELETE.
func TestPodWorkerCopyCostsNoGET(t *testing.T) {
	ctx := testContext(t)
	logger := klog.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := newWorld(t, webPod(), newAdapter(clk))
	a := w.m.(*adapter)
	w.m.Start(ctx)
	step := func(name string, want map[string]int) {
		t.Helper()
		if err := a.inner.Sync(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := w.requests(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: requests %v, want %v", name, got, want)
		}
	}

	// The pod worker's copy, taken before the first status was written.
	stale := w.informer("web")
	pending := kubeletStatus(stale, v1.PodPending, nil, []v1.ContainerStatus{waiting("app")})
	w.m.SetPodStatus(logger, stale, pending)
	step("first status", map[string]int{"patch": 1})

	// The same status from the same, now older, copy: nothing to send.
	w.m.SetPodStatus(logger, stale, pending)
	step("same status, older copy", map[string]int{})

	// A new status from the older copy: one PATCH against the last response, no GET.
	running := kubeletStatus(stale, v1.PodRunning, nil, []v1.ContainerStatus{running("app", appID.String())})
	w.m.SetPodStatus(logger, stale, running)
	step("new status, older copy", map[string]int{"patch": 1})

	// The informer's copy of the server does count: another writer's drift of a
	// kubelet-owned field is found by the periodic reconcile (GET, then PATCH), once
	// the pod's status has stayed unchanged for a tick.
	w.otherWriter("web", func(p *v1.Pod) { p.Status.Phase = v1.PodPending })
	eventually(t, "drift repaired", func() error {
		clk.Step(a.period)
		if ph := w.server("web").Status.Phase; ph != v1.PodRunning {
			return fmt.Errorf("server phase %s", ph)
		}
		return nil
	})
	step("drift on the server", map[string]int{"get": 1, "patch": 1})

	// Deletion: the pod worker's copy with a deletionTimestamp the adapter has not seen
	// on the server makes the next sync GET the pod, once.
	deleted := stale.DeepCopy()
	now := metav1.NewTime(clk.Now())
	deleted.DeletionTimestamp = &now
	w.m.SetPodStatus(logger, deleted, running)
	step("deletionTimestamp", map[string]int{"get": 1})
}
