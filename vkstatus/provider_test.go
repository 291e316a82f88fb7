package vkstatus

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/sandbox"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

func running(name string) podstate.Container {
	return podstate.Container{Name: name, ContainerID: "vk://" + name,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}}
}

// TestSyncPodAndDeletion: a provider reporting runtime facts through SyncPod gets the
// kubelet's status (the pod virtual-kubelet's NotifyPods receives), UpdateStatus with that
// pod sends nothing more, and a deleted pod ends in the kubelet's order: the terminated
// containers, terminal phase and Ready False in one PATCH, then the UID-preconditioned
// DELETE; virtual-kubelet's earlier force delete is deferred until then.
func TestSyncPodAndDeletion(t *testing.T) {
	w := newWorld(t, Options{}, gatedPod("web"))
	ctx := context.Background()
	if _, err := w.srv.SetCondition("ns", "web", v1.PodCondition{Type: gate, Status: v1.ConditionTrue}); err != nil {
		t.Fatal(err)
	}
	facts := func(stopped bool) status.SyncPodInput {
		pod := w.peek(t, "web")
		in := status.SyncPodInput{
			Pod: pod,
			Runtime: podstate.Runtime{
				Sandboxes:  []sandbox.Status{{ID: "sb", Ready: !stopped, IP: "10.0.0.5"}},
				Containers: []podstate.Container{running("app")},
			},
			Stopped:                    stopped,
			CouldHaveRunningContainers: !stopped,
		}
		if stopped {
			in.Runtime.Terminal = true
			in.Runtime.Containers[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: metav1.NewTime(t0), FinishedAt: metav1.NewTime(t0)}}
		}
		return in
	}
	got, err := w.c.SyncPod(ctx, facts(false))
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady} {
		if s := condStatus(got, ct); s != v1.ConditionTrue {
			t.Errorf("SyncPod's pod: %s = %s, want True", ct, s)
		}
	}
	if got.Status.Phase != v1.PodRunning {
		t.Errorf("phase %s, want Running", got.Status.Phase)
	}
	if ps, ok := w.c.GetPodStatus(got.UID); !ok || ps.Phase != v1.PodRunning {
		t.Errorf("PodStatus = %v, %v", ps, ok)
	}
	w.srv.ResetRequests()
	// virtual-kubelet writes the notified pod back with UpdateStatus.
	if _, err := w.c.Pods("ns").UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	if p := w.srv.Requests(statustest.VerbPatch); p != 1 {
		t.Errorf("%d PATCHes for the first status, want 1", p)
	}

	// Graceful deletion.
	if _, err := w.srv.Update("ns", "web", func(p *v1.Pod) {
		now := metav1.NewTime(t0)
		grace := int64(30)
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &grace
	}); err != nil {
		t.Fatal(err)
	}
	// virtual-kubelet's force delete before the terminal status: deferred, no request.
	w.srv.ResetRequests()
	uid := got.UID
	zero := int64(0)
	if err := w.c.Pods("ns").Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: &zero,
		Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
		t.Fatal(err)
	}
	if d := w.srv.Requests(statustest.VerbDelete); d != 0 {
		t.Fatalf("force delete before the terminal status sent %d DELETEs", d)
	}
	var patched []*v1.Pod
	w.srv.OnWrite(func(e statustest.Event) { patched = append(patched, e.Pod) })
	if _, err := w.c.SyncPod(ctx, facts(true)); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	if _, err := w.srv.Peek("ns", "web"); err == nil {
		t.Fatal("pod still there after its terminal status was written")
	}
	if len(patched) != 2 {
		t.Fatalf("%d writes, want the terminal PATCH and the DELETE", len(patched))
	}
	last := patched[0]
	cs := last.Status.ContainerStatuses[0].State
	if last.Status.Phase != v1.PodSucceeded || condStatus(last, v1.PodReady) != v1.ConditionFalse || cs.Terminated == nil || cs.Running != nil {
		t.Errorf("last status before the DELETE: phase %s, Ready %s, container %+v", last.Status.Phase, condStatus(last, v1.PodReady), cs)
	}
	if d := w.srv.Requests(statustest.VerbDelete); d != 1 {
		t.Errorf("%d DELETEs, want 1", d)
	}
}
