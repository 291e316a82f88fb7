package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/internal/kubeletrules"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// TestDeleteAndRecreateSameName: a pod is deleted and a new one is created under the same
// name. Nothing the Manager still holds for the old pod lands on the new one: a Manager
// that has the old pod's server copy sends its PATCH with the old metadata.uid and the
// server refuses it (422); a restarted Manager that only has the old pod object GETs,
// sees another UID and sends nothing. Both drop the old pod's status. The new pod then
// gets a status of its own, with nothing carried over.
func TestDeleteAndRecreateSameName(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	e := newEnv(t, "recreate-", t0)
	created, _ := e.schedule(e.newPod("p", "app"), t0)
	oldUID := created.UID
	sb := []sandbox.Status{readySandbox(0, "10.244.5.5", t0)}
	e.at(t0.Add(time.Second))
	e.kubelet("p", runtimeState{phase: v1.PodRunning, sandboxes: sb, containers: []v1.ContainerStatus{running("app", 0, t0, false)}})
	e.sync()
	oldPod := e.get("p")
	expect(t, oldPod, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: t0.Add(time.Second)})

	// The pod is force-deleted and re-created under the same name, then scheduled again.
	zero := int64(0)
	if err := e.other.CoreV1().Pods(e.ns).Delete(e.ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, fresh := e.schedule(e.newPod("p", "app"), t0.Add(10*time.Second))
	if fresh.UID == oldUID {
		t.Fatalf("the re-created pod has the old UID %s", oldUID)
	}
	_, patchesBefore, _ := e.client.counts()

	// 1. The Manager has the old pod's server copy (its last PATCH response) and a change
	// for it: the PATCH carries the old UID and must be refused.
	e.at(t0.Add(11 * time.Second))
	e.mgr.SetContainerReadiness(context.Background(), oldUID, containerID("app", 0), true)
	e.updates++
	if err := e.mgr.Sync(e.ctx); err != nil {
		t.Errorf("Sync after the re-creation: %v, want nil (the old pod is gone, its status dropped)", err)
	}
	after := e.get("p")
	if after.ResourceVersion != fresh.ResourceVersion || after.UID != fresh.UID {
		t.Errorf("the new pod changed: resourceVersion %s -> %s; conditions %s", fresh.ResourceVersion, after.ResourceVersion, condString(after))
	}
	if _, ok := e.mgr.GetPodStatus(oldUID); ok {
		t.Errorf("the Manager still caches the old pod's status after the server showed another UID")
	}
	_, patches, mismatches := e.client.counts()
	if patches != patchesBefore+1 || mismatches != 1 {
		t.Errorf("%d PATCHes (%d refused for the UID), want exactly 1, refused", patches-patchesBefore, mismatches)
	}

	// 2. A restarted Manager with only the old pod object: it must GET, see the new UID,
	// and send nothing.
	restarted := e.newManager()
	old := oldPod.Status
	if err := restarted.SetPodStatus(context.Background(), oldPod, kubeletStatus(t, oldPod, &old, runtimeState{phase: v1.PodRunning, sandboxes: sb,
		containers: []v1.ContainerStatus{running("app", 0, t0, true)}}, e.now())); err != nil {
		t.Fatalf("SetPodStatus: %v", err)
	}
	e.updates++
	getsBefore, patchesBefore, _ := e.client.counts()
	if err := restarted.Sync(e.ctx); err != nil {
		t.Errorf("Sync of the restarted Manager: %v", err)
	}
	gets, patches, _ := e.client.counts()
	if gets != getsBefore+1 || patches != patchesBefore {
		t.Errorf("restarted Manager sent %d GET and %d PATCH, want 1 GET and no PATCH", gets-getsBefore, patches-patchesBefore)
	}
	if after := e.get("p"); after.ResourceVersion != fresh.ResourceVersion {
		t.Errorf("the new pod changed: resourceVersion %s -> %s; conditions %s", fresh.ResourceVersion, after.ResourceVersion, condString(after))
	}
	if _, ok := restarted.GetPodStatus(oldUID); ok {
		t.Errorf("the restarted Manager still caches the old pod's status")
	}

	// 3. The new pod's own status: nothing of the old pod's (start time, transition times).
	e.at(t0.Add(12 * time.Second))
	sb2 := []sandbox.Status{readySandbox(0, "10.244.5.6", t0.Add(12*time.Second))}
	e.kubelet("p", runtimeState{phase: v1.PodRunning, sandboxes: sb2, containers: []v1.ContainerStatus{running("app", 0, t0.Add(12*time.Second), true)}})
	e.sync()
	got := e.get("p")
	if got.UID != fresh.UID {
		t.Fatalf("UID %s, want the new pod's %s", got.UID, fresh.UID)
	}
	expect(t, got, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: t0.Add(12 * time.Second)})
	expect(t, got, v1.PodReady, want{status: v1.ConditionTrue, ltt: t0.Add(12 * time.Second)})
	expect(t, got, v1.PodScheduled, want{status: v1.ConditionTrue, ltt: t0.Add(10 * time.Second)})
	if got.Status.StartTime == nil || !got.Status.StartTime.Time.Equal(t0.Add(12*time.Second)) || got.Status.PodIP != "10.244.5.6" {
		t.Errorf("new pod startTime %v podIP %q, want %s and 10.244.5.6", got.Status.StartTime, got.Status.PodIP, ts(t0.Add(12*time.Second)))
	}
	gets, patches, mismatches = e.client.counts()
	report(t, "delete and re-create: %d GET, %d PATCH, of which %d refused by the UID precondition (422) and nothing landed on the new pod", gets, patches, mismatches)
}

