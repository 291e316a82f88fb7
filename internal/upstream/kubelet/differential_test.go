package kubelet_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/upstream/kubeletview"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/readiness/readinesstest"
	"github.com/podstatus/podstatus/sandbox"
)

// defaultCases is how many random inputs TestDifferential compares by default;
// PODSTATUS_DIFF_CASES raises (or lowers) it.
const defaultCases = 20000

// upstream computes the four conditions with the kubelet v1.37.0's own generators, fed
// as generateAPIPodStatus feeds them: the joined status list append(init, regular...),
// a non-nil old status (the kubelet always has one), and the runtime's sandboxes.
func upstream(in readiness.Input, sparse bool) readiness.Result {
	var old v1.PodStatus
	if in.OldStatus != nil {
		old = *in.OldStatus
	}
	all := append(in.InitContainerStatuses, in.ContainerStatuses...)
	return readiness.Result{
		PodReadyToStartContainers: kubeletstatus.GeneratePodReadyToStartContainersCondition(in.Pod, &old, kubeletview.PodStatus(in.Pod, in.Sandboxes, sparse)),
		Initialized:               kubeletstatus.GeneratePodInitializedCondition(in.Pod, &old, all, in.Phase),
		Ready:                     kubeletstatus.GeneratePodReadyCondition(in.Pod, &old, in.Conditions, all, in.Phase),
		ContainersReady:           kubeletstatus.GenerateContainersReadyCondition(in.Pod, &old, all, in.Phase),
	}
}

// diff describes how two results differ, field by field; "" when they are equal.
func diff(ours, theirs readiness.Result) string {
	var out string
	pairs := []struct {
		name string
		a, b v1.PodCondition
	}{
		{"PodReadyToStartContainers", ours.PodReadyToStartContainers, theirs.PodReadyToStartContainers},
		{"Initialized", ours.Initialized, theirs.Initialized},
		{"Ready", ours.Ready, theirs.Ready},
		{"ContainersReady", ours.ContainersReady, theirs.ContainersReady},
	}
	for _, p := range pairs {
		a, b := p.a, p.b
		if a.Type != b.Type || a.Status != b.Status || a.Reason != b.Reason || a.Message != b.Message ||
			a.ObservedGeneration != b.ObservedGeneration || !a.LastTransitionTime.Equal(&b.LastTransitionTime) ||
			!a.LastProbeTime.Equal(&b.LastProbeTime) {
			out += fmt.Sprintf("  %s:\n    ours:     type=%q status=%q reason=%q message=%q og=%d\n    upstream: type=%q status=%q reason=%q message=%q og=%d\n",
				p.name, a.Type, a.Status, a.Reason, a.Message, a.ObservedGeneration, b.Type, b.Status, b.Reason, b.Message, b.ObservedGeneration)
		}
	}
	return out
}

// ourFeatures returns the feature set that matches the kubelet's current gates.
func ourFeatures(t *testing.T) features.Set {
	t.Helper()
	g := utilfeature.DefaultFeatureGate
	if !g.Enabled(kubefeatures.PodReadyToStartContainersCondition) {
		t.Fatalf("PodReadyToStartContainersCondition is off; the differential compares it")
	}
	return features.Set{
		NoObservedGenerationTracking: !g.Enabled(kubefeatures.PodObservedGenerationTracking),
		NoRestartAllContainers:       !g.Enabled(kubefeatures.RestartAllContainersOnContainerExits),
		NoContainerRestartRules:      !g.Enabled(kubefeatures.ContainerRestartRules),
	}
}

// TestDefaultFeaturesMatchKubelet: our zero features.Set is the kubelet v1.37.0 with its
// default gates.
func TestDefaultFeaturesMatchKubelet(t *testing.T) {
	g := utilfeature.DefaultFeatureGate
	def := features.V1_37()
	for _, c := range []struct {
		gate featuregate.Feature
		ours bool
	}{
		{kubefeatures.PodReadyToStartContainersCondition, def.ReadyToStartContainers()},
		{kubefeatures.PodObservedGenerationTracking, def.ObservedGenerationTracking()},
		{kubefeatures.RestartAllContainersOnContainerExits, def.RestartAllContainers()},
		{kubefeatures.ContainerRestartRules, def.ContainerRestartRules()},
	} {
		if got := g.Enabled(c.gate); got != c.ours {
			t.Errorf("kubelet gate %s is %v by default, our default says %v", c.gate, got, c.ours)
		}
	}
	if ourFeatures(t) != def {
		t.Errorf("features derived from the default gates %+v differ from V1_37 %+v", ourFeatures(t), def)
	}
}

