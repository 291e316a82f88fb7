package podstate_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/accept"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/podstate/podstatetest"
	"github.com/podstatus/podstatus/readiness"
)

// drawInput draws an input with podstatetest.Input.
func drawInput(t *rapid.T, o podstatetest.Options) podstate.Input {
	return podstatetest.Input(o).Draw(t, "input")
}

func terminalPhase(p v1.PodPhase) bool { return accept.Terminal(p) }

// A terminal phase is never left: the server's never changes; a cached one is kept unless
// the kubelet itself derives the other terminal phase (upstream lets a Succeeded that was
// never sent become Failed, but never Running or Pending); and a generated terminal phase
// survives being fed back as the previous status.
func TestPropertyTerminalPhaseSticks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := drawInput(t, podstatetest.Options{Resize: true})
		s, err := podstate.Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		api := in.Pod.Status.Phase
		switch {
		case terminalPhase(api):
			if s.Phase != api {
				t.Fatalf("server phase %s, generated %s", api, s.Phase)
			}
		case in.OldStatus != nil && terminalPhase(in.OldStatus.Phase):
			if !terminalPhase(s.Phase) {
				t.Fatalf("previous phase %s, generated %s", in.OldStatus.Phase, s.Phase)
			}
			if in.Eviction != nil && s.Phase != v1.PodFailed {
				t.Fatalf("evicted: phase %s", s.Phase)
			}
		}
		// Feeding the result back as the previous status keeps a terminal phase.
		if terminalPhase(s.Phase) {
			in.OldStatus = &s
			again, err := podstate.Generate(in)
			if err != nil {
				t.Fatal(err)
			}
			if again.Phase != s.Phase {
				t.Fatalf("terminal %s became %s on the next status", s.Phase, again.Phase)
			}
		}
	})
}

// Ready is True only in phase Running, for runtime facts a real runtime can report.
func TestPropertyReadyOnlyWhenRunning(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := drawInput(t, podstatetest.Options{Coherent: true, AtLeastOneContainer: true, Resize: true})
		s, err := podstate.Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		if r := conditions.Get(s.Conditions, v1.PodReady); r == nil {
			t.Fatal("no Ready condition")
		} else if r.Status == v1.ConditionTrue && s.Phase != v1.PodRunning {
			t.Fatalf("Ready True in phase %s", s.Phase)
		}
	})
}

// Under restartPolicy Never, a pod whose regular containers all exited 0 Succeeded.
func TestPropertyNeverAllExitedZeroSucceeded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := drawInput(t, podstatetest.Options{Coherent: true, NoSidecars: true, NoContainerPolicies: true, AtLeastOneContainer: true, Resize: true})
		pod := in.Pod
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		if pod.Status.Phase == v1.PodFailed {
			pod.Status.Phase = v1.PodRunning
		}
		if in.OldStatus != nil && in.OldStatus.Phase == v1.PodFailed {
			in.OldStatus.Phase = v1.PodRunning
		}
		if in.OldStatus != nil {
			// The init containers completed; a failure the previous status remembers for
			// one without a fact would fail the pod.
			in.OldStatus.InitContainerStatuses = nil
		}
		in.Eviction = nil
		var facts []podstate.Container
		for _, f := range in.Containers {
			if findSpec(pod.Spec.InitContainers, f.Name) {
				f.State = exited(0, "Completed") // the init containers completed
				facts = append(facts, f)
			}
		}
		for _, c := range pod.Spec.Containers {
			f := podstatetest.Fact(c.Name).Draw(t, "fact")
			f.State = exited(0, "Completed")
			facts = append(facts, f)
		}
		in.Containers = facts
		s, err := podstate.Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		if s.Phase != v1.PodSucceeded {
			t.Fatalf("phase %s, want Succeeded", s.Phase)
		}
	})
}

func findSpec(cs []v1.Container, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

// The conditions come in the kubelet's order, the server's foreign conditions first in
// server order (DisruptionTarget replaced in place by the previous status's), and the
// kubelet-owned ones are exactly what readiness.Evaluate computes for the same inputs.
func TestPropertyConditions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := drawInput(t, podstatetest.Options{Resize: true})
		s, err := podstate.Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		base := in.Pod.Status
		if in.OldStatus != nil {
			base = *in.OldStatus
		}
		var want []v1.PodCondition
		for _, c := range in.Pod.Status.Conditions {
			if !(conditions.Ownership{}).Owned(c.Type) {
				want = append(want, c)
			}
		}
		if !in.Terminal {
			want = append(want, in.Resize...)
		}
		if dt := conditions.Get(base.Conditions, v1.DisruptionTarget); dt != nil {
			if i := conditions.Index(want, v1.DisruptionTarget); i >= 0 && i < len(want)-len(inResize(in)) {
				want[i] = *dt
			} else {
				want = append(want, *dt)
			}
		}
		n := len(want)
		if len(s.Conditions) < n {
			t.Fatalf("%d conditions, fewer than the %d carried over", len(s.Conditions), n)
		}
		if d := cmp.Diff(want, s.Conditions[:n], cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("carried-over conditions (-want +got):\n%s", d)
		}
		r, err := readiness.Evaluate(readiness.Input{
			Pod: in.Pod, Phase: s.Phase,
			InitContainerStatuses: s.InitContainerStatuses, ContainerStatuses: s.ContainerStatuses,
			Conditions: s.Conditions[:n+2], // what Ready reads: everything before it
			Sandboxes:  in.Sandboxes, OldStatus: &base,
		})
		if err != nil {
			t.Fatal(err)
		}
		owned := []v1.PodCondition{r.PodReadyToStartContainers, r.Initialized, r.Ready, r.ContainersReady,
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, ObservedGeneration: in.Pod.Generation}}
		rest := s.Conditions[n:]
		if len(rest) > len(owned) {
			if last := rest[len(rest)-1]; last.Type != v1.AllContainersRestarting || len(rest) != len(owned)+1 {
				t.Fatalf("unexpected conditions after PodScheduled: %+v", rest[len(owned):])
			}
			rest = rest[:len(owned)]
		}
		if d := cmp.Diff(owned, rest); d != "" {
			t.Fatalf("kubelet-owned conditions differ from readiness.Evaluate (-evaluate +generate):\n%s", d)
		}
	})
}

func inResize(in podstate.Input) []v1.PodCondition {
	if in.Terminal {
		return nil
	}
	return in.Resize
}

// Generate never modifies its input.
func TestPropertyPure(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := drawInput(t, podstatetest.Options{Resize: true})
		pod := in.Pod.DeepCopy()
		var prev *v1.PodStatus
		if in.OldStatus != nil {
			prev = in.OldStatus.DeepCopy()
		}
		facts := append([]podstate.Container(nil), in.Containers...)
		a, err := podstate.Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := podstate.Generate(in)
		if d := cmp.Diff(a, b); d != "" {
			t.Fatalf("two calls differ:\n%s", d)
		}
		if d := cmp.Diff(pod, in.Pod); d != "" {
			t.Fatalf("pod modified:\n%s", d)
		}
		if d := cmp.Diff(prev, in.OldStatus); d != "" {
			t.Fatalf("previous status modified:\n%s", d)
		}
		if d := cmp.Diff(facts, in.Containers); d != "" {
			t.Fatalf("facts modified:\n%s", d)
		}
	})
}
