package readiness_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// benchInput builds a running pod with n regular containers (the first of them a
// sidecar when n > 1) and the given number of readiness gates. When ready is false the
// last container is not ready. The same shapes are used by the side-by-side benchmarks
// in internal/upstream.
func benchInput(n int, ready bool, gateCount int) readiness.Input {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "pod", UID: "uid-bench", Generation: 2}}
	in := readiness.Input{Pod: pod, Phase: v1.PodRunning, OldStatus: &v1.PodStatus{}}
	in.InitContainerStatuses = []v1.ContainerStatus{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("container-%d", i)
		s := v1.ContainerStatus{Name: name, Ready: true, Started: ptr(true),
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
		if i == 0 && n > 1 {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: name, RestartPolicy: always()})
			in.InitContainerStatuses = append(in.InitContainerStatuses, s)
			continue
		}
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: name})
		in.ContainerStatuses = append(in.ContainerStatuses, s)
	}
	if !ready {
		in.ContainerStatuses[len(in.ContainerStatuses)-1].Ready = false
	}
	for i := 0; i < gateCount; i++ {
		t := v1.PodConditionType(fmt.Sprintf("example.com/gate-%d", i))
		pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, v1.PodReadinessGate{ConditionType: t})
		in.Conditions = append(in.Conditions, v1.PodCondition{Type: t, Status: v1.ConditionTrue})
	}
	in.Sandboxes = []sandbox.Status{{ID: "sandbox-1", Attempt: 1, Ready: true, IP: "10.1.0.1"}, {ID: "sandbox-0"}}
	return in
}

// BenchmarkEvaluate measures Evaluate on ready and not-ready pods of 1, 3 and 10
// containers, with and without readiness gates. A ready pod must not allocate.
func BenchmarkEvaluate(b *testing.B) {
	for _, n := range []int{1, 3, 10} {
		for _, ready := range []bool{true, false} {
			for _, g := range []int{0, 2} {
				state := "notready"
				if ready {
					state = "ready"
				}
				in := benchInput(n, ready, g)
				b.Run(fmt.Sprintf("%dcontainers/%s/gates%d", n, state, g), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if _, err := readiness.Evaluate(in); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkExplain measures Explain on the not-ready inputs.
func BenchmarkExplain(b *testing.B) {
	for _, n := range []int{1, 10} {
		in := benchInput(n, false, 2)
		b.Run(fmt.Sprintf("%dcontainers", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := readiness.Explain(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
