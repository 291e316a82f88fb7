package podstate_test

import (
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/internal/kubeletrules"
	"github.com/podstatus/podstatus/internal/upstream/kubeletview"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// minChecks is the number of random cases each property runs unless -rapid.checks says
// otherwise.
const minChecks = 2000

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if !set {
		if err := flag.Set("rapid.checks", fmt.Sprint(minChecks)); err != nil {
			fmt.Fprintln(os.Stderr, "cannot set rapid.checks:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

var t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

func drawState(t *rapid.T, label string, allowZero bool) v1.ContainerState {
	kinds := []string{"running", "waiting", "exit0", "exit1", "exit42", "exit137"}
	if allowZero {
		kinds = append(kinds, "unknown")
	}
	term := func(code int32, reason string) v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: t0}}
	}
	switch rapid.SampledFrom(kinds).Draw(t, label) {
	case "running":
		return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t0}}
	case "waiting":
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: rapid.SampledFrom([]string{"", "CrashLoopBackOff"}).Draw(t, label+"-reason")}}
	case "exit0":
		return term(0, "Completed")
	case "exit1":
		return term(1, "Error")
	case "exit42":
		return term(42, "Error")
	case "exit137":
		return term(137, rapid.SampledFrom([]string{"OOMKilled", readiness.ReasonRestartingAllContainers}).Draw(t, label+"-reason137"))
	}
	return v1.ContainerState{}
}

func drawContainer(t *rapid.T, name string, init bool) v1.Container {
	c := v1.Container{Name: name, Image: "img-" + name}
	policies := []v1.ContainerRestartPolicy{"", v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}
	if init {
		policies = append(policies, v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyAlways)
	} else {
		policies = append(policies, v1.ContainerRestartPolicyAlways)
	}
	if p := rapid.SampledFrom(policies).Draw(t, name+"-policy"); p != "" {
		c.RestartPolicy = &p
		if rapid.Bool().Draw(t, name+"-rule") {
			c.RestartPolicyRules = []v1.ContainerRestartRule{{
				Action: rapid.SampledFrom([]v1.ContainerRestartRuleAction{v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers}).Draw(t, name+"-action"),
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{
					Operator: rapid.SampledFrom([]v1.ContainerRestartRuleOnExitCodesOperator{v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn}).Draw(t, name+"-op"),
					Values:   rapid.SliceOfDistinct(rapid.SampledFrom([]int32{0, 1, 42, 137}), func(x int32) int32 { return x }).Draw(t, name+"-codes"),
				},
			}}
		}
	}
	sidecar := init && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
	if !init || sidecar {
		if rapid.Bool().Draw(t, name+"-readiness-probe") {
			c.ReadinessProbe = &v1.Probe{}
		}
		if rapid.Bool().Draw(t, name+"-startup-probe") {
			c.StartupProbe = &v1.Probe{}
		}
	}
	return c
}

func drawFact(t *rapid.T, name string) podstate.Container {
	if rapid.Bool().Draw(t, name+"-healthy") {
		return podstate.Container{Name: name, ContainerID: "containerd://" + name,
			State:   v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t0}},
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
		if f.LastTerminationState = drawState(t, name+"-last", false); f.LastTerminationState.Terminated == nil {
			f.LastTerminationState = v1.ContainerState{}
		}
	}
	return f
}

func drawConditions(t *rapid.T, label string) []v1.PodCondition {
	pool := []v1.PodConditionType{"example.com/a", "example.com/b", v1.DisruptionTarget, v1.PodReady,
		v1.ContainersReady, v1.PodInitialized, v1.PodScheduled, v1.PodReadyToStartContainers,
		v1.PodResizePending, v1.AllContainersRestarting}
	types := rapid.SliceOfNDistinct(rapid.SampledFrom(pool), 0, 6, func(x v1.PodConditionType) v1.PodConditionType { return x }).Draw(t, label)
	out := make([]v1.PodCondition, len(types))
	for i, ty := range types {
		out[i] = v1.PodCondition{Type: ty, Status: rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown, ""}).Draw(t, label+"-status"),
			ObservedGeneration: int64(rapid.IntRange(0, 1).Draw(t, label+"-gen"))}
	}
	return out
}

