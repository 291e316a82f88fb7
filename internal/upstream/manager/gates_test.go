package manager

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
)

// gatedPod returns a pod with one container and a readiness gate that is False on the
// server.
func gatedPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod", UID: "gated-uid", Generation: 1},
		Spec: v1.PodSpec{
			NodeName:       "node-1",
			Containers:     []v1.Container{{Name: "c0", Image: "img"}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: gateType}},
		},
		Status: v1.PodStatus{
			Phase: v1.PodPending,
			Conditions: []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: fixedTime},
				{Type: gateType, Status: v1.ConditionFalse, LastTransitionTime: fixedTime},
			},
		},
	}
}

// runningStatus is a Running status of gatedPod with c0 ready or not, the gate as given,
// and the caller's Ready and ContainersReady.
func runningStatus(ready bool, gate v1.ConditionStatus, readyCond, containersReady v1.PodCondition) v1.PodStatus {
	started := true
	return v1.PodStatus{
		Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{
			{Type: gateType, Status: gate},
			{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue, ObservedGeneration: 1},
			{Type: v1.PodInitialized, Status: v1.ConditionTrue, ObservedGeneration: 1},
			readyCond,
			containersReady,
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, ObservedGeneration: 1},
		},
		ContainerStatuses: []v1.ContainerStatus{{
			Name: "c0", Image: "img", ContainerID: "containerd://c0-1", Ready: ready, Started: &started,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
		}},
	}
}

// pair is the kubelet's manager and ours (synced at sync points only) on one pod.
type pair struct {
	t    *testing.T
	ctx  context.Context
	pod  *v1.Pod
	up   *upstreamSide
	ours *ourSide
}

func newPair(t *testing.T, pod *v1.Pod) *pair {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p := &pair{t: t, ctx: ctx, pod: pod, up: newUpstreamSide(ctx, pod, noRunningContainers{}), ours: newOurSide(pod, false, noRunningContainers{})}
	t.Cleanup(p.up.close)
	return p
}

// sync brings both servers up to date (ours with one Sync call).
func (p *pair) sync() {
	p.t.Helper()
	if err := p.up.settle(); err != nil {
		p.t.Fatal(err)
	}
	if err := p.ours.m.Sync(p.ctx); err != nil {
		p.t.Fatal(err)
	}
}

// set hands a status to both.
func (p *pair) set(s v1.PodStatus) {
	p.t.Helper()
	p.up.m.SetPodStatus(quiet, p.pod, s)
	if err := p.ours.m.SetPodStatus(context.Background(), p.pod, s); err != nil {
		p.t.Fatal(err)
	}
}

// ready returns the Ready condition on the kubelet's server and on ours.
func (p *pair) ready() (upstream, ours v1.PodCondition) {
	get := func(s *fakeServer) v1.PodCondition {
		c := conditions.Get(s.pod(p.pod.Namespace, p.pod.Name).Status.Conditions, v1.PodReady)
		if c == nil {
			p.t.Fatal("no Ready condition on the server")
		}
		return *c
	}
	return get(p.up.srv), get(p.ours.srv)
}

// TestCallerReadyKeptWhileGatesUnchanged: for a pod with readiness gates, a Ready the
// caller computed itself (here False with reason "ProviderNotReady" while the container
// and the gate are ready) is kept, as the kubelet's manager keeps it: our Manager
// re-derives Ready from the server's gates only when a gate condition really changed,
// not each time it adopts a newer server copy such as its own PATCH response.
func TestCallerReadyKeptWhileGatesUnchanged(t *testing.T) {
	pod := gatedPod()
	pod.Status.Conditions[1].Status = v1.ConditionTrue // the gate is True
	p := newPair(t, pod)
	callerReady := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ProviderNotReady", ObservedGeneration: 1}
	cr := v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionTrue, ObservedGeneration: 1}
	p.set(runningStatus(true, v1.ConditionTrue, callerReady, cr))
	p.sync()
	p.sync()
	up, ours := p.ready()
	if up.Status != v1.ConditionFalse || up.Reason != "ProviderNotReady" {
		t.Errorf("kubelet: Ready = %s/%s, want the caller's False/ProviderNotReady", up.Status, up.Reason)
	}
	if ours.Status != up.Status || ours.Reason != up.Reason || ours.Message != up.Message {
		t.Errorf("ours: Ready = %s/%s %q, the kubelet's %s/%s %q", ours.Status, ours.Reason, ours.Message, up.Status, up.Reason, up.Message)
	}
	if _, patches, _ := p.ours.srv.requests(pod.Name); patches != 1 {
		t.Errorf("ours sent %d PATCHes, want 1 (the status; nothing to re-derive)", patches)
	}
}

