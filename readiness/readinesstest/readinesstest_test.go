package readinesstest

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

func TestPodShape(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := Pod().Draw(t, "pod")
		seen := map[string]bool{}
		for _, n := range specNames(pod) {
			if seen[n] {
				t.Fatalf("container name %q used twice", n)
			}
			if n == "" {
				t.Fatalf("empty container name")
			}
			seen[n] = true
		}
		if errs := conditions.ValidateReadinessGates(pod.Spec.ReadinessGates, field.NewPath("spec", "readinessGates")); len(errs) != 0 {
			err := errs.ToAggregate()
			t.Fatalf("generated invalid gates: %v", err)
		}
		for _, g := range pod.Spec.ReadinessGates {
			if (conditions.Ownership{}).Owned(g.ConditionType) || (conditions.Ownership{}).Shared(g.ConditionType) {
				t.Fatalf("gate on a kubelet condition %q", g.ConditionType)
			}
		}
		if pod.Generation < 0 || pod.Generation > 5 {
			t.Fatalf("generation %d out of range", pod.Generation)
		}
		if _, err := readiness.Evaluate(readiness.Input{Pod: pod}); err != nil {
			t.Fatalf("generated pod rejected: %v", err)
		}
	})
}

func TestReadyInputIsReady(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := ReadyInput().Draw(t, "input")
		Log(t, in)
		r := CheckPure(t, in)
		CheckInvariants(t, in, r)
		for _, c := range r.Conditions() {
			if c.Status != v1.ConditionTrue {
				t.Fatalf("ready input gave %s=%s (%s: %s)\n%s", c.Type, c.Status, c.Reason, c.Message, Describe(in))
			}
		}
	})
}

func TestFaultyInputIsNotAllReady(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := FaultyInput().Draw(t, "case")
		Log(t, c.Input)
		r := CheckPure(t, c.Input)
		CheckInvariants(t, c.Input, r)
		allTrue := true
		for _, cond := range r.Conditions() {
			allTrue = allTrue && cond.Status == v1.ConditionTrue
		}
		// Every fault makes at least one condition False, except an init-container fault
		// in a pod without regular containers whose old status says Initialized True:
		// Initialized then stays True (restart-all-containers rule).
		sticky := (c.Fault.Kind == FaultUnknownInit || c.Fault.Kind == FaultIncompleteInit) &&
			len(c.Input.Pod.Spec.Containers) == 0 && c.Input.OldStatus != nil &&
			conditions.Get(c.Input.OldStatus.Conditions, v1.PodInitialized) != nil &&
			conditions.Get(c.Input.OldStatus.Conditions, v1.PodInitialized).Status == v1.ConditionTrue
		if allTrue != sticky {
			t.Fatalf("fault %+v: every condition True is %v, want %v\n%s", c.Fault, allTrue, sticky, Describe(c.Input))
		}
	})
}