func drawInput(t *rapid.T) podstate.Input {
	phases := []v1.PodPhase{"", v1.PodPending, v1.PodRunning, v1.PodRunning, v1.PodSucceeded, v1.PodFailed}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1", Generation: int64(rapid.IntRange(0, 3).Draw(t, "generation"))}}
	for i, n := 0, rapid.IntRange(0, 3).Draw(t, "init-containers"); i < n; i++ {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, drawContainer(t, fmt.Sprintf("i%d", i), true))
	}
	for i, n := 0, rapid.IntRange(0, 3).Draw(t, "containers"); i < n; i++ {
		pod.Spec.Containers = append(pod.Spec.Containers, drawContainer(t, fmt.Sprintf("c%d", i), false))
	}
	pod.Spec.RestartPolicy = rapid.SampledFrom([]v1.RestartPolicy{"", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}).Draw(t, "restart-policy")
	pod.Spec.HostNetwork = rapid.IntRange(0, 4).Draw(t, "host-network") == 0
	gates := []v1.PodConditionType{"example.com/a", "example.com/b", v1.PodInitialized, v1.PodReadyToStartContainers, v1.ContainersReady, v1.DisruptionTarget}
	for _, g := range rapid.SliceOfNDistinct(rapid.SampledFrom(gates), 0, 3, func(x v1.PodConditionType) v1.PodConditionType { return x }).Draw(t, "gates") {
		pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, v1.PodReadinessGate{ConditionType: g})
	}
	pod.Status.Phase = rapid.SampledFrom(phases).Draw(t, "api-phase")
	pod.Status.Conditions = drawConditions(t, "api-conditions")

	in := podstate.Input{Pod: pod, Terminal: rapid.IntRange(0, 3).Draw(t, "terminal") == 0}
	if rapid.Bool().Draw(t, "has-previous") {
		prev := &v1.PodStatus{Phase: rapid.SampledFrom(phases).Draw(t, "previous-phase"), Conditions: drawConditions(t, "previous-conditions")}
		for _, c := range append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
			if rapid.Bool().Draw(t, "previous-"+c.Name) {
				st := v1.ContainerStatus{Name: c.Name, State: drawState(t, "previous-state-"+c.Name, false), RestartCount: 1, ContainerID: "containerd://" + c.Name + "1"}
				if st.State.Running != nil && rapid.Bool().Draw(t, "previous-started-"+c.Name) {
					started := true
					st.Started = &started
				}
				if c.Name[0] == 'i' {
					prev.InitContainerStatuses = append(prev.InitContainerStatuses, st)
				} else {
					prev.ContainerStatuses = append(prev.ContainerStatuses, st)
				}
			}
		}
		in.OldStatus = prev
	}
	for i, n := 0, rapid.IntRange(0, 2).Draw(t, "sandboxes"); i < n; i++ {
		id := "sb-new"
		if i > 0 {
			id = "sb-old"
		}
		in.Sandboxes = append(in.Sandboxes, sandbox.Status{
			ID: id, Attempt: uint32(n - i),
			Ready:           rapid.IntRange(0, 3).Draw(t, id+"-ready") > 0,
			HostNetwork:     rapid.Bool().Draw(t, id+"-host-network"),
			IP:              rapid.SampledFrom([]string{"", "10.1.0.5"}).Draw(t, id+"-ip"),
			NoNetworkStatus: rapid.IntRange(0, 4).Draw(t, id+"-no-network") == 0,
		})
	}
	if rapid.Bool().Draw(t, "evicted") && rapid.Bool().Draw(t, "evicted2") && rapid.Bool().Draw(t, "evicted3") {
		in.Eviction = &podstate.Eviction{Reason: "DeadlineExceeded", Message: "m"}
	}
	for _, c := range append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if rapid.IntRange(0, 3).Draw(t, "fact-"+c.Name) > 0 {
			in.Containers = append(in.Containers, drawFact(t, c.Name))
		}
	}
	return in
}

// runtimeStatus is the kubelet's runtime view of in: sandboxes (kubeletview) and container
// records.
func runtimeStatus(in podstate.Input) *kubecontainer.PodStatus {
	ps := kubeletview.PodStatus(in.Pod, in.Sandboxes, false)
	for _, f := range in.Containers {
		c := &kubecontainer.Status{Name: f.Name, State: kubecontainer.ContainerStateUnknown}
		switch {
		case f.State.Running != nil:
			c.State = kubecontainer.ContainerStateRunning
		case f.State.Terminated != nil:
			c.State, c.ExitCode = kubecontainer.ContainerStateExited, int(f.State.Terminated.ExitCode)
		case f.State.Waiting != nil:
			c.State = kubecontainer.ContainerStateCreated
		}
		ps.ContainerStatuses = append(ps.ContainerStatuses, c)
	}
	return ps
}