// TestReadinessWithStaleGate: without ObservePod (it is optional), another controller
// sets the gate True, the caller's next status carries the new gate (its container still
// not ready), and then the readiness probe succeeds. The kubelet computes Ready from a
// stale gate: a status that differs from the cached one only in a foreign condition is
// not cached ("Ignoring same status"), so its cached gate is still False and it sends
// Ready False/ReadinessGatesNotReady while the server's gate is True, and stays there
// until the caller reports a new Ready. Ours reads the gate that reached it last — the
// caller's report — and sends Ready True at once: a deliberate difference (the server's
// Ready agrees with its gate one sync earlier), pinned here.
func TestReadinessWithStaleGate(t *testing.T) {
	pod := gatedPod()
	p := newPair(t, pod)
	r := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", ObservedGeneration: 1}
	cr := v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", ObservedGeneration: 1}
	// c0 not ready, gate False; synced: our base now has the gate False.
	p.set(runningStatus(false, v1.ConditionFalse, r, cr))
	p.sync()
	gate := []byte(`{"status":{"conditions":[{"type":"example.com/gate","status":"True"}]}}`)
	for _, s := range []*fakeServer{p.up.srv, p.ours.srv} {
		if _, err := s.patch(pod.Namespace, pod.Name, gate, false); err != nil {
			t.Fatal(err)
		}
	}
	p.set(runningStatus(false, v1.ConditionTrue, r, cr))
	p.up.m.SetContainerReadiness(quiet, pod.UID, containerID("containerd://c0-1"), true)
	p.ours.m.SetContainerReadiness(context.Background(), pod.UID, "containerd://c0-1", true)
	for i := 1; i <= 2; i++ {
		p.sync()
		up, ours := p.ready()
		if up.Status != v1.ConditionFalse || up.Reason != "ReadinessGatesNotReady" {
			t.Fatalf("sync %d: kubelet: Ready = %s/%s, want False/ReadinessGatesNotReady (its cached gate is stale)", i, up.Status, up.Reason)
		}
		if ours.Status != v1.ConditionTrue || ours.Reason != "" {
			t.Errorf("sync %d: ours: Ready = %s/%s %q, want True (the gate the caller reported is True, as on the server)", i, ours.Status, ours.Reason, ours.Message)
		}
	}
}

// TestHeldTerminalPhaseRetried pins a deliberate difference that the sequences avoid
// (see run.upstream): a terminal phase held back while containers could still run. Both
// managers hold it back (the server keeps Running, no DisruptionTarget, Ready not
// forced). Once the containers have stopped, with nothing new reported, ours sends the
// terminal phase on the next Sync; the kubelet's manager only on its periodic 10 s full
// sync (needsReconcile), which this test does not wait for, so its server still says
// Running.
func TestHeldTerminalPhaseRetried(t *testing.T) {
	pod := gatedPod()
	pod.Spec.ReadinessGates = nil
	var running runningFlag
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p := &pair{t: t, ctx: ctx, pod: pod, up: newUpstreamSide(ctx, pod, &running), ours: newOurSide(pod, false, &running)}
	t.Cleanup(p.up.close)
	r := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, ObservedGeneration: 1}
	cr := v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionTrue, ObservedGeneration: 1}
	p.set(runningStatus(true, v1.ConditionTrue, r, cr))
	p.sync()

	running.Store(true)
	p.up.m.TerminatePod(quiet, pod)
	if err := p.ours.m.TerminatePod(ctx, pod); err != nil {
		t.Fatal(err)
	}
	p.sync()
	phase := func(s *fakeServer) v1.PodPhase { return s.pod(pod.Namespace, pod.Name).Status.Phase }
	if u, o := phase(p.up.srv), phase(p.ours.srv); u != v1.PodRunning || o != v1.PodRunning {
		t.Fatalf("while containers could run: phase kubelet %s, ours %s; want both Running (held back)", u, o)
	}
	if up, ours := p.ready(); up.Status != v1.ConditionTrue || ours.Status != v1.ConditionTrue {
		t.Fatalf("while held: Ready kubelet %s, ours %s; want both True (not forced)", up.Status, ours.Status)
	}

	running.Store(false)
	p.sync()
	if u, o := phase(p.up.srv), phase(p.ours.srv); u != v1.PodRunning || o != v1.PodFailed {
		t.Errorf("after the containers stopped: phase kubelet %s, ours %s; want Running (until its 10 s sync) and Failed", u, o)
	}
	if _, ours := p.ready(); ours.Status != v1.ConditionFalse || ours.Reason != "PodFailed" {
		t.Errorf("ours: Ready = %s/%s in the terminal phase, want False/PodFailed", ours.Status, ours.Reason)
	}
}

