package podstatetest_test

import (
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