// TestInputCoverage draws a fixed set of inputs and checks that every case the package
// promises shows up, so that a change that starves a case is caught.
func TestInputCoverage(t *testing.T) {
	const n = 1500
	seen := map[string]int{}
	mark := func(k string) { seen[k]++ }
	for seed := 0; seed < n; seed++ {
		in := Input().Example(seed)
		r, err := readiness.Evaluate(in)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		allTrue := true
		for _, c := range r.Conditions() {
			allTrue = allTrue && c.Status == v1.ConditionTrue
		}
		if allTrue {
			mark("all ready")
		}
		mark("ready=" + string(r.Ready.Status) + "/" + r.Ready.Reason)
		mark("initialized=" + string(r.Initialized.Status) + "/" + r.Initialized.Reason)
		mark("sandbox=" + r.PodReadyToStartContainers.Message)
		mark(fmt.Sprintf("sandboxes=%d", len(in.Sandboxes)))
		mark("phase=" + string(in.Phase))
		for _, l := range [][]v1.ContainerStatus{in.InitContainerStatuses, in.ContainerStatuses} {
			switch {
			case l == nil:
				mark("nil list")
			case len(l) == 0:
				mark("empty list")
			}
			names := map[string]bool{}
			for _, s := range l {
				if names[s.Name] {
					mark("duplicate status")
				}
				names[s.Name] = true
				mark(fmt.Sprintf("started=%v", s.Started != nil && *s.Started))
				switch {
				case s.State.Waiting != nil:
					mark("waiting")
				case s.State.Running != nil:
					mark("running")
				case s.State.Terminated != nil:
					mark("terminated")
				}
			}
		}
		for _, g := range in.Pod.Spec.ReadinessGates {
			if strings.Contains(string(g.ConditionType), "/") {
				mark("prefixed gate")
			}
			if c := conditions.Get(in.Conditions, g.ConditionType); c == nil {
				mark("gate missing")
			} else {
				mark("gate=" + string(c.Status))
			}
		}
		for _, c := range in.Pod.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
				mark("sidecar")
			}
		}
		if in.Pod.Spec.HostNetwork {
			mark("hostNetwork")
		}
		if in.Pod.Generation != 0 {
			mark("generation")
		}
		switch {
		case in.OldStatus == nil:
			mark("old nil")
		case len(in.OldStatus.Conditions) == 0:
			mark("old empty")
		default:
			if c := conditions.Get(in.OldStatus.Conditions, v1.PodInitialized); c != nil && c.Status == v1.ConditionTrue {
				mark("old initialized")
			}
			for _, c := range in.OldStatus.Conditions {
				if c.ObservedGeneration != 0 {
					mark("old observedGeneration")
				}
			}
		}
	}
	want := []string{
		"all ready", "nil list", "empty list", "duplicate status", "started=true", "started=false",
		"waiting", "running", "terminated", "prefixed gate", "gate missing", "gate=True", "gate=False",
		"gate=Unknown", "gate=", "sidecar", "hostNetwork", "generation",
		"old nil", "old empty", "old initialized", "old observedGeneration",
		"sandboxes=0", "sandboxes=1", "sandboxes=2", "sandboxes=3",
		"phase=Pending", "phase=Running", "phase=Succeeded", "phase=Failed", "phase=", "phase=Unknown",
		"ready=True/", "ready=False/" + readiness.ReasonContainersNotReady, "ready=False/" + readiness.ReasonReadinessGatesNotReady,
		"ready=False/" + readiness.ReasonUnknownContainerStatuses, "ready=False/" + readiness.ReasonPodCompleted,
		"ready=False/" + readiness.ReasonPodFailed,
		"initialized=True/", "initialized=True/" + readiness.ReasonPodCompleted,
		"initialized=False/" + readiness.ReasonContainersNotInitialized, "initialized=False/" + readiness.ReasonUnknownContainerStatuses,
		"sandbox=", "sandbox=" + sandbox.MessageNoSandbox, "sandbox=" + sandbox.MessageMultipleReady,
		"sandbox=" + sandbox.MessageNotReady, "sandbox=" + sandbox.MessageNetworkNamespaceChanged, "sandbox=" + sandbox.MessageNoIP,
	}
	for _, k := range want {
		if seen[k] == 0 {
			t.Errorf("no input in %d has %q", n, k)
		}
	}
	// Bias: fully ready inputs must be common, not drowned in noise.
	if seen["all ready"] < n/4 {
		t.Errorf("only %d of %d inputs are fully ready; want at least a quarter", seen["all ready"], n)
	}
	if seen["ready=True/"] > n*3/4 {
		t.Errorf("%d of %d inputs are Ready; not-ready cases are too rare", seen["ready=True/"], n)
	}
}

