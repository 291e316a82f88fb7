package podstate_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/podstate"
)

// healthyInput is webPod with its container running and ready.
func healthyInput() podstate.Input {
	return podstate.Input{
		Pod: webPod(),
		Runtime: podstate.Runtime{
			Sandboxes: readySandbox("10.1.0.5"),
			HostIPs:   []string{"10.0.0.1"},
			Containers: []podstate.Container{{
				Name: "app", ContainerID: "containerd://abc", ImageID: "sha256:1",
				State: running(), Readiness: podstate.ProbeSuccess,
			}},
		},
	}
}

// TestGenerateConditionsSizedOnce: the conditions are allocated once, at their length
// (a status is kept by the status manager for the pod's life, and each step allocates
// one).
func TestGenerateConditionsSizedOnce(t *testing.T) {
	disrupted := healthyInput()
	disrupted.Pod.Status.Conditions = append(disrupted.Pod.Status.Conditions, cond(v1.DisruptionTarget, T, "PreemptionByScheduler"))
	terminal := healthyInput()
	terminal.Terminal = true
	terminal.Containers[0].State = exited(0, "Completed")
	for name, in := range map[string]podstate.Input{"healthy": healthyInput(), "disruption target": disrupted, "terminal": terminal} {
		s := generate(t, in)
		if len(s.Conditions) < 5 || cap(s.Conditions) != len(s.Conditions) {
			t.Errorf("%s: %d conditions in a slice of capacity %d, want 5 or more at their length", name, len(s.Conditions), cap(s.Conditions))
		}
	}
}

// BenchmarkGenerate is one status step of a running pod; -benchmem gives its bytes.
func BenchmarkGenerate(b *testing.B) {
	in := healthyInput()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := podstate.Generate(in); err != nil {
			b.Fatal(err)
		}
	}
}
