package status_test

import (
	"context"
	"fmt"
	"log"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/sandbox"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

// A node agent hands SyncPod what its runtime knows about a pod; the Manager builds the
// kubelet's status from it, sends it, and deletes the pod once it has finished and its
// terminal status is on the server. Here the API server is statustest's in-memory one,
// which is also a status.PodDeleter (as status/kubeclient's Client is).
func ExampleManager_SyncPod() {
	client := statustest.NewServer(&v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "app:1"}}},
	})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := status.NewManager(client, status.Options{Clock: clocktesting.NewFakeClock(t0), Deleter: client})
	ctx := context.Background()
	pod, _ := client.Peek("default", "web") // the pod as your informer delivers it
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}

	syncPod := func(pod *v1.Pod, app podstate.Container, terminal, stopped bool) {
		// Whenever the runtime's facts about a pod change, and on every watch event of the pod:
		st, err := m.SyncPod(ctx, status.SyncPodInput{
			Pod: pod, // the newest copy from the API server
			Runtime: podstate.Runtime{
				Sandboxes:  []sandbox.Status{{ID: "sb-1", Ready: !terminal, IP: "10.244.0.7"}},
				HostIPs:    []string{"10.0.0.1"},
				Containers: []podstate.Container{app},
				Terminal:   terminal, // the pod worker decided no container runs again
			},
			Stopped:                    stopped,  // terminal, and every container is gone
			CouldHaveRunningContainers: !stopped, // a container may still run until then
		})
		if err != nil {
			log.Print(err) // input the runtime should not have produced
		}
		_ = m.Sync(ctx) // Run does this in the background
		fmt.Println(st.Phase, "Ready:", conditions.Get(st.Conditions, v1.PodReady).Status)
	}

	syncPod(pod, podstate.Container{Name: "app", ContainerID: "containerd://a1", State: running}, false, false)

	// A user deletes the pod; the runtime stops its container.
	pod, _ = client.Update("default", "web", func(p *v1.Pod) {
		ts := metav1.NewTime(t0.Add(time.Minute))
		p.DeletionTimestamp = &ts
	})
	exited := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
	syncPod(pod, podstate.Container{Name: "app", ContainerID: "containerd://a1", State: exited}, true, true)

	_, err := client.Peek("default", "web")
	fmt.Println("gone:", err != nil, "PATCH:", client.Requests(statustest.VerbPatch), "DELETE:", client.Requests(statustest.VerbDelete))
	// Output:
	// Running Ready: True
	// Succeeded Ready: False
	// gone: true PATCH: 2 DELETE: 1
}
