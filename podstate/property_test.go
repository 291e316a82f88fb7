package podstate_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// genOpts shapes the random inputs.
type genOpts struct {
	// coherent: regular containers have runtime facts only once every regular init
	// container has completed, as a real runtime starts them.
	coherent bool
	// sidecars: init containers may be sidecars.
	sidecars bool
	// containerPolicies: containers may have their own restartPolicy and rules.
	containerPolicies bool
}

var (
	foreignTypes = []v1.PodConditionType{"example.com/a", "example.com/b", "www.example.com/feature-1", v1.DisruptionTarget}
	ownedTypes   = []v1.PodConditionType{v1.PodReady, v1.ContainersReady, v1.PodInitialized, v1.PodScheduled, v1.PodReadyToStartContainers, v1.PodResizePending, v1.AllContainersRestarting}
	gateTypes    = []v1.PodConditionType{"example.com/a", "example.com/b", "www.example.com/feature-1", v1.PodInitialized, v1.PodReadyToStartContainers}
	statusValues = []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown}
	phases       = []v1.PodPhase{"", v1.PodPending, v1.PodPending, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodSucceeded, v1.PodFailed}
)

func drawConditions(t *rapid.T, label string) []v1.PodCondition {
	types := rapid.SliceOfNDistinct(rapid.SampledFrom(append(append([]v1.PodConditionType{}, foreignTypes...), ownedTypes...)), 0, 6, func(x v1.PodConditionType) v1.PodConditionType { return x }).Draw(t, label)
	out := make([]v1.PodCondition, len(types))
	for i, ty := range types {
		out[i] = v1.PodCondition{
			Type:   ty,
			Status: rapid.SampledFrom(statusValues).Draw(t, label+"-status"),
			Reason: rapid.SampledFrom([]string{"", "R1", "R2"}).Draw(t, label+"-reason"),
		}
	}
	return out
}

func drawState(t *rapid.T, label string, allowZero bool) v1.ContainerState {
	kinds := []string{"running", "waiting", "exit0", "exit1", "exit137"}
	if allowZero {
		kinds = append(kinds, "unknown")
	}
	switch rapid.SampledFrom(kinds).Draw(t, label) {
	case "running":
		return running()
	case "waiting":
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: rapid.SampledFrom([]string{"", "CrashLoopBackOff", "ImagePullBackOff"}).Draw(t, label+"-reason")}}
	case "exit0":
		return exited(0, "Completed")
	case "exit1":
		return exited(1, "Error")
	case "exit137":
		return exited(137, "OOMKilled")
	}
	return v1.ContainerState{}
}

func drawFact(t *rapid.T, name string) podstate.Container {
	if rapid.Bool().Draw(t, name+"-healthy") {
		// Up and passing its probes, the common case.
		return podstate.Container{Name: name, ContainerID: "containerd://" + name, State: running(),
			Startup: podstate.ProbeSuccess, Readiness: podstate.ProbeSuccess}
	}
	f := podstate.Container{
		Name:         name,
		ContainerID:  "containerd://" + name + rapid.SampledFrom([]string{"1", "2"}).Draw(t, name+"-id"),
		RestartCount: int32(rapid.IntRange(0, 3).Draw(t, name+"-restarts")),
		State:        drawState(t, name+"-state", true),
		SandboxID:    rapid.SampledFrom([]string{"", "sb-new", "sb-old"}).Draw(t, name+"-sandbox"),
		Startup:      podstate.ProbeResult(rapid.IntRange(0, 2).Draw(t, name+"-startup")),
		Readiness:    podstate.ProbeResult(rapid.IntRange(0, 2).Draw(t, name+"-readiness")),
	}
	if rapid.Bool().Draw(t, name+"-has-last") {
		f.LastTerminationState = drawState(t, name+"-last", false)
		if f.LastTerminationState.Terminated == nil {
			f.LastTerminationState = exited(1, "Error")
		}
	}
	return f
}

func drawContainer(t *rapid.T, name string, o genOpts, init bool) v1.Container {
	c := v1.Container{Name: name, Image: "img-" + name}
	if init && o.sidecars && rapid.Bool().Draw(t, name+"-sidecar") {
		p := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &p
	}
	if !init || isSidecar(c) {
		if rapid.Bool().Draw(t, name+"-readiness-probe") {
			c.ReadinessProbe = &v1.Probe{}
		}
		if rapid.Bool().Draw(t, name+"-startup-probe") {
			c.StartupProbe = &v1.Probe{}
		}
	}
	if o.containerPolicies && c.RestartPolicy == nil && rapid.Bool().Draw(t, name+"-policy") {
		p := rapid.SampledFrom([]v1.ContainerRestartPolicy{v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}).Draw(t, name+"-policy-value")
		if !(init && p == v1.ContainerRestartPolicyAlways) {
			c.RestartPolicy = &p
		}
		if c.RestartPolicy != nil && rapid.Bool().Draw(t, name+"-rule") {
			c.RestartPolicyRules = []v1.ContainerRestartRule{{
				Action:    rapid.SampledFrom([]v1.ContainerRestartRuleAction{v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers}).Draw(t, name+"-action"),
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{137}},
			}}
		}
	}
	return c
}

