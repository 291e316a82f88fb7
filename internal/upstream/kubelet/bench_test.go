package kubelet_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// benchInput builds a running pod with n containers (the first a sidecar when n > 1),
// gateCount readiness gates whose conditions are True, and a ready sandbox with an IP.
// When ready is false the last regular container is not ready. It has the same shape as
// the inputs of readiness's own BenchmarkEvaluate.
func benchInput(n int, ready bool, gateCount int) readiness.Input {
	always := v1.ContainerRestartPolicyAlways
	started := true
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "pod", UID: "uid-bench", Generation: 2}}
	in := readiness.Input{Pod: pod, Phase: v1.PodRunning, OldStatus: &v1.PodStatus{}, InitContainerStatuses: []v1.ContainerStatus{}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("container-%d", i)
		s := v1.ContainerStatus{Name: name, Ready: true, Started: &started, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
		if i == 0 && n > 1 {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: name, RestartPolicy: &always})
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

// benchCases runs f for every input shape: 1, 3 and 10 containers, ready or not, with 0
// or 2 readiness gates, under the names BenchmarkX/<n>containers/<ready|notready>/gates<g>.
func benchCases(b *testing.B, f func(b *testing.B, in readiness.Input)) {
	for _, n := range []int{1, 3, 10} {
		for _, ready := range []bool{true, false} {
			for _, g := range []int{0, 2} {
				state := "notready"
				if ready {
					state = "ready"
				}
				in := benchInput(n, ready, g)
				b.Run(fmt.Sprintf("%dcontainers/%s/gates%d", n, state, g), func(b *testing.B) {
					// Both sides must agree on the input before it is timed.
					ours, err := readiness.Evaluate(in)
					if err != nil {
						b.Fatal(err)
					}
					if d := diff(ours, upstream(in, false)); d != "" {
						b.Fatalf("ours and the kubelet differ:\n%s", d)
					}
					if (ours.Ready.Status == v1.ConditionTrue) != ready {
						b.Fatalf("input ready=%v but Ready is %s", ready, ours.Ready.Status)
					}
					b.ReportAllocs()
					f(b, in)
				})
			}
		}
	}
}

// BenchmarkEvaluate: readiness.Evaluate computing all four conditions.
func BenchmarkEvaluate(b *testing.B) {
	benchCases(b, func(b *testing.B, in readiness.Input) {
		for b.Loop() {
			if _, err := readiness.Evaluate(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUpstream: the kubelet v1.37.0's four generators on the same input. The joined
// status list and the runtime status are built once, outside the timed loop, so only the
// generators are measured.
func BenchmarkUpstream(b *testing.B) {
	benchCases(b, func(b *testing.B, in readiness.Input) {
		old := *in.OldStatus
		all := append(in.InitContainerStatuses, in.ContainerStatuses...)
		rs := runtimeStatus(in.Pod, in.Sandboxes, false)
		var sink v1.PodCondition
		for b.Loop() {
			sink = kubeletstatus.GeneratePodReadyToStartContainersCondition(in.Pod, &old, rs)
			sink = kubeletstatus.GeneratePodInitializedCondition(in.Pod, &old, all, in.Phase)
			sink = kubeletstatus.GeneratePodReadyCondition(in.Pod, &old, in.Conditions, all, in.Phase)
			sink = kubeletstatus.GenerateContainersReadyCondition(in.Pod, &old, all, in.Phase)
		}
		_ = sink
	})
}
