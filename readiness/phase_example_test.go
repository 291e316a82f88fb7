package readiness_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/readiness"
)

// Phase alone, from container statuses: a Job pod whose containers all exited 0.
func ExamplePhase() {
	pod := &v1.Pod{Spec: v1.PodSpec{
		Containers:    []v1.Container{{Name: "a"}, {Name: "b"}},
		RestartPolicy: v1.RestartPolicyNever,
	}}
	done := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0}}
	phase, err := readiness.Phase(readiness.PhaseInput{
		Pod:               pod,
		ContainerStatuses: []v1.ContainerStatus{{Name: "a", State: done}, {Name: "b", State: done}},
	})
	fmt.Println(phase, err)
	// Output: Succeeded <nil>
}