func drawInput(t *rapid.T, o genOpts) podstate.Input {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: int64(rapid.IntRange(0, 3).Draw(t, "generation"))}}
	nInit := rapid.IntRange(0, 2).Draw(t, "init-containers")
	nReg := rapid.IntRange(1, 3).Draw(t, "containers")
	for i := 0; i < nInit; i++ {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, drawContainer(t, fmt.Sprintf("i%d", i), o, true))
	}
	for i := 0; i < nReg; i++ {
		pod.Spec.Containers = append(pod.Spec.Containers, drawContainer(t, fmt.Sprintf("c%d", i), o, false))
	}
	pod.Spec.RestartPolicy = rapid.SampledFrom([]v1.RestartPolicy{"", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}).Draw(t, "restart-policy")
	for _, g := range rapid.SliceOfNDistinct(rapid.SampledFrom(gateTypes), 0, 2, func(x v1.PodConditionType) v1.PodConditionType { return x }).Draw(t, "gates") {
		pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, v1.PodReadinessGate{ConditionType: g})
	}
	pod.Status.Phase = rapid.SampledFrom(phases).Draw(t, "api-phase")
	pod.Status.Conditions = drawConditions(t, "api-conditions")

	in := podstate.Input{Pod: pod, Terminal: rapid.IntRange(0, 3).Draw(t, "terminal") == 0}
	if rapid.Bool().Draw(t, "has-previous") {
		prev := &v1.PodStatus{
			Phase:      rapid.SampledFrom(phases).Draw(t, "previous-phase"),
			Reason:     rapid.SampledFrom([]string{"", "Evicted"}).Draw(t, "previous-reason"),
			Conditions: drawConditions(t, "previous-conditions"),
		}
		for _, c := range pod.Spec.Containers {
			if rapid.Bool().Draw(t, "previous-"+c.Name) {
				prev.ContainerStatuses = append(prev.ContainerStatuses, v1.ContainerStatus{Name: c.Name, State: drawState(t, "previous-state-"+c.Name, false), RestartCount: 1})
			}
		}
		in.OldStatus = prev
	}
	for i, n := 0, rapid.IntRange(0, 2).Draw(t, "sandboxes"); i < n; i++ {
		id := "sb-new"
		if i > 0 {
			id = "sb-old"
		}
		in.Sandboxes = append(in.Sandboxes, sandbox.Status{ID: id, Attempt: uint32(n - i), Ready: rapid.Bool().Draw(t, id+"-ready"), IP: rapid.SampledFrom([]string{"", "10.1.0.5"}).Draw(t, id+"-ip")})
	}
	if rapid.Bool().Draw(t, "has-host-ip") {
		in.HostIPs = []string{"10.0.0.1"}
	}
	if rapid.IntRange(0, 9).Draw(t, "evicted") == 0 {
		in.Eviction = &podstate.Eviction{Reason: "DeadlineExceeded", Message: "m"}
	}
	if rapid.Bool().Draw(t, "resize") {
		in.Resize = []v1.PodCondition{{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue}}
	}

	initDone := true
	for _, c := range pod.Spec.InitContainers {
		if !rapid.Bool().Draw(t, "fact-"+c.Name) {
			if !isSidecar(c) {
				initDone = false
			}
			continue
		}
		f := drawFact(t, c.Name)
		if !isSidecar(c) && (f.State.Terminated == nil || f.State.Terminated.ExitCode != 0) {
			initDone = false
		}
		in.Containers = append(in.Containers, f)
	}
	if !o.coherent || initDone {
		for _, c := range pod.Spec.Containers {
			if rapid.IntRange(0, 3).Draw(t, "fact-"+c.Name) > 0 {
				in.Containers = append(in.Containers, drawFact(t, c.Name))
			}
		}
	}
	return in
}

func isSidecar(c v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

func terminalPhase(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// A terminal phase is never left: the server's never changes; a cached one is kept unless
// the kubelet itself derives the other terminal phase (upstream lets a Succeeded that was
// never sent become Failed, but never Running or Pending); and a generated terminal phase
// survives being fed back as the previous status.
func TestPropertyTerminalPhaseSticks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := drawInput(t, genOpts{sidecars: true, containerPolicies: true})
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
		in := drawInput(t, genOpts{coherent: true, sidecars: true, containerPolicies: true})
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
		in := drawInput(t, genOpts{coherent: true})
		pod := in.Pod
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		if pod.Status.Phase == v1.PodFailed {
			pod.Status.Phase = v1.PodRunning
		}
		if in.OldStatus != nil && in.OldStatus.Phase == v1.PodFailed {
			in.OldStatus.Phase = v1.PodRunning
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
			f := drawFact(t, c.Name)
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
		in := drawInput(t, genOpts{sidecars: true, containerPolicies: true})
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
		in := drawInput(t, genOpts{sidecars: true, containerPolicies: true})
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
