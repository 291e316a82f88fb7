package vkstatus

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// creatingPod is what a provider reports before its runtime made anything for the pod:
// Pending, every container waiting in ContainerCreating, no pod IP, no conditions.
func creatingPod(p *v1.Pod) *v1.Pod {
	pp := p.DeepCopy()
	pp.Status = v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{{
		Name: "app", Image: "nginx",
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	}}}
	return pp
}

// TestSandboxInferred: for a provider that reports no runtime facts, PodReadyToStartContainers
// is the kubelet v1.37.0's for the sandbox its status shows (the messages are
// pkg/kubelet/types/constants.go's PodSandboxNotReadyMsg values, restated here as the
// oracle): none before any sign of one, True once it has a pod IP, not ready once the signs
// are gone after it had one, and True for a hostNetwork pod with the node's IP.
func TestSandboxInferred(t *testing.T) {
	const (
		noSandbox = "no pod sandbox exists"
		notReady  = "pod sandbox is not ready"
	)
	pod := gatedPod("web")
	pod.Spec.ReadinessGates = nil
	w := newWorld(t, Options{}, pod)
	ctx := context.Background()
	step := func(name string, pp *v1.Pod, want v1.ConditionStatus, msg string) {
		t.Helper()
		if _, err := w.c.Pods("ns").UpdateStatus(ctx, pp, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := w.sync(t); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := cond(w.peek(t, "web"), v1.PodReadyToStartContainers)
		if c == nil || c.Status != want || c.Message != msg {
			t.Errorf("%s: PodReadyToStartContainers %+v, want %s with message %q", name, c, want, msg)
		}
		if want == v1.ConditionFalse && c != nil && c.Reason != "PodSandboxNotReady" {
			t.Errorf("%s: reason %q, want PodSandboxNotReady", name, c.Reason)
		}
	}
	step("first status", creatingPod(pod), v1.ConditionFalse, noSandbox)
	step("running", providerPod(pod), v1.ConditionTrue, "")
	stopped := creatingPod(pod)
	step("no sign after a sandbox existed", stopped, v1.ConditionFalse, notReady)

	// The provider's own PodReadyToStartContainers False is not a sign of a sandbox.
	pod2 := gatedPod("own")
	pod2.Spec.ReadinessGates = nil
	w = newWorld(t, Options{}, pod2)
	own := creatingPod(pod2)
	own.Status.Conditions = []v1.PodCondition{{Type: v1.PodReadyToStartContainers, Status: v1.ConditionFalse}}
	if _, err := w.c.Pods("ns").UpdateStatus(ctx, own, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	if c := cond(w.peek(t, "own"), v1.PodReadyToStartContainers); c == nil || c.Message != noSandbox {
		t.Errorf("provider's own False before any sandbox: %+v, want message %q", c, noSandbox)
	}

	host := gatedPod("host")
	host.Spec.ReadinessGates = nil
	host.Spec.HostNetwork = true
	w = newWorld(t, Options{}, host)
	if _, err := w.c.Pods("ns").UpdateStatus(ctx, providerPod(host), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	if c := cond(w.peek(t, "host"), v1.PodReadyToStartContainers); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("hostNetwork pod: PodReadyToStartContainers %+v, want True", c)
	}
}
