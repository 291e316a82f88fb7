package status

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/status/statustest"
)

// TestUpstreamFlow replays the end-to-end manager flow recorded from the kubelet v1.37.0
// (pkg/kubelet/status/status_manager.go driven through a fake client) and compares the
// patches sent.
func TestUpstreamFlow(t *testing.T) {
	at := metav1.NewTime(mgrT0)
	gate := v1.PodConditionType("example.com/gate")
	pod := mgrPod()
	pod.Spec.Containers = []v1.Container{{Name: "c"}}
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
	pod.Status = v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: at},
		{Type: gate, Status: v1.ConditionFalse, LastTransitionTime: at},
	}}
	srv := statustest.NewServer(pod)
	m, fc := mgrWithServer(t, srv, Options{})
	fc.Step(time.Minute + 300*time.Millisecond)
	now := metav1.NewTime(fc.Now()).Rfc3339Copy().UTC().Format(time.RFC3339)
	notReady := `containers with unready status: [c]`
	s := v1.PodStatus{
		Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{
			{Type: gate, Status: v1.ConditionFalse, LastTransitionTime: at},
			mgrCond(v1.PodReadyToStartContainers, v1.ConditionTrue),
			mgrCond(v1.PodInitialized, v1.ConditionTrue),
			{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: notReady},
			{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: notReady},
			mgrCond(v1.PodScheduled, v1.ConditionTrue),
		},
		ContainerStatuses: []v1.ContainerStatus{{Name: "c", ContainerID: "containerd://abc", Image: "img", ImageID: "id",
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: at}}}},
	}
	mgrSet(t, m, pod, s)
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=1")
	first := string(srv.Patches()[0].Patch)
	for _, want := range []string{
		`"$setElementOrder/conditions":[{"type":"example.com/gate"},{"type":"PodReadyToStartContainers"},{"type":"Initialized"},{"type":"Ready"},{"type":"ContainersReady"},{"type":"PodScheduled"}]`,
		`{"lastProbeTime":null,"lastTransitionTime":"` + now + `","status":"True","type":"PodReadyToStartContainers"}`,
		`{"lastProbeTime":null,"lastTransitionTime":"` + now + `","message":"` + notReady + `","reason":"ContainersNotReady","status":"False","type":"Ready"}`,
		`"phase":"Running"`, `"startTime":"` + now + `"`, `"containerStatuses":[{"containerID":"containerd://abc"`,
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first patch lacks %s:\n%s", want, first)
		}
	}
	if strings.Contains(first, `"type":"PodScheduled","`) || strings.Contains(first, `"status":"True","type":"PodScheduled"`) {
		t.Errorf("PodScheduled was sent although unchanged:\n%s", first)
	}

	if err := m.SetContainerReadiness(context.Background(), pod.UID, "containerd://abc", true); err != nil {
		t.Fatal(err)
	}
	cached := mgrStatus(t, m, pod.UID)
	if r := mgrGetCond(cached, v1.PodReady); r.Status != v1.ConditionFalse || r.Reason != "ReadinessGatesNotReady" {
		t.Fatalf("Ready with the gate False = %+v", r)
	}
	mgrSync(t, m)
	second := string(srv.Patches()[1].Patch)
	if !strings.Contains(second, `{"message":null,"reason":null,"status":"True","type":"ContainersReady"}`) {
		t.Errorf("second patch: %s", second)
	}

	mgrSet(t, m, pod, cached) // the same status: nothing to send
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=2")

	if err := m.TerminatePod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if r := mgrGetCond(mgrStatus(t, m, pod.UID), v1.ContainersReady); r.Status != v1.ConditionTrue {
		t.Fatalf("TerminatePod changed cached ContainersReady: %+v", r)
	}
	mgrSync(t, m)
	third := string(srv.Patches()[2].Patch)
	for _, want := range []string{
		`"phase":"Failed"`, `"reason":"PodFailed","status":"False","type":"ContainersReady"`,
		`"exitCode":137`, `"reason":"ContainerStatusUnknown"`,
	} {
		if !strings.Contains(third, want) {
			t.Errorf("terminate patch lacks %s:\n%s", want, third)
		}
	}
	got := mgrServerPod(t, srv).Status
	if c := mgrGetCond(got, v1.PodReady); c.Status != v1.ConditionFalse {
		t.Errorf("server Ready %+v in phase Failed", c)
	}
	if c := mgrGetCond(got, gate); c == nil || c.Status != v1.ConditionFalse {
		t.Errorf("gate condition lost: %+v", c)
	}
}
