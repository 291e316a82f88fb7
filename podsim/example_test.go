package podsim_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

// A node agent's loop for one pod: a Worker steps its simulated runtime and hands the
// facts to a status.Manager, waking up at Step.Next.
func Example() {
	node := podsim.Node{Name: "node-1", HostIPs: []string{"192.168.0.10"}}
	ipam, err := podsim.NewIPAM("10.244.3.0/24") // the node's spec.podCIDR
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start) // the agent's clock; nil is the real one
	cfg := podsim.Config{Node: node, Profile: podsim.Default(), Seed: 42, Clock: clk}

	server := statustest.NewServer() // an API server: kubeclient.New(...) in a real agent
	pod, err := server.Create(&v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default",
			Annotations: map[string]string{podsim.AnnotationSandboxDelay: "1s", podsim.AnnotationImagePullDelay: "2s", podsim.AnnotationStartDelay: "0s"}},
		Spec: v1.PodSpec{NodeName: node.Name, Containers: []v1.Container{{Name: "app", Image: "nginx:1.27"}}},
	})
	if err != nil {
		panic(err)
	}
	manager := status.NewManager(server, status.Options{Clock: clk, Deleter: server})
	worker, warnings, err := podsim.NewWorker(pod, manager, ipam, cfg)
	if err != nil {
		panic(err)
	}
	for _, w := range warnings.Annotations {
		fmt.Println("warning:", w) // a Warning Event on the pod
	}
	for now := start; !now.IsZero(); {
		clk.SetTime(now)
		step, err := worker.Sync(context.Background(), pod) // pod: the newest copy from the informer
		if err != nil {
			panic(err)
		}
		if err := manager.Sync(context.Background()); err != nil { // manager.Run in a real agent
			panic(err)
		}
		fmt.Println(now.Sub(start), step.Status.Phase, step.Status.PodIP, step.Status.ContainerStatuses[0].Ready)
		now = step.Next
	}
	fmt.Println(server.Requests(statustest.VerbPatch), "PATCHes")
	// Output:
	// 0s Pending  false
	// 1s Pending 10.244.3.2 false
	// 3s Running 10.244.3.2 true
	// 3 PATCHes
}