// TestDifferentialConditions runs the kubelet's own condition generators on the status
// podstate.Generate builds (its phase and container statuses, the runtime view of the
// same input, the same previous status) and checks that every condition Generate wrote
// is the kubelet's, in the kubelet's order.
func TestDifferentialConditions(t *testing.T) {
	var cases, ready, sandboxReady, restarting atomic.Int64
	rapid.Check(t, func(t *rapid.T) {
		in := drawInput(t)
		s, err := podstate.Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		pod := in.Pod
		old := pod.Status.DeepCopy()
		if in.OldStatus != nil {
			old = in.OldStatus.DeepCopy()
		}
		all := append(append([]v1.ContainerStatus{}, s.InitContainerStatuses...), s.ContainerStatuses...)
		if s.InitContainerStatuses == nil && len(s.ContainerStatuses) == 0 {
			all = nil
		}
		rs := runtimeStatus(in)

		// The kubelet's composition, step by step, with its own generators.
		var want []v1.PodCondition
		for _, c := range pod.Status.Conditions {
			if !kubetypes.PodConditionByKubelet(c.Type) {
				want = append(want, c)
			}
		}
		if _, dt := podutil.GetPodConditionFromList(old.Conditions, v1.DisruptionTarget); dt != nil {
			if i, _ := podutil.GetPodConditionFromList(want, v1.DisruptionTarget); i >= 0 {
				want[i] = *dt
			} else {
				want = append(want, *dt)
			}
		}
		want = append(want, kubeletstatus.GeneratePodReadyToStartContainersCondition(pod, old, rs))
		want = append(want, kubeletstatus.GeneratePodInitializedCondition(pod, old, all, s.Phase))
		want = append(want, kubeletstatus.GeneratePodReadyCondition(pod, old, want, all, s.Phase))
		want = append(want, kubeletstatus.GenerateContainersReadyCondition(pod, old, all, s.Phase))
		want = append(want, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue,
			ObservedGeneration: podutil.CalculatePodConditionObservedGeneration(old, pod.Generation, v1.PodScheduled)})
		if podutil.AllContainersCouldRestart(&pod.Spec) {
			want = append(want, kubeletstatus.GenerateAllContainersRestartingCondition(pod, rs, old, s.Phase))
		}
		if d := cmp.Diff(want, s.Conditions); d != "" {
			t.Fatalf("conditions differ from the kubelet's (-kubelet +podstate):\n%s", d)
		}

		// The prober's Started and Ready, and the kubelet's view of "initialized".
		for _, st := range all {
			if st.Started == nil {
				t.Fatalf("%s: Started not set", st.Name)
			}
		}
		if kubecontainer.HasAnyRegularContainerStarted(&pod.Spec, all) {
			if c := find(s.Conditions, v1.PodInitialized); c.Status != v1.ConditionTrue {
				t.Fatalf("a regular container started but Initialized is %s", c.Status)
			}
		}

		cases.Add(1)
		if c := find(s.Conditions, v1.PodReady); c.Status == v1.ConditionTrue {
			ready.Add(1)
		}
		if c := find(s.Conditions, v1.PodReadyToStartContainers); c.Status == v1.ConditionTrue {
			sandboxReady.Add(1)
		}
		if c := find(s.Conditions, v1.AllContainersRestarting); c != nil && c.Status == v1.ConditionTrue {
			restarting.Add(1)
		}
	})
	msg := fmt.Sprintf("differential: %d cases agree with the kubelet v1.37.0 (Ready True in %d, PodReadyToStartContainers True in %d, AllContainersRestarting True in %d)",
		cases.Load(), ready.Load(), sandboxReady.Load(), restarting.Load())
	t.Log(msg)
	fmt.Println(msg)
	if !t.Failed() && cases.Load() < minChecks && !flagSet("rapid.checks") {
		t.Errorf("only %d cases ran, want at least %d", cases.Load(), minChecks)
	}
}

// TestDifferentialContainerShouldRestart compares kubeletrules.Rules.ContainerShouldRestart with the
// kubelet's podutil.ContainerShouldRestart.
func TestDifferentialContainerShouldRestart(t *testing.T) {
	var cases atomic.Int64
	rapid.Check(t, func(t *rapid.T) {
		c := drawContainer(t, "c", rapid.Bool().Draw(t, "init"))
		spec := v1.PodSpec{RestartPolicy: rapid.SampledFrom([]v1.RestartPolicy{"", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}).Draw(t, "pod-policy")}
		exit := rapid.SampledFrom([]int32{0, 1, 42, 137}).Draw(t, "exit")
		want := podutil.ContainerShouldRestart(c, spec, exit)
		if got := (kubeletrules.Rules{}).ContainerShouldRestart(&c, &spec, exit); got != want {
			t.Fatalf("ContainerShouldRestart = %v, kubelet %v", got, want)
		}
		cases.Add(1)
	})
	msg := fmt.Sprintf("differential: %d restart decisions agree with the kubelet v1.37.0", cases.Load())
	t.Log(msg)
	fmt.Println(msg)
}

func find(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	_, c := podutil.GetPodConditionFromList(conds, t)
	return c
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