// TestStaleBaseGateInSetContainerReadiness is the regression test for a bug
// TestSequenceEquivalence found with more sequences than the default (seeds 1365, 5337,
// 6468 and 7515 of the first 12,000): without ObservePod (it is optional),
// SetContainerReadiness read the readiness gates from the last server copy the Manager
// held even when the caller's status, reported later, carried another gate value. The
// kubelet reads them from the cached status; the Manager now reads whichever reached it
// last.
//
// Here: the gate is True and the pod Ready and synced (our base: gate True); another
// controller sets the gate False; the caller reports it (Ready False,
// ReadinessGatesNotReady); the readiness probe then fails and succeeds again. Both
// managers must end with Ready False, ReadinessGatesNotReady on the server.
func TestStaleBaseGateInSetContainerReadiness(t *testing.T) {
	pod := gatedPod()
	pod.Status.Conditions[1].Status = v1.ConditionTrue
	p := newPair(t, pod)
	cr := v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionTrue, ObservedGeneration: 1}
	p.set(runningStatus(true, v1.ConditionTrue, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, ObservedGeneration: 1}, cr))
	p.sync()

	gate := []byte(`{"status":{"conditions":[{"type":"example.com/gate","status":"False"}]}}`)
	for _, s := range []*fakeServer{p.up.srv, p.ours.srv} {
		if _, err := s.patch(pod.Namespace, pod.Name, gate, false); err != nil {
			t.Fatal(err)
		}
	}
	gated := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ReadinessGatesNotReady", ObservedGeneration: 1,
		Message: `the status of pod readiness gate "example.com/gate" is not "True", but False`}
	p.set(runningStatus(true, v1.ConditionFalse, gated, cr))
	for _, ready := range []bool{false, true} {
		p.up.m.SetContainerReadiness(quiet, pod.UID, containerID("containerd://c0-1"), ready)
		p.ours.m.SetContainerReadiness(context.Background(), pod.UID, "containerd://c0-1", ready)
	}
	p.sync()
	up, ours := p.ready()
	if up.Status != gated.Status || up.Reason != gated.Reason || up.Message != gated.Message {
		t.Fatalf("kubelet: Ready = %s/%s %q, want %s/%s %q", up.Status, up.Reason, up.Message, gated.Status, gated.Reason, gated.Message)
	}
	if ours.Status != up.Status || ours.Reason != up.Reason || ours.Message != up.Message {
		t.Errorf("ours: Ready = %s/%s %q, the kubelet %s/%s %q", ours.Status, ours.Reason, ours.Message, up.Status, up.Reason, up.Message)
	}
	p.sync()
	if _, ours := p.ready(); ours.Status != gated.Status || ours.Reason != gated.Reason {
		t.Errorf("ours: Ready = %s/%s after a second Sync, want %s/%s", ours.Status, ours.Reason, gated.Status, gated.Reason)
	}
	if gate := conditions.Get(p.ours.srv.pod(pod.Namespace, pod.Name).Status.Conditions, gateType); gate == nil || gate.Status != v1.ConditionFalse {
		t.Errorf("our server's gate = %+v, want False", gate)
	}
}
