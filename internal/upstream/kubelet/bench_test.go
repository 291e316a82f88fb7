package kubelet_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"

	"github.com/podstatus/podstatus/internal/upstream/kubeletview"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/readiness/readinesstest"
)

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
				in := readinesstest.RunningPod(n, ready, g)
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
		rs := kubeletview.PodStatus(in.Pod, in.Sandboxes, false)
		// b.Loop keeps the calls in its body from being optimized away; no sink is needed.
		for b.Loop() {
			kubeletstatus.GeneratePodReadyToStartContainersCondition(in.Pod, &old, rs)
			kubeletstatus.GeneratePodInitializedCondition(in.Pod, &old, all, in.Phase)
			kubeletstatus.GeneratePodReadyCondition(in.Pod, &old, in.Conditions, all, in.Phase)
			kubeletstatus.GenerateContainersReadyCondition(in.Pod, &old, all, in.Phase)
		}
	})
}