// cases returns how many random inputs to compare.
func cases(t *testing.T) int {
	n := defaultCases
	if s := os.Getenv("PODSTATUS_DIFF_CASES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("PODSTATUS_DIFF_CASES=%q: want a positive integer", s)
		}
		n = v
	}
	return n
}

// compareRandom runs n generated inputs (deterministic seeds) through both and returns
// the number of mismatches, reporting the first few.
func compareRandom(t *testing.T, n int, f features.Set, label string) int {
	t.Helper()
	gen := readinesstest.Input()
	mismatches := 0
	counts := map[string]int{}
	for seed := 0; seed < n; seed++ {
		in := gen.Example(seed)
		in.Features = f
		before := readinesstest.DeepCopy(in)
		ours, err := readiness.Evaluate(in)
		if err != nil {
			t.Fatalf("seed %d: Evaluate: %v\n%s", seed, err, readinesstest.Describe(in))
		}
		theirs := upstream(before, seed%2 == 1)
		counts["Ready="+string(theirs.Ready.Status)+"/"+theirs.Ready.Reason]++
		counts["Initialized="+string(theirs.Initialized.Status)+"/"+theirs.Initialized.Reason]++
		counts["PodReadyToStartContainers="+string(theirs.PodReadyToStartContainers.Status)]++
		if d := diff(ours, theirs); d != "" {
			mismatches++
			if mismatches <= 5 {
				t.Errorf("%s: seed %d: ours and the kubelet differ:\n%sinput: %s", label, seed, d, readinesstest.Describe(before))
			}
		}
	}
	t.Logf("%s outcome mix: %v", label, counts)
	msg := fmt.Sprintf("differential (%s): %d cases, %d mismatches", label, n, mismatches)
	t.Log(msg)
	fmt.Println(msg)
	return mismatches
}

// TestDifferential compares readiness.Evaluate with the kubelet v1.37.0's four condition
// generators on random inputs from readinesstest, with the default gates.
func TestDifferential(t *testing.T) {
	n := cases(t)
	compareRandom(t, n, ourFeatures(t), "default gates")
}

// TestDifferentialRestartAllContainersOff: with the gate off, Initialized is not sticky.
func TestDifferentialRestartAllContainersOff(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, kubefeatures.RestartAllContainersOnContainerExits, false)
	f := ourFeatures(t)
	if !f.NoRestartAllContainers {
		t.Fatalf("gate still on")
	}
	compareRandom(t, cases(t)/4, f, "RestartAllContainersOnContainerExits=false")
}

// TestDifferentialObservedGenerationTrackingOff emulates v1.34 (where the gate can still
// be turned off) with PodObservedGenerationTracking off.
func TestDifferentialObservedGenerationTrackingOff(t *testing.T) {
	// Changing the emulation version logs a warning for every gate already queried;
	// quietTB drops those lines (errors still fail the test).
	featuregatetesting.SetFeatureGateEmulationVersionDuringTest(quietTB{t}, utilfeature.DefaultFeatureGate, version.MustParse("1.34"))
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, kubefeatures.PodObservedGenerationTracking, false)
	f := ourFeatures(t)
	if !f.NoObservedGenerationTracking || !f.NoRestartAllContainers {
		t.Fatalf("gates not as intended: %+v", f)
	}
	compareRandom(t, cases(t)/4, f, "v1.34 emulation, PodObservedGenerationTracking=false")
}

// quietTB is a *testing.T whose Logf discards its output.
type quietTB struct{ *testing.T }

func (quietTB) Logf(string, ...any) {}

// TestDifferentialShrinks runs the same comparison under rapid.Check, so that a
// mismatch is shrunk to a minimal input.
func TestDifferentialShrinks(t *testing.T) {
	f := ourFeatures(t)
	rapid.Check(t, func(rt *rapid.T) {
		in := readinesstest.Input().Draw(rt, "input")
		sparse := rapid.Bool().Draw(rt, "sparseLinuxStatus")
		in.Features = f
		before := readinesstest.DeepCopy(in)
		ours, err := readiness.Evaluate(in)
		if err != nil {
			rt.Fatalf("Evaluate: %v", err)
		}
		if d := diff(ours, upstream(before, sparse)); d != "" {
			rt.Fatalf("ours and the kubelet differ:\n%sinput: %s", d, readinesstest.Describe(before))
		}
	})
}

