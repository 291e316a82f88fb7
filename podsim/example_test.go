package podsim_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/podstate"
)

// A node agent's loop for one pod: facts → podstate.Generate → (status manager), waking
// up at Next.
func Example() {
	node := podsim.Node{Name: "node-1", PodCIDR: "10.244.3.0/24", HostIPs: []string{"192.168.0.10"}}
	ipam, err := podsim.NewIPAM(node.PodCIDR)
	if err != nil {
		panic(err)
	}
	cfg := podsim.Config{Node: node, IPAM: ipam, Profile: podsim.Default(), Seed: 42}

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "0b5f",
			Annotations: map[string]string{podsim.AnnotationSandboxDelay: "1s", podsim.AnnotationImagePullDelay: "2s", podsim.AnnotationStartDelay: "0s"}},
		Spec: v1.PodSpec{NodeName: node.Name, Containers: []v1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sim, errs := podsim.New(pod, cfg, start)
	for _, err := range errs {
		fmt.Println("warning:", err) // a Warning Event on the pod
	}
	var previous *v1.PodStatus
	for now := start; !now.IsZero(); now = sim.Next() {
		facts := sim.Facts(now)
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