func TestFaultyInputCoversEveryKind(t *testing.T) {
	seen := map[FaultKind]bool{}
	for seed := 0; seed < 600; seed++ {
		seen[FaultyInput().Example(seed).Fault.Kind] = true
	}
	for _, k := range []FaultKind{FaultUnknownContainer, FaultUnreadyContainer, FaultUnknownSidecar, FaultUnreadySidecar,
		FaultSidecarNotStarted, FaultUnknownInit, FaultIncompleteInit, FaultMissingGate, FaultGateNotTrue,
		FaultSandbox, FaultTerminalPhase, FaultNoStatuses} {
		if !seen[k] {
			t.Errorf("fault kind %s never drawn", k)
		}
	}
}

// recorder is a TB that records failures instead of failing the test.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestInvariantsCatchViolations corrupts a correct result in each way the invariants
// forbid and checks that Invariants notices.
func TestInvariantsCatchViolations(t *testing.T) {
	in := readiness.Input{
		Pod: &v1.Pod{Spec: v1.PodSpec{
			Containers:     []v1.Container{{Name: "a"}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: "example.com/lb"}},
		}},
		Phase:             v1.PodRunning,
		ContainerStatuses: []v1.ContainerStatus{{Name: "a", Ready: true}},
		Conditions:        []v1.PodCondition{{Type: "example.com/lb", Status: v1.ConditionTrue}},
		Sandboxes:         []sandbox.Status{{ID: "s", Ready: true, IP: "10.0.0.1"}},
	}
	in.Pod.Generation = 3
	good, err := readiness.Evaluate(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := Invariants(in, good); err != nil {
		t.Fatalf("correct result rejected: %v", err)
	}
	gatesFalse := DeepCopy(in)
	gatesFalse.Conditions[0].Status = v1.ConditionFalse
	succeeded := DeepCopy(in)
	succeeded.Phase = v1.PodSucceeded
	noStatuses := DeepCopy(in)
	noStatuses.ContainerStatuses = nil
	noSandbox := DeepCopy(in)
	noSandbox.Sandboxes = nil

	cases := []struct {
		name string
		in   readiness.Input
		f    features.Set
		mut  func(*readiness.Result)
		want string
	}{
		{"wrong type", in, features.V1_37(), func(r *readiness.Result) { r.Ready.Type = v1.ContainersReady }, "belongs"},
		{"unknown status", in, features.V1_37(), func(r *readiness.Result) { r.Initialized.Status = v1.ConditionUnknown }, "neither True nor False"},
		{"true with reason", in, features.V1_37(), func(r *readiness.Result) { r.Ready.Reason = "X" }, "True with reason"},
		{"ready without containers ready", in, features.V1_37(), func(r *readiness.Result) {
			r.ContainersReady = v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: "m", ObservedGeneration: 3}
		}, "Ready is \"True\" but ContainersReady"},
		{"ready ignores a false gate", gatesFalse, features.V1_37(), func(r *readiness.Result) {
			r.Ready = v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, ObservedGeneration: 3}
		}, "all gates True is false"},
		{"ready does not copy", in, features.V1_37(), func(r *readiness.Result) {
			r.ContainersReady = v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: "m", ObservedGeneration: 3}
			r.Ready = v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: "other", ObservedGeneration: 3}
		}, "does not copy"},
		{"gate message misses the gate", gatesFalse, features.V1_37(), func(r *readiness.Result) { r.Ready.Message = "something" }, "does not name gate"},
		{"terminal but ready", succeeded, features.V1_37(), func(r *readiness.Result) {
			r.ContainersReady = v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionTrue, ObservedGeneration: 3}
			r.Ready = v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, ObservedGeneration: 3}
		}, "phase Succeeded"},
		{"unknown statuses not said", noStatuses, features.V1_37(), func(r *readiness.Result) {
			r.ContainersReady.Reason, r.Ready.Reason = "ContainersNotReady", "ContainersNotReady"
		}, "no container statuses"},
		{"no init but not initialized", in, features.V1_37(), func(r *readiness.Result) {
			r.Initialized.Status, r.Initialized.Reason = v1.ConditionFalse, "X"
		}, "no init containers"},
		{"sandbox missing but ready to start", noSandbox, features.V1_37(), func(r *readiness.Result) {
			r.PodReadyToStartContainers = v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue, ObservedGeneration: 3}
		}, "new sandbox needed"},
		{"sandbox message", noSandbox, features.V1_37(), func(r *readiness.Result) { r.PodReadyToStartContainers.Message = "other" }, "PodReadyToStartContainers says"},
		{"condition present though off", in, features.Set{NoReadyToStartContainers: true}, func(r *readiness.Result) {}, "is off"},
		{"observedGeneration", in, features.V1_37(), func(r *readiness.Result) { r.Ready.ObservedGeneration = 0 }, "observedGeneration 0, want 3"},
		{"observedGeneration without tracking", in, features.Set{NoObservedGenerationTracking: true}, func(r *readiness.Result) {}, "want 0"},
		{"clock", in, features.V1_37(), func(r *readiness.Result) { r.Ready.LastTransitionTime = baseTime() }, "no clock"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := readiness.Evaluate(c.in)
			if err != nil {
				t.Fatal(err)
			}
			c.mut(&r)
			// The result was computed with the default features; it is judged by c.f.
			judged := c.in
			judged.Features = c.f
			err = Invariants(judged, r)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Invariants = %v, want an error containing %q", err, c.want)
			}
			var rec recorder
			CheckInvariants(&rec, judged, r)
			if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], c.want) {
				t.Fatalf("CheckInvariants reported %q", rec.errs)
			}
		})
	}
	if err := Invariants(readiness.Input{}, good); err == nil {
		t.Errorf("Invariants accepted a result for a nil pod")
	}
}

