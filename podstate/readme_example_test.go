package podstate_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/sandbox"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

// syncPod is the README's podstate snippet (internal/readme checks that the README shows
// it verbatim): generate the status from the runtime's facts and hand it to a Manager.
func syncPod(ctx context.Context, manager *status.Manager, pod *v1.Pod, cached *v1.PodStatus, started metav1.Time) error {
	status, err := podstate.Generate(podstate.Input{
		Pod:       pod,    // from your informer: spec + server status
		OldStatus: cached, // *v1.PodStatus you last reported, or nil
		Runtime: podstate.Runtime{
			Sandboxes: []sandbox.Status{{ID: "sb-1", Ready: true, IP: "10.1.0.5"}},
			HostIPs:   []string{"10.0.0.1"},
			Containers: []podstate.Container{{
				Name: "app", ContainerID: "containerd://4f1c",
				State:     v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: started}},
				Readiness: podstate.ProbeSuccess,
			}},
		},
	})
	if err != nil {
		return err // only for malformed input (a *podstatus.InputError)
	}
	return manager.SetPodStatus(ctx, pod, status) // sets lastTransitionTime, startTime, observedGeneration
}

// From runtime facts to a cached status, as the README shows.
func Example_manager() {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", ReadinessProbe: &v1.Probe{}}}},
	}
	m := status.NewManager(statustest.NewServer(pod), status.Options{})
	started := metav1.NewTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	if err := syncPod(context.Background(), m, pod, nil, started); err != nil {
		fmt.Println(err)
		return
	}
	s, _ := m.GetPodStatus(pod.UID)
	fmt.Println(s.Phase, s.PodIP, s.ContainerStatuses[0].Ready)
	// Output: Running 10.1.0.5 true
}
