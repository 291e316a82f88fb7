package readinesstest_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/readiness/readinesstest"
)

func TestRunningPod(t *testing.T) {
	for _, n := range []int{1, 3, 10} {
		for _, gates := range []int{0, 2} {
			for _, ready := range []bool{true, false} {
				t.Run(fmt.Sprintf("%d/%d/%v", n, gates, ready), func(t *testing.T) {
					in := readinesstest.RunningPod(n, ready, gates)
					if got := len(in.Pod.Spec.InitContainers) + len(in.Pod.Spec.Containers); got != n {
						t.Fatalf("%d containers, want %d", got, n)
					}
					if len(in.Pod.Spec.ReadinessGates) != gates {
						t.Fatalf("%d gates, want %d", len(in.Pod.Spec.ReadinessGates), gates)
					}
					r, err := readiness.Evaluate(in)
					if err != nil {
						t.Fatal(err)
					}
					want := v1.ConditionFalse
					if ready {
						want = v1.ConditionTrue
					}
					if r.Ready.Status != want || r.Initialized.Status != v1.ConditionTrue || r.PodReadyToStartContainers.Status != v1.ConditionTrue {
						t.Fatalf("Ready %s (want %s), Initialized %s, PodReadyToStartContainers %s",
							r.Ready.Status, want, r.Initialized.Status, r.PodReadyToStartContainers.Status)
					}
				})
			}
		}
	}
}
