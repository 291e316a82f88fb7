package kubelettest_test

import (
	"fmt"
	"time"

	"github.com/podstatus/podstatus/simkubelet"
)

// KubeVirt's envtest PodSimulator (kubevirt/kubevirt#18731) has four hand-written actions,
// each a Get→UpdateStatus loop writing a phase and a Ready condition. With the simulated
// kubelet each is one Behavior, or none, and the statuses are the kubelet's:
func Example_kubeVirtPodSimulatorActions() {
	launcher := simkubelet.MatchLabels(map[string]string{"kubevirt.io": "virt-launcher"})
	actions := map[string][]simkubelet.Behavior{
		// bind, Running and Ready: nothing to say (Options.BindPods and the fast profile).
		"bind + Running + Ready": nil,
		// skip: leave the pod alone. The kubelet binds only the pods of
		// Options.BindSchedulerNames (default-scheduler); a pod bound elsewhere is not its.
		"skip": nil,
		// Failed: the container exits 1 (restartPolicy Never, as a virt-launcher pod has).
		"Failed": {{Match: launcher, RunTime: time.Second, ExitCode: 1}},
		// Running, not Ready: the readiness probe never succeeds (the default profile runs
		// probes on the spec's schedule; the fast one makes them succeed at once).
		"Running, not Ready": {{Match: launcher, Profile: "default", ReadinessProbeFailures: 1000}},
	}
	// What those actions cannot express, one Behavior each: readiness gates (the test
	// sets the gate's condition; Ready follows), init containers and sidecars (run from
	// the spec), restarts with the kubelet's back-off (RunTime with restartPolicy
	// Always), exit codes (ExitCode), a failing sandbox (SandboxCreateFailures).
	for _, name := range []string{"bind + Running + Ready", "skip", "Failed", "Running, not Ready"} {
		fmt.Printf("%s: %d behavior(s)\n", name, len(actions[name]))
	}
	// Output:
	// bind + Running + Ready: 0 behavior(s)
	// skip: 0 behavior(s)
	// Failed: 1 behavior(s)
	// Running, not Ready: 1 behavior(s)
}
