package readiness_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// The README's first Evaluate: containers ready, a readiness gate not yet True. The
// README shows this body verbatim (internal/readme checks it).
func Example_readinessGate() {
	pod := &v1.Pod{Spec: v1.PodSpec{
		Containers:     []v1.Container{{Name: "app"}, {Name: "metrics"}},
		ReadinessGates: []v1.PodReadinessGate{{ConditionType: "example.com/load-balancer"}},
	}}
	r, err := readiness.Evaluate(readiness.Input{
		Pod:               pod,
		Phase:             v1.PodRunning,
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", Ready: true}, {Name: "metrics", Ready: true}},
		Conditions:        []v1.PodCondition{{Type: "example.com/load-balancer", Status: v1.ConditionFalse}},
		Sandboxes:         []sandbox.Status{{ID: "sb-1", Ready: true, IP: "10.1.0.5"}},
	})
	if err != nil {
		panic(err) // only for malformed input (a *podstatus.InputError): nil pod, duplicate container names
	}
	fmt.Println(r.ContainersReady.Status, r.Ready.Status, r.Ready.Reason)
	fmt.Println(r.Ready.Message)
	// Output:
	// True False ReadinessGatesNotReady
	// the status of pod readiness gate "example.com/load-balancer" is not "True", but False
}
