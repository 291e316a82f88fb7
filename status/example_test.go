package status_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

// A node agent caches the statuses it computes and lets the Manager keep the API server
// up to date. Here the API server is statustest's in-memory one and the clock is fake;
// a real agent passes a status.Client over client-go and calls Run in a goroutine.
func ExampleNewManager() {
	srv := statustest.NewServer(&v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app"}}},
	})
	m := status.NewManager(srv, status.Options{
		Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
	})

	// The pod as a watch delivers it: the Manager patches against it, with no GET.
	pod, _ := srv.Peek("default", "web")
	m.ObservePod(context.Background(), pod)

	err := m.SetPodStatus(context.Background(), pod, v1.PodStatus{
		Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue},
			{Type: v1.ContainersReady, Status: v1.ConditionTrue},
			{Type: v1.PodReady, Status: v1.ConditionTrue},
		},
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", ContainerID: "containerd://1", Ready: true}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Sync(context.Background()); err != nil {
		fmt.Println(err)
		return
	}

	got, _ := srv.Peek("default", "web")
	for _, c := range got.Status.Conditions {
		fmt.Println(c.Type, c.Status, c.LastTransitionTime.UTC().Format(time.RFC3339))
	}
	fmt.Println("GET:", srv.Requests(statustest.VerbGet), "PATCH:", srv.Requests(statustest.VerbPatch))
	// Output:
	// PodScheduled True 2026-01-01T00:00:00Z
	// ContainersReady True 2026-01-01T00:00:00Z
	// Ready True 2026-01-01T00:00:00Z
	// GET: 0 PATCH: 1
}
