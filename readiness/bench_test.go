package readiness_test

import (
	"fmt"
	"testing"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/readiness/readinesstest"
)

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
				in := readinesstest.RunningPod(n, ready, g)
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
		in := readinesstest.RunningPod(n, false, 2)
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
