package podstate_test

import (
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/kubeletrules"
	"github.com/podstatus/podstatus/internal/upstream/kubeletview"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/podstate/podstatetest"
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

// drawInput draws the widest inputs podstatetest generates.
func drawInput(t *rapid.T) podstate.Input {
	return podstatetest.Input(podstatetest.Options{}).Draw(t, "input")
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

// generate runs podstate.Generate on in and returns the status with a copy of the
// previous status the kubelet reads (the cached one, else the server's).
func generate(t *rapid.T, in podstate.Input) (v1.PodStatus, *v1.PodStatus) {
	s, err := podstate.Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	if in.OldStatus != nil {
		return s, in.OldStatus.DeepCopy()
	}
	return s, in.Pod.Status.DeepCopy()
}

// TestDifferentialConditions runs the kubelet's own condition generators on the status
// podstate.Generate builds (its phase and container statuses, the runtime view of the
// same input, the same previous status) and checks that every condition Generate wrote
// is the kubelet's, in the kubelet's order.
func TestDifferentialConditions(t *testing.T) {
	var cases, ready, sandboxReady, restarting atomic.Int64
	rapid.Check(t, func(t *rapid.T) {
		in := drawInput(t)
		s, old := generate(t, in)
		pod := in.Pod
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
			if c := conditions.Get(s.Conditions, v1.PodInitialized); c.Status != v1.ConditionTrue {
				t.Fatalf("a regular container started but Initialized is %s", c.Status)
			}
		}

		cases.Add(1)
		if c := conditions.Get(s.Conditions, v1.PodReady); c.Status == v1.ConditionTrue {
			ready.Add(1)
		}
		if c := conditions.Get(s.Conditions, v1.PodReadyToStartContainers); c.Status == v1.ConditionTrue {
			sandboxReady.Add(1)
		}
		if c := conditions.Get(s.Conditions, v1.AllContainersRestarting); c != nil && c.Status == v1.ConditionTrue {
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
		c := podstatetest.Container("c", rapid.Bool().Draw(t, "init"), podstatetest.Options{}).Draw(t, "container")
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

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
