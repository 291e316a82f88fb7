package podsim

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

// A pod deleted before its containers ran: podstate.Generate leaves it Pending, and the
// status manager's TerminatePod, called when the facts report Stopped, makes it Failed,
// as the kubelet's SyncTerminatingPod does.
func TestDeletedPendingPodFailsThroughTerminatePod(t *testing.T) {
	ctx := context.Background()
	pod := mkPod("early", ctn("app"))
	srv := statustest.NewServer(pod.DeepCopy())
	clk := clocktesting.NewFakeClock(sec(0))
	var sim *Pod
	mgr := status.NewManager(srv, status.Options{Clock: clk,
		CouldHaveRunningContainers: func(*v1.Pod) bool { return sim.CouldHaveRunningContainers() }})
	sim, _ = newAt(pod, testConfig(t, fixed()), sec(0))
	sync := func(p *v1.Pod, at float64) Facts {
		clk.SetTime(sec(at))
		f := factsAt(sim, sec(at))
		var prev *v1.PodStatus
		if s, ok := mgr.GetPodStatus(p.UID); ok {
			prev = &s
		}
		s, err := podstate.Generate(f.Input(p, prev))
		if err != nil {
			t.Fatal(err)
		}
		if err := mgr.SetPodStatus(ctx, p, s); err != nil {
			t.Fatal(err)
		}
		if f.Stopped {
			if err := mgr.TerminatePod(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if err := mgr.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		return f
	}
	sync(pod, 0.2)
	del := pod.DeepCopy()
	del.DeletionTimestamp = &metav1.Time{Time: sec(0.5)}
	updateAt(sim, del, sec(0.5))
	f := sync(del, 0.5)
	got, err := srv.GetPod(ctx, "default", "early")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Done || got.Status.Phase != v1.PodFailed {
		t.Errorf("Done %v, server phase %s", f.Done, got.Status.Phase)
	}
}