// TestNamedUpstreamCases runs the named cases of the kubelet's generate_test.go (v1.37.0)
// through both the kubelet's generators and Evaluate, and checks that each gives the
// expected condition.
func TestNamedUpstreamCases(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	ctrs := func(names ...string) []v1.Container {
		out := make([]v1.Container, len(names))
		for i, n := range names {
			out[i].Name = n
		}
		return out
	}
	side := func(names ...string) []v1.Container {
		out := ctrs(names...)
		for i := range out {
			out[i].RestartPolicy = &always
		}
		return out
	}
	gates := func(types ...v1.PodConditionType) []v1.PodReadinessGate {
		out := make([]v1.PodReadinessGate, len(types))
		for i, ty := range types {
			out[i].ConditionType = ty
		}
		return out
	}
	ready := func(n string) v1.ContainerStatus { return v1.ContainerStatus{Name: n, Ready: true} }
	notReady := func(n string) v1.ContainerStatus { return v1.ContainerStatus{Name: n} }
	tr, fa := true, false
	started := func(n string) v1.ContainerStatus { return v1.ContainerStatus{Name: n, Started: &tr} }
	notStarted := func(n string) v1.ContainerStatus { return v1.ContainerStatus{Name: n, Started: &fa} }
	c := func(ty v1.PodConditionType, s v1.ConditionStatus, reason, msg string) v1.PodCondition {
		return v1.PodCondition{Type: ty, Status: s, Reason: reason, Message: msg}
	}
	none := []v1.ContainerStatus{}
	noInit := v1.PodSpec{}
	oneInit := v1.PodSpec{InitContainers: ctrs("1234"), Containers: ctrs("regular")}
	twoInit := v1.PodSpec{InitContainers: ctrs("1234", "5678"), Containers: ctrs("regular")}
	oneRestartable := v1.PodSpec{InitContainers: side("1234"), Containers: ctrs("regular")}
	twoSidecars := v1.PodSpec{InitContainers: side("restartable-init-1", "restartable-init-2"), Containers: ctrs("regular-1")}
	g1True := c("gate1", v1.ConditionTrue, "", "")
	readyIP := func(ip string, attempt uint32) sandbox.Status {
		return sandbox.Status{ID: "sb-" + ip, Attempt: attempt, Ready: true, IP: ip}
	}

	type tcase struct {
		name       string
		which      v1.PodConditionType
		spec       v1.PodSpec
		statuses   []v1.ContainerStatus
		conditions []v1.PodCondition
		sandboxes  []sandbox.Status
		phase      v1.PodPhase
		want       v1.PodCondition
	}
	var table []tcase
	cr := func(name string, spec v1.PodSpec, st []v1.ContainerStatus, phase v1.PodPhase, want v1.PodCondition) {
		table = append(table, tcase{"ContainersReady/" + name, v1.ContainersReady, spec, st, nil, nil, phase, want})
	}
	rd := func(name string, spec v1.PodSpec, conds []v1.PodCondition, st []v1.ContainerStatus, phase v1.PodPhase, want v1.PodCondition) {
		table = append(table, tcase{"Ready/" + name, v1.PodReady, spec, st, conds, nil, phase, want})
	}
	in := func(name string, spec v1.PodSpec, st []v1.ContainerStatus, phase v1.PodPhase, want v1.PodCondition) {
		table = append(table, tcase{"Initialized/" + name, v1.PodInitialized, spec, st, nil, nil, phase, want})
	}
	sb := func(name string, hostNetwork bool, sbs []sandbox.Status, want v1.PodCondition) {
		table = append(table, tcase{"PodReadyToStartContainers/" + name, v1.PodReadyToStartContainers,
			v1.PodSpec{HostNetwork: hostNetwork}, none, nil, sbs, v1.PodRunning, want})
	}
	const (
		unknownCS = "UnknownContainerStatuses"
		notReadyR = "ContainersNotReady"
		notInitR  = "ContainersNotInitialized"
		gatesR    = "ReadinessGatesNotReady"
		sandboxR  = "PodSandboxNotReady"
	)
	CR, RD, IN, RS := v1.ContainersReady, v1.PodReady, v1.PodInitialized, v1.PodReadyToStartContainers
	T, F := v1.ConditionTrue, v1.ConditionFalse

	cr("1", noInit, nil, v1.PodRunning, c(CR, F, unknownCS, ""))
	cr("2", noInit, none, v1.PodRunning, c(CR, T, "", ""))
	cr("3", v1.PodSpec{Containers: ctrs("1234")}, none, v1.PodRunning, c(CR, F, notReadyR, "containers with unknown status: [1234]"))
	cr("4", v1.PodSpec{Containers: ctrs("1234", "5678")}, []v1.ContainerStatus{ready("1234"), ready("5678")}, v1.PodRunning, c(CR, T, "", ""))
	cr("5", v1.PodSpec{Containers: ctrs("1234", "5678")}, []v1.ContainerStatus{ready("1234")}, v1.PodRunning, c(CR, F, notReadyR, "containers with unknown status: [5678]"))
	cr("6", v1.PodSpec{Containers: ctrs("1234", "5678")}, []v1.ContainerStatus{ready("1234"), notReady("5678")}, v1.PodRunning, c(CR, F, notReadyR, "containers with unready status: [5678]"))
	cr("7", v1.PodSpec{Containers: ctrs("1234")}, []v1.ContainerStatus{notReady("1234")}, v1.PodSucceeded, c(CR, F, "PodCompleted", ""))
	cr("8", v1.PodSpec{InitContainers: side("restartable-init-1"), Containers: ctrs("regular-1")}, []v1.ContainerStatus{ready("regular-1")}, v1.PodRunning,
		c(CR, F, notReadyR, "containers with unknown status: [restartable-init-1]"))
	cr("9", twoSidecars, []v1.ContainerStatus{ready("restartable-init-1"), ready("restartable-init-2"), ready("regular-1")}, v1.PodRunning, c(CR, T, "", ""))
	cr("10", twoSidecars, []v1.ContainerStatus{ready("restartable-init-1"), ready("regular-1")}, v1.PodRunning,
		c(CR, F, notReadyR, "containers with unknown status: [restartable-init-2]"))
	cr("11", twoSidecars, []v1.ContainerStatus{ready("restartable-init-1"), notReady("restartable-init-2"), ready("regular-1")}, v1.PodRunning,
		c(CR, F, notReadyR, "containers with unready status: [restartable-init-2]"))

	rd("1", noInit, nil, nil, v1.PodRunning, c(RD, F, unknownCS, ""))
	rd("2", noInit, nil, none, v1.PodRunning, c(RD, T, "", ""))
	rd("3", v1.PodSpec{Containers: ctrs("1234")}, nil, none, v1.PodRunning, c(RD, F, notReadyR, "containers with unknown status: [1234]"))
	rd("4", v1.PodSpec{Containers: ctrs("1234", "5678")}, nil, []v1.ContainerStatus{ready("1234"), ready("5678")}, v1.PodRunning, c(RD, T, "", ""))
	rd("5", v1.PodSpec{Containers: ctrs("1234", "5678")}, nil, []v1.ContainerStatus{ready("1234")}, v1.PodRunning, c(RD, F, notReadyR, "containers with unknown status: [5678]"))
	rd("6", v1.PodSpec{Containers: ctrs("1234", "5678")}, nil, []v1.ContainerStatus{ready("1234"), notReady("5678")}, v1.PodRunning, c(RD, F, notReadyR, "containers with unready status: [5678]"))
	rd("7", v1.PodSpec{Containers: ctrs("1234")}, nil, []v1.ContainerStatus{notReady("1234")}, v1.PodSucceeded, c(RD, F, "PodCompleted", ""))
	rd("8", v1.PodSpec{ReadinessGates: gates("gate1")}, nil, none, v1.PodRunning,
		c(RD, F, gatesR, `corresponding condition of pod readiness gate "gate1" does not exist.`))
	rd("9", v1.PodSpec{ReadinessGates: gates("gate1")}, []v1.PodCondition{c("gate1", F, "", "")}, none, v1.PodRunning,
		c(RD, F, gatesR, `the status of pod readiness gate "gate1" is not "True", but False`))
	rd("10", v1.PodSpec{ReadinessGates: gates("gate1")}, []v1.PodCondition{g1True}, none, v1.PodRunning, c(RD, T, "", ""))
	rd("11", v1.PodSpec{ReadinessGates: gates("gate1", "gate2")}, []v1.PodCondition{g1True}, none, v1.PodRunning,
		c(RD, F, gatesR, `corresponding condition of pod readiness gate "gate2" does not exist.`))
	rd("12", v1.PodSpec{ReadinessGates: gates("gate1", "gate2")}, []v1.PodCondition{g1True, c("gate2", F, "", "")}, none, v1.PodRunning,
		c(RD, F, gatesR, `the status of pod readiness gate "gate2" is not "True", but False`))
	rd("13", v1.PodSpec{ReadinessGates: gates("gate1", "gate2")}, []v1.PodCondition{g1True, c("gate2", T, "", "")}, none, v1.PodRunning, c(RD, T, "", ""))
	rd("14", v1.PodSpec{Containers: ctrs("1234"), ReadinessGates: gates("gate1")}, []v1.PodCondition{g1True}, []v1.ContainerStatus{notReady("1234")}, v1.PodRunning,
		c(RD, F, notReadyR, "containers with unready status: [1234]"))

	in("1", twoInit, nil, v1.PodRunning, c(IN, F, unknownCS, ""))
	in("2", noInit, none, v1.PodRunning, c(IN, T, "", ""))
	in("3", oneInit, none, v1.PodRunning, c(IN, F, notInitR, "containers with unknown status: [1234]"))
	in("4", twoInit, []v1.ContainerStatus{ready("1234"), ready("5678")}, v1.PodRunning, c(IN, T, "", ""))
	in("5", twoInit, []v1.ContainerStatus{ready("1234")}, v1.PodRunning, c(IN, F, notInitR, "containers with unknown status: [5678]"))
	in("6", twoInit, []v1.ContainerStatus{ready("1234"), notReady("5678")}, v1.PodRunning, c(IN, F, notInitR, "containers with incomplete status: [5678]"))
	in("7", oneInit, []v1.ContainerStatus{ready("1234")}, v1.PodSucceeded, c(IN, T, "PodCompleted", ""))
	in("8", oneRestartable, []v1.ContainerStatus{notStarted("1234")}, v1.PodPending, c(IN, F, notInitR, "containers with incomplete status: [1234]"))
	in("9", oneRestartable, []v1.ContainerStatus{started("1234")}, v1.PodRunning, c(IN, T, "", ""))
	in("10", oneRestartable, []v1.ContainerStatus{notStarted("1234"), {Name: "regular", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}, v1.PodRunning, c(IN, T, "", ""))
	in("11", oneInit, []v1.ContainerStatus{{Name: "1234", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}},
		{Name: "regular", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}}}, v1.PodRunning, c(IN, T, "", ""))

	sb("Empty pod status", false, nil, c(RS, F, sandboxR, "no pod sandbox exists"))
	sb("Pod sandbox status not ready", false, []sandbox.Status{{ID: "sb", NoNetworkStatus: true}}, c(RS, F, sandboxR, "pod sandbox is not ready"))
	sb("Pod with multiple ready sandboxes", false, []sandbox.Status{readyIP("10.0.0.10", 1), readyIP("10.0.0.11", 0)},
		c(RS, F, sandboxR, "multiple pod sandboxes are ready and need to be reconciled"))
	sb("Pod sandbox status ready but network namespace mode changed", true, []sandbox.Status{readyIP("10.0.0.10", 0)},
		c(RS, F, sandboxR, "network namespace mode changed and sandbox needs to be recreated"))
	sb("Pod sandbox status ready but no IP configured", false, []sandbox.Status{readyIP("", 0)}, c(RS, F, sandboxR, "pod sandbox has no IP address"))
	sb("Pod sandbox status ready and IP configured", false, []sandbox.Status{readyIP("10.0.0.10", 0)}, c(RS, T, "", ""))

	pick := func(r readiness.Result, which v1.PodConditionType) v1.PodCondition {
		switch which {
		case v1.ContainersReady:
			return r.ContainersReady
		case v1.PodReady:
			return r.Ready
		case v1.PodInitialized:
			return r.Initialized
		}
		return r.PodReadyToStartContainers
	}
	for _, tc := range table {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "new", Name: "foo", UID: "12345678"}, Spec: tc.spec}
			// The upstream tests pass the joined list; give it to Evaluate as the
			// kubelet's append would produce it: an empty (non-nil) init list, unless nil.
			input := readiness.Input{Pod: pod, Phase: tc.phase, InitContainerStatuses: tc.statuses[:0:0],
				ContainerStatuses: tc.statuses, Conditions: tc.conditions, Sandboxes: tc.sandboxes, OldStatus: &v1.PodStatus{}}
			ours, err := readiness.Evaluate(input)
			if err != nil {
				t.Fatal(err)
			}
			theirs := upstream(input, false)
			for who, r := range map[string]readiness.Result{"ours": ours, "upstream": theirs} {
				if got := pick(r, tc.which); got != tc.want {
					t.Errorf("%s: %+v\nwant %+v", who, got, tc.want)
				}
			}
			if d := diff(ours, theirs); d != "" {
				t.Errorf("the other conditions differ too:\n%s", d)
			}
		})
	}
}
