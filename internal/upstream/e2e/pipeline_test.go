package e2e

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// TestPodstatePipeline runs the whole node-agent pipeline against the server: runtime
// facts -> podstate.Generate -> status.Manager -> kube-apiserver, for a pod with an init
// container, a sidecar with a readiness probe, an application container with startup and
// readiness probes, and a readiness gate, through its life: waiting for the sandbox, init,
// sidecar start, ready except for the gate, the gate set by another controller (seen
// through ObservePod, as from a watch), a failed readiness probe reported by the prober
// path (SetContainerReadiness), deletion, termination. Every status Generate builds must
// pass the server's validation, and the server must show the conditions and phase the
// kubelet would.
func TestPodstatePipeline(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, "pipeline-", t0)
	gate := v1.PodConditionType("www.example.com/ingress-ready")
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	always := v1.ContainerRestartPolicyAlways
	p := e.newPod("shop", "app")
	p.Spec.Containers[0].ReadinessProbe = probe
	p.Spec.Containers[0].StartupProbe = probe
	p.Spec.InitContainers = []v1.Container{
		{Name: "setup", Image: image},
		{Name: "proxy", Image: image, RestartPolicy: &always, ReadinessProbe: probe},
	}
	p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
	created, _ := e.schedule(p, t0)
	mon := e.monitorSandbox(created)

	// pass is one sync of the kubelet's pod worker: the server copy (its informer), the
	// cached status, the runtime facts -> Generate -> SetPodStatus -> Sync.
	pass := func(at time.Time, terminal bool, sandboxes []sandbox.Status, facts ...podstate.Container) *v1.Pod {
		t.Helper()
		e.at(at)
		pod := e.get("shop")
		e.mgr.ObservePod(context.Background(), pod)
		in := podstate.Input{Pod: pod, Runtime: podstate.Runtime{Sandboxes: sandboxes, HostIPs: []string{hostIP}, Containers: facts, Terminal: terminal}}
		if prev, ok := e.mgr.GetPodStatus(pod.UID); ok {
			in.OldStatus = &prev
		}
		s, err := podstate.Generate(in)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if err := e.mgr.SetPodStatus(context.Background(), pod, s); err != nil {
			t.Fatalf("SetPodStatus: %v", err)
		}
		e.updates++
		e.sync()
		return e.get("shop")
	}
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	run := func(name string, restarts int32, since time.Time) podstate.Container {
		return podstate.Container{Name: name, ContainerID: containerID(name, restarts), ImageID: image, RestartCount: restarts,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(since)}}}
	}
	done := func(name string, from, to time.Time) podstate.Container {
		return podstate.Container{Name: name, ContainerID: containerID(name, 0), ImageID: image,
			State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
				StartedAt: metav1.NewTime(from), FinishedAt: metav1.NewTime(to), ContainerID: containerID(name, 0)}}}
	}
	phase := func(got *v1.Pod, want v1.PodPhase) {
		t.Helper()
		if got.Status.Phase != want {
			t.Errorf("phase on the server %s, want %s", got.Status.Phase, want)
		}
	}

	// 1. The pod worker starts; no sandbox yet.
	got := pass(sec(1), false, nil)
	phase(got, v1.PodPending)
	expect(t, got, v1.PodReadyToStartContainers, want{v1.ConditionFalse, sec(1), notReady, sandbox.MessageNoSandbox})
	expect(t, got, v1.PodInitialized, want{v1.ConditionFalse, sec(1), readiness.ReasonContainersNotInitialized, "containers with incomplete status: [setup proxy]"})

	// 2. Sandbox ready, the init container runs.
	sb := []sandbox.Status{readySandbox(0, "10.244.7.5", sec(2))}
	got = pass(sec(3), false, sb, run("setup", 0, sec(3)))
	phase(got, v1.PodPending)
	expect(t, got, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: sec(3)})
	if got.Status.PodIP != "10.244.7.5" || got.Status.HostIP != hostIP {
		t.Errorf("podIP %q hostIP %q", got.Status.PodIP, got.Status.HostIP)
	}

	// 3. Init done, the sidecar runs (its readiness probe has no result yet).
	proxy := run("proxy", 0, sec(5))
	got = pass(sec(5), false, sb, done("setup", sec(3), sec(4)), proxy)
	phase(got, v1.PodPending)
	expect(t, got, v1.PodInitialized, want{status: v1.ConditionTrue, ltt: sec(5)})
	expect(t, got, v1.ContainersReady, want{v1.ConditionFalse, sec(1), readiness.ReasonContainersNotReady, "containers with unready status: [proxy app]"})

	// 4. Everything runs and passes its probes; only the readiness gate is missing.
	proxy.Readiness = podstate.ProbeSuccess
	app := run("app", 0, sec(7))
	app.Startup, app.Readiness = podstate.ProbeSuccess, podstate.ProbeSuccess
	got = pass(sec(8), false, sb, done("setup", sec(3), sec(4)), proxy, app)
	phase(got, v1.PodRunning)
	expect(t, got, v1.ContainersReady, want{status: v1.ConditionTrue, ltt: sec(8)})
	expect(t, got, v1.PodReady, want{v1.ConditionFalse, sec(1), readiness.ReasonReadinessGatesNotReady,
		`corresponding condition of pod readiness gate "www.example.com/ingress-ready" does not exist.`})

	// 5. The ingress controller sets its gate; the kubelet's watch hands over the copy and
	// Ready follows at once, with one PATCH.
	e.at(sec(10))
	gateCond := v1.PodCondition{Type: gate, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(sec(9)), Reason: "Programmed", Message: "backend added"}
	e.mgr.ObservePod(context.Background(), e.patchCondition("shop", gateCond))
	_, before, _ := e.client.counts()
	e.sync()
	got = e.get("shop")
	if _, after, _ := e.client.counts(); after != before+1 {
		t.Errorf("%d PATCHes to report the gate, want 1", after-before)
	}
	expect(t, got, v1.PodReady, want{status: v1.ConditionTrue, ltt: sec(10)})
	expect(t, got, gate, want{v1.ConditionTrue, sec(9), "Programmed", "backend added"})

	// 6. The prober sees the application fail its readiness probe, then pass again.
	e.at(sec(20))
	e.mgr.SetContainerReadiness(context.Background(), got.UID, containerID("app", 0), false)
	e.updates++
	e.sync()
	got = e.get("shop")
	expect(t, got, v1.ContainersReady, want{v1.ConditionFalse, sec(20), readiness.ReasonContainersNotReady, "containers with unready status: [app]"})
	expect(t, got, v1.PodReady, want{v1.ConditionFalse, sec(20), readiness.ReasonContainersNotReady, "containers with unready status: [app]"})
	got = pass(sec(25), false, sb, done("setup", sec(3), sec(4)), proxy, app)
	expect(t, got, v1.PodReady, want{status: v1.ConditionTrue, ltt: sec(25)})
	expect(t, got, gate, want{v1.ConditionTrue, sec(9), "Programmed", "backend added"})

	// 7. Deleted; the kubelet stops everything and finishes the pod.
	e.at(sec(60))
	if err := e.other.CoreV1().Pods(e.ns).Delete(e.ctx, "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	stopped := []sandbox.Status{{ID: "sandbox-0", IP: "10.244.7.5", CreatedAt: sec(2)}}
	got = pass(sec(62), true, stopped, done("setup", sec(3), sec(4)), done("proxy", sec(5), sec(62)), done("app", sec(7), sec(61)))
	phase(got, v1.PodSucceeded)
	if err := e.mgr.TerminatePod(context.Background(), got); err != nil {
		t.Fatalf("TerminatePod: %v", err)
	}
	e.updates++
	e.sync()
	got = e.get("shop")
	phase(got, v1.PodSucceeded)
	expect(t, got, v1.PodReadyToStartContainers, want{v1.ConditionFalse, sec(62), notReady, sandbox.MessageNotReady})
	expect(t, got, v1.PodReady, want{v1.ConditionFalse, sec(62), readiness.ReasonPodCompleted, ""})
	expect(t, got, v1.ContainersReady, want{v1.ConditionFalse, sec(62), readiness.ReasonPodCompleted, ""})
	expect(t, got, v1.PodScheduled, want{status: v1.ConditionTrue, ltt: t0})
	expect(t, got, gate, want{v1.ConditionTrue, sec(9), "Programmed", "backend added"})
	mon.expectTransitions(t, got.ResourceVersion, transition{v1.ConditionFalse, sec(1)}, transition{v1.ConditionTrue, sec(3)}, transition{v1.ConditionFalse, sec(62)})
	zero := int64(0)
	if err := e.other.CoreV1().Pods(e.ns).Delete(e.ctx, "shop", metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &got.UID},
	}); err != nil {
		t.Fatalf("final delete: %v", err)
	}
	if _, err := e.other.CoreV1().Pods(e.ns).Get(e.ctx, "shop", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the final delete: %v, want NotFound", err)
	}
	lat := sandboxLatencyFrom(mon)
	report(t, "podstate pipeline: sandbox-creation latency %v, time to Ready (gate included) %v", lat, sec(10).Sub(t0))
	e.requestFigures(t, "podstate pipeline")
}

// sandboxLatencyFrom is the monitoring service's initial sandbox-creation latency (0 if
// none).
func sandboxLatencyFrom(m *sandboxMonitor) time.Duration {
	d, _ := m.initialLatency()
	return d
}