func TestCheckPureCatchesImpurity(t *testing.T) {
	in := ReadyInput().Example(7)
	explain := func(in readiness.Input) (readiness.Explanation, error) { return readiness.Explain(in) }
	evaluate := func(in readiness.Input) (readiness.Result, error) { return readiness.Evaluate(in) }

	var rec recorder
	checkPure(&rec, in, evaluate, explain)
	if len(rec.errs) != 0 {
		t.Fatalf("pure Evaluate reported: %q", rec.errs)
	}

	mutating := func(in readiness.Input) (readiness.Result, error) {
		in.Pod.Spec.Containers[0].Name += "-changed" // through the shared pointer
		return readiness.Evaluate(in)
	}
	in = ReadyInput().Filter(func(in readiness.Input) bool { return len(in.Pod.Spec.Containers) > 0 }).Example(7)
	rec = recorder{}
	checkPure(&rec, in, mutating, explain)
	if len(rec.errs) == 0 || !strings.Contains(rec.errs[0], "mutated") {
		t.Errorf("mutation not reported: %q", rec.errs)
	}

	calls := 0
	flaky := func(in readiness.Input) (readiness.Result, error) {
		calls++
		r, err := readiness.Evaluate(in)
		r.Ready.Message = fmt.Sprint(calls)
		return r, err
	}
	rec = recorder{}
	checkPure(&rec, ReadyInput().Example(7), flaky, explain)
	if len(rec.errs) == 0 || !strings.Contains(rec.errs[0], "not deterministic") {
		t.Errorf("non-determinism not reported: %q", rec.errs)
	}

	rec = recorder{}
	checkPure(&rec, ReadyInput().Example(7), evaluate, func(in readiness.Input) (readiness.Explanation, error) {
		return readiness.Explanation{}, nil
	})
	if len(rec.errs) == 0 || !strings.Contains(rec.errs[0], "disagrees") {
		t.Errorf("disagreement not reported: %q", rec.errs)
	}
}

