package podstatetest_test

import (
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/podstate/podstatetest"
)

// Every generated input is well-formed: Generate accepts it.
func TestInputIsWellFormed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := podstatetest.Input(podstatetest.Options{Resize: true}).Draw(t, "input")
		podstatetest.Log(t, in)
		if _, err := podstate.Generate(in); err != nil {
			t.Fatal(err)
		}
	})
}

// The options narrow the inputs as documented.
func TestOptions(t *testing.T) {
	o := podstatetest.Options{Coherent: true, NoSidecars: true, NoContainerPolicies: true, AtLeastOneContainer: true}
	rapid.Check(t, func(t *rapid.T) {
		in := podstatetest.Input(o).Draw(t, "input")
		podstatetest.Log(t, in)
		spec := &in.Pod.Spec
		if len(spec.Containers) == 0 {
			t.Fatal("no regular container")
		}
		for _, c := range append(append([]v1.Container{}, spec.InitContainers...), spec.Containers...) {
			if c.RestartPolicy != nil || c.RestartPolicyRules != nil {
				t.Fatalf("%s has a restart policy of its own", c.Name)
			}
		}
		if in.Resize != nil {
			t.Fatal("resize conditions without Options.Resize")
		}
		facts := map[string]*podstate.Container{}
		for i := range in.Containers {
			facts[in.Containers[i].Name] = &in.Containers[i]
		}
		initDone := true
		for _, c := range spec.InitContainers {
			if f := facts[c.Name]; f == nil || f.State.Terminated == nil || f.State.Terminated.ExitCode != 0 {
				initDone = false
			}
		}
		for _, c := range spec.Containers {
			if facts[c.Name] != nil && !initDone {
				t.Fatalf("%s has a fact before the init containers completed", c.Name)
			}
		}
	})
}

// Neither kit draws a readiness gate named like a condition the kubelet owns; the list is
// restated here, as an oracle, rather than read from the code under test.
func TestGatesAreNotKubeletOwned(t *testing.T) {
	owned := map[v1.PodConditionType]bool{v1.PodScheduled: true, v1.PodReady: true, v1.PodInitialized: true,
		v1.ContainersReady: true, v1.PodReadyToStartContainers: true, v1.PodResizePending: true,
		v1.PodResizeInProgress: true, v1.DisruptionTarget: true, v1.AllContainersRestarting: true}
	rapid.Check(t, func(t *rapid.T) {
		in := podstatetest.Input(podstatetest.Options{}).Draw(t, "input")
		podstatetest.Log(t, in)
		for _, g := range in.Pod.Spec.ReadinessGates {
			if owned[g.ConditionType] {
				t.Fatalf("readiness gate %q is a condition the kubelet owns", g.ConditionType)
			}
		}
	})
}

// Describe names what a failure needs: containers, gates, phases and the runtime facts.
func TestDescribe(t *testing.T) {
	if got := podstatetest.Describe(podstate.Input{}); got != "{Pod: nil}" {
		t.Errorf("Describe(no pod) = %q", got)
	}
	rapid.Check(t, func(t *rapid.T) {
		in := podstatetest.Input(podstatetest.Options{}).Draw(t, "input")
		d := podstatetest.Describe(in)
		for _, c := range in.Pod.Spec.Containers {
			if !strings.Contains(d, c.Name) {
				t.Fatalf("Describe lacks container %s: %s", c.Name, d)
			}
		}
		for _, g := range in.Pod.Spec.ReadinessGates {
			if !strings.Contains(d, string(g.ConditionType)) {
				t.Fatalf("Describe lacks gate %s: %s", g.ConditionType, d)
			}
		}
		if !strings.Contains(d, "terminal="+strconv.FormatBool(in.Terminal)) {
			t.Fatalf("Describe lacks terminal=%v: %s", in.Terminal, d)
		}
	})
}
