package statustest_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

// A test drives a status writer against a Server: it injects a throttled PATCH, lets
// another controller write its own condition in between, and checks what the server holds
// and how many requests it took.
func Example() {
	srv := statustest.NewServer(&v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-1"},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	})
	srv.FailNext(statustest.VerbPatch, 1, statustest.TooManyRequests(1))
	srv.OnWrite(func(ev statustest.Event) {
		fmt.Println("watch:", ev.Type, ev.Pod.ResourceVersion, ev.Pod.Status.Phase)
	})

	var client status.Client = srv
	ctx := context.Background()
	pod, _ := client.GetPod(ctx, "ns", "web")
	next := *pod.Status.DeepCopy()
	next.Phase = v1.PodRunning
	patch, _ := status.PatchBytes(pod.UID, pod.Status, next)

	_, err := client.PatchPodStatus(ctx, "ns", "web", patch)
	fmt.Println("first PATCH throttled:", apierrors.IsTooManyRequests(err))

	_, _ = srv.SetCondition("ns", "web", v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue})

	got, err := client.PatchPodStatus(ctx, "ns", "web", patch)
	fmt.Println("retry:", err, got.Status.Phase, len(got.Status.Conditions))
	fmt.Println("requests:", srv.Requests(statustest.VerbGet), srv.Requests(statustest.VerbPatch))
	// Output:
	// first PATCH throttled: true
	// watch: MODIFIED 2 Pending
	// watch: MODIFIED 3 Running
	// retry: <nil> Running 1
	// requests: 1 2
}