func TestJoined(t *testing.T) {
	empty := []v1.ContainerStatus{}
	a := []v1.ContainerStatus{{Name: "a"}}
	b := []v1.ContainerStatus{{Name: "b"}}
	cases := []struct {
		name          string
		init, regular []v1.ContainerStatus
		wantNil       bool
		wantNames     string
	}{
		{"nil nil", nil, nil, true, ""},
		{"nil empty", nil, empty, true, ""},
		{"empty nil", empty, nil, false, ""},
		{"nil a", nil, a, false, "a"},
		{"a b", a, b, false, "ab"},
	}
	for _, c := range cases {
		got := Joined(readiness.Input{InitContainerStatuses: c.init, ContainerStatuses: c.regular})
		kubelet := append(c.init, c.regular...)
		if (got == nil) != c.wantNil || (kubelet == nil) != c.wantNil {
			t.Errorf("%s: Joined nil = %v, kubelet's append nil = %v, want %v", c.name, got == nil, kubelet == nil, c.wantNil)
		}
		var names string
		for _, s := range got {
			names += s.Name
		}
		if names != c.wantNames {
			t.Errorf("%s: names %q, want %q", c.name, names, c.wantNames)
		}
	}
	// Joined must not write into spare capacity of the init list.
	init := make([]v1.ContainerStatus, 1, 4)
	init[0].Name = "i"
	_ = Joined(readiness.Input{InitContainerStatuses: init, ContainerStatuses: b})
	if spare := init[:2]; spare[1].Name != "" {
		t.Errorf("Joined wrote %q into the init list's backing array", spare[1].Name)
	}
}

func TestDeepCopyIsDeep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := Input().Draw(t, "input")
		Log(t, in)
		cp := DeepCopy(in)
		if (in.InitContainerStatuses == nil) != (cp.InitContainerStatuses == nil) ||
			(in.ContainerStatuses == nil) != (cp.ContainerStatuses == nil) ||
			(in.Conditions == nil) != (cp.Conditions == nil) ||
			(in.Sandboxes == nil) != (cp.Sandboxes == nil) ||
			(in.OldStatus == nil) != (cp.OldStatus == nil) {
			t.Fatalf("DeepCopy does not keep nil and empty apart")
		}
		if Describe(in) != Describe(cp) {
			t.Fatalf("copy differs:\n%s\n%s", Describe(in), Describe(cp))
		}
		if in.Pod == cp.Pod {
			t.Fatalf("pod shared")
		}
		if len(cp.ContainerStatuses) > 0 {
			cp.ContainerStatuses[0].Name = "changed-in-copy"
			if in.ContainerStatuses[0].Name == "changed-in-copy" {
				t.Fatalf("statuses shared")
			}
		}
		if len(cp.Sandboxes) > 0 {
			cp.Sandboxes[0].ID = "changed-in-copy"
			if in.Sandboxes[0].ID == "changed-in-copy" {
				t.Fatalf("sandboxes shared")
			}
		}
	})
}

func TestGeneratedFeatureSets(t *testing.T) {
	seen := map[features.Set]bool{}
	for seed := 0; seed < 200; seed++ {
		seen[Features().Example(seed)] = true
	}
	if !seen[features.V1_37()] || !seen[features.V1_34()] || len(seen) < 10 {
		t.Errorf("feature sets drawn: %d distinct, v1.37 %v, v1.34 %v", len(seen), seen[features.V1_37()], seen[features.V1_34()])
	}
}

// Neither kit draws a readiness gate named like a condition the kubelet owns; the list is
// restated here, as an oracle (podstatetest's test states it too).
func TestGatesAreNotKubeletOwned(t *testing.T) {
	owned := map[v1.PodConditionType]bool{v1.PodScheduled: true, v1.PodReady: true, v1.PodInitialized: true,
		v1.ContainersReady: true, v1.PodReadyToStartContainers: true, v1.PodResizePending: true,
		v1.PodResizeInProgress: true, v1.DisruptionTarget: true, v1.AllContainersRestarting: true}
	rapid.Check(t, func(t *rapid.T) {
		in := Input().Draw(t, "input")
		Log(t, in)
		for _, g := range in.Pod.Spec.ReadinessGates {
			if owned[g.ConditionType] {
				t.Fatalf("readiness gate %q is a condition the kubelet owns", g.ConditionType)
			}
		}
	})
}
