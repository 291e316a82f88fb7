package podsim_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/podstate"
)

// A node agent's loop for one pod: facts → podstate.Generate → (status manager), waking
// up at Next.
func Example() {
	node := podsim.Node{Name: "node-1", HostIPs: []string{"192.168.0.10"}}
	ipam, err := podsim.NewIPAM("10.244.3.0/24") // the node's spec.podCIDR
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start) // the agent's clock; nil is the real one
	cfg := podsim.Config{Node: node, IPAM: ipam, Profile: podsim.Default(), Seed: 42, Clock: clk}

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "0b5f",
			Annotations: map[string]string{podsim.AnnotationSandboxDelay: "1s", podsim.AnnotationImagePullDelay: "2s", podsim.AnnotationStartDelay: "0s"}},
		Spec: v1.PodSpec{NodeName: node.Name, Containers: []v1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
	sim, warnings, err := podsim.New(pod, cfg)
	if err != nil {
		panic(err)
	}
	for _, w := range warnings.Annotations {
		fmt.Println("warning:", w) // a Warning Event on the pod
	}
	var previous *v1.PodStatus
	for now := start; !now.IsZero(); now = sim.Next() {
		clk.SetTime(now)
		facts := sim.Advance()
		status, err := podstate.Generate(facts.Input(pod, previous))
		if err != nil {
			panic(err)
		}
		previous = &status // a node agent hands status to its status.Manager here
		fmt.Println(now.Sub(start), status.Phase, status.PodIP, status.ContainerStatuses[0].Ready)
	}
	// Output:
	// 0s Pending  false
	// 1s Pending 10.244.3.2 false
	// 3s Running 10.244.3.2 true
}