// TestTerminalPhaseIsFinal: once the server has Failed or Succeeded, Ready and
// ContainersReady are False there, and the phase never changes again, whatever the
// Manager is told afterwards (Running with ready containers, readiness changes, a
// restarted Manager). A watch checks that no intermediate version of the pod left the
// terminal phase either.
func TestTerminalPhaseIsFinal(t *testing.T) {
	t0 := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	sb := []sandbox.Status{readySandbox(0, "10.244.6.5", t0)}
	runningReady := runtimeState{phase: v1.PodRunning, sandboxes: sb, containers: []v1.ContainerStatus{running("app", 0, t0, true)}}

	// start brings a pod to Running and Ready on the server.
	start := func(t *testing.T, prefix string) (*env, *sandboxMonitor) {
		e := newEnv(t, prefix, t0)
		created, _ := e.schedule(e.newPod("p", "app"), t0)
		mon := e.monitorSandbox(created)
		e.at(t0.Add(time.Second))
		e.kubelet("p", runtimeState{phase: v1.PodRunning, sandboxes: sb, containers: []v1.ContainerStatus{running("app", 0, t0, true)}})
		e.sync()
		expect(t, e.get("p"), v1.PodReady, want{status: v1.ConditionTrue, ltt: t0.Add(time.Second)})
		return e, mon
	}
	// stays checks the server's copy after the Manager was told Running again.
	stays := func(t *testing.T, e *env, phase v1.PodPhase, reason string, readyLTT time.Time) {
		t.Helper()
		got := e.get("p")
		if got.Status.Phase != phase {
			t.Errorf("phase on the server %s, want %s: a terminal phase must never change", got.Status.Phase, phase)
		}
		expect(t, got, v1.PodReady, want{v1.ConditionFalse, readyLTT, reason, ""})
		expect(t, got, v1.ContainersReady, want{v1.ConditionFalse, readyLTT, reason, ""})
	}
	// tryToRevive tells the Manager, then a restarted Manager, that the pod runs again.
	tryToRevive := func(t *testing.T, e *env, mon *sandboxMonitor, phase v1.PodPhase, reason string, readyLTT time.Time) {
		t.Helper()
		e.at(e.now().Add(time.Second))
		e.kubelet("p", runningReady)
		e.sync()
		stays(t, e, phase, reason, readyLTT)

		e.at(e.now().Add(time.Second))
		uid := e.get("p").UID
		e.mgr.SetContainerReadiness(context.Background(), uid, containerID("app", 0), false)
		e.mgr.SetContainerReadiness(context.Background(), uid, containerID("app", 0), true)
		e.updates += 2
		e.sync()
		stays(t, e, phase, reason, readyLTT)

		// A restarted kubelet that starts from the server's copy.
		e.at(e.now().Add(time.Second))
		e.mgr = e.newManager()
		e.kubelet("p", runningReady)
		e.sync()
		got := e.get("p")
		stays(t, e, phase, reason, readyLTT)

		mon.waitFor(t, got.ResourceVersion)
		mon.mu.Lock()
		phases := slices.Clone(mon.phases)
		mon.mu.Unlock()
		if !slices.Equal(phases, []v1.PodPhase{v1.PodPending, v1.PodRunning, phase}) {
			t.Errorf("a watcher saw the phases %v, want [Pending Running %s]", phases, phase)
		}
	}

	t.Run("TerminatePod: Failed", func(t *testing.T) {
		e, mon := start(t, "terminal-failed-")
		e.at(t0.Add(5 * time.Second))
		if err := e.mgr.TerminatePod(context.Background(), e.get("p")); err != nil {
			t.Fatalf("TerminatePod: %v", err)
		}
		e.updates++
		e.sync()
		got := e.get("p")
		stays(t, e, v1.PodFailed, readiness.ReasonPodFailed, t0.Add(5*time.Second))
		if cs := got.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil ||
			cs[0].State.Terminated.ExitCode != 137 || cs[0].State.Terminated.Reason != kubeletrules.ReasonContainerStatusUnknown {
			t.Errorf("container statuses %+v, want terminated 137 %s", cs, kubeletrules.ReasonContainerStatusUnknown)
		}
		tryToRevive(t, e, mon, v1.PodFailed, readiness.ReasonPodFailed, t0.Add(5*time.Second))
		e.requestFigures(t, "terminal (Failed)")
	})

	t.Run("Succeeded with a stale Ready True", func(t *testing.T) {
		e, mon := start(t, "terminal-succeeded-")
		e.at(t0.Add(5 * time.Second))
		pod := e.get("p")
		// A caller that reports the container's exit but forgets to recompute the
		// conditions: the cached Ready is still True.
		s, ok := e.mgr.GetPodStatus(pod.UID)
		if !ok {
			t.Fatalf("no cached status")
		}
		s.Phase = v1.PodSucceeded
		s.ContainerStatuses = []v1.ContainerStatus{exited("app", 0, t0, t0.Add(4*time.Second), 0, "Completed")}
		if err := e.mgr.SetPodStatus(context.Background(), pod, s); err != nil {
			t.Fatalf("SetPodStatus: %v", err)
		}
		e.updates++
		e.sync()
		stays(t, e, v1.PodSucceeded, readiness.ReasonPodCompleted, t0.Add(5*time.Second))
		tryToRevive(t, e, mon, v1.PodSucceeded, readiness.ReasonPodCompleted, t0.Add(5*time.Second))
		e.requestFigures(t, "terminal (Succeeded)")
	})

	t.Run("restartPolicy Never: a terminated container stays terminated", func(t *testing.T) {
		e := newEnv(t, "terminal-never-", t0)
		p := e.newPod("p", "app")
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		e.schedule(p, t0)
		e.at(t0.Add(time.Second))
		e.kubelet("p", runtimeState{phase: v1.PodFailed, sandboxes: sb, containers: []v1.ContainerStatus{exited("app", 0, t0, t0.Add(time.Second), 1, "Error")}})
		e.sync()
		pod := e.get("p")
		if pod.Status.Phase != v1.PodFailed {
			t.Fatalf("phase %s, want Failed", pod.Status.Phase)
		}
		// The Manager refuses the illegal transition itself (the server would answer
		// 422), and sends nothing.
		_, patchesBefore, _ := e.client.counts()
		old, _ := e.mgr.GetPodStatus(pod.UID)
		err := e.mgr.SetPodStatus(context.Background(), pod, kubeletStatus(t, pod, &old, runningReady, e.now()))
		if err == nil {
			t.Errorf("SetPodStatus moved a terminated container of a restartPolicy=Never pod back to running without an error")
		}
		e.sync()
		if _, patches, _ := e.client.counts(); patches != patchesBefore {
			t.Errorf("%d PATCHes after a refused update, want none", patches-patchesBefore)
		}
		if got := e.get("p"); got.ResourceVersion != pod.ResourceVersion || got.Status.Phase != v1.PodFailed {
			t.Errorf("the pod changed: phase %s", got.Status.Phase)
		}
	})
}
