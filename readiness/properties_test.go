package readiness_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/readiness/readinesstest"
	"github.com/podstatus/podstatus/sandbox"
)

// TestPropertyInvariants: for any input and any feature set, the invariants hold and
// Evaluate is pure.
func TestPropertyInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := readinesstest.Input().Draw(t, "input")
		readinesstest.Log(t, in)
		f := readinesstest.Features().Draw(t, "features")
		in.Features = f
		r := readinesstest.CheckPure(t, in)
		readinesstest.CheckInvariants(t, in, r)
	})
}

// TestPropertyFaults: an input that is ready but for one thing is explained as exactly
// that thing, and the conditions say exactly what the kubelet would.
func TestPropertyFaults(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := readinesstest.FaultyInput().Draw(t, "case")
		in, f := c.Input, c.Fault
		e, err := readiness.Explain(in)
		if err != nil {
			t.Fatal(err)
		}
		r := e.Result
		spec := &in.Pod.Spec
		var regular, sidecarNames, initNames []string
		for _, ct := range spec.Containers {
			regular = append(regular, ct.Name)
		}
		for _, ct := range spec.InitContainers {
			if ct.RestartPolicy != nil && *ct.RestartPolicy == v1.ContainerRestartPolicyAlways {
				sidecarNames = append(sidecarNames, ct.Name)
			} else {
				initNames = append(initNames, ct.Name)
			}
		}
		sticky := false
		if in.OldStatus != nil {
			for _, oc := range in.OldStatus.Conditions {
				sticky = sticky || (oc.Type == v1.PodInitialized && oc.Status == v1.ConditionTrue)
			}
		}
		list := func(names ...string) string { return fmt.Sprintf("%s", names) }

		want := readiness.Explanation{Phase: v1.PodRunning}
		wantCR := cond(v1.ContainersReady, v1.ConditionTrue, "", "")
		wantInit := cond(v1.PodInitialized, v1.ConditionTrue, "", "")
		wantReady := cond(v1.PodReady, v1.ConditionTrue, "", "")
		wantSandbox := cond(v1.PodReadyToStartContainers, v1.ConditionTrue, "", "")
		notInit := func(what string) {
			if len(regular) == 0 && !sticky {
				wantInit = cond(v1.PodInitialized, v1.ConditionFalse, readiness.ReasonContainersNotInitialized, what)
			}
		}
		switch f.Kind {
		case readinesstest.FaultUnknownContainer:
			want.UnknownContainers = []string{f.Container}
			wantCR = cond(v1.ContainersReady, v1.ConditionFalse, readiness.ReasonContainersNotReady, "containers with unknown status: "+list(f.Container))
		case readinesstest.FaultUnreadyContainer:
			want.UnreadyContainers = []string{f.Container}
			wantCR = cond(v1.ContainersReady, v1.ConditionFalse, readiness.ReasonContainersNotReady, "containers with unready status: "+list(f.Container))
		case readinesstest.FaultUnknownSidecar:
			want.UnknownSidecars = []string{f.Container}
			wantCR = cond(v1.ContainersReady, v1.ConditionFalse, readiness.ReasonContainersNotReady, "containers with unknown status: "+list(f.Container))
			notInit("containers with unknown status: " + list(f.Container))
		case readinesstest.FaultUnreadySidecar:
			want.UnreadySidecars = []string{f.Container}
			wantCR = cond(v1.ContainersReady, v1.ConditionFalse, readiness.ReasonContainersNotReady, "containers with unready status: "+list(f.Container))
		case readinesstest.FaultSidecarNotStarted:
			want.UnreadySidecars, want.NotStartedSidecars = []string{f.Container}, []string{f.Container}
			wantCR = cond(v1.ContainersReady, v1.ConditionFalse, readiness.ReasonContainersNotReady, "containers with unready status: "+list(f.Container))
			notInit("containers with incomplete status: " + list(f.Container))
		case readinesstest.FaultUnknownInit, readinesstest.FaultIncompleteInit:
			what := "containers with unknown status: "
			if f.Kind == readinesstest.FaultUnknownInit {
				want.UnknownInitContainers = []string{f.Container}
			} else {
				want.IncompleteInitContainers = []string{f.Container}
				what = "containers with incomplete status: "
			}
			want.UnreadyContainers, want.NotStartedContainers = regular, regular
			if len(regular) > 0 {
				wantCR = cond(v1.ContainersReady, v1.ConditionFalse, readiness.ReasonContainersNotReady, "containers with unready status: "+list(regular...))
			}
			if !sticky {
				wantInit = cond(v1.PodInitialized, v1.ConditionFalse, readiness.ReasonContainersNotInitialized, what+list(f.Container))
			}
		case readinesstest.FaultMissingGate:
			want.MissingGates = []v1.PodConditionType{f.Gate}
			wantReady = cond(v1.PodReady, v1.ConditionFalse, readiness.ReasonReadinessGatesNotReady,
				fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", f.Gate))
		case readinesstest.FaultGateNotTrue:
			want.NotTrueGates = []readiness.GateResult{{Type: f.Gate, Status: f.Status}}
			wantReady = cond(v1.PodReady, v1.ConditionFalse, readiness.ReasonReadinessGatesNotReady,
				fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %s", f.Gate, f.Status))
		case readinesstest.FaultSandbox:
			want.Sandbox = f.Sandbox
			wantSandbox = cond(v1.PodReadyToStartContainers, v1.ConditionFalse, readiness.ReasonPodSandboxNotReady, f.Sandbox)
		case readinesstest.FaultTerminalPhase:
			want.Phase = f.Phase
			reason := readiness.ReasonPodFailed
			if f.Phase == v1.PodSucceeded {
				reason = readiness.ReasonPodCompleted
				wantInit.Reason = readiness.ReasonPodCompleted
			}
			wantCR = cond(v1.ContainersReady, v1.ConditionFalse, reason, "")
		case readinesstest.FaultNoStatuses:
			want.StatusesUnknown = true
			want.UnknownContainers, want.UnknownSidecars, want.UnknownInitContainers = regular, sidecarNames, initNames
			wantCR = cond(v1.ContainersReady, v1.ConditionFalse, readiness.ReasonUnknownContainerStatuses, "")
			if len(spec.InitContainers) > 0 {
				wantInit = cond(v1.PodInitialized, v1.ConditionFalse, readiness.ReasonUnknownContainerStatuses, "")
			}
		default:
			t.Fatalf("unknown fault %q", f.Kind)
		}
		if wantCR.Status != v1.ConditionTrue {
			wantReady = cond(v1.PodReady, wantCR.Status, wantCR.Reason, wantCR.Message)
		}
		want.Ready = wantReady.Status == v1.ConditionTrue
		gen := in.Pod.Generation
		for _, p := range []*v1.PodCondition{&wantCR, &wantInit, &wantReady, &wantSandbox} {
			p.ObservedGeneration = gen
		}
		want.Result = readiness.Result{PodReadyToStartContainers: wantSandbox, Initialized: wantInit, ContainersReady: wantCR, Ready: wantReady}
		if diff := cmp.Diff(want, e, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("fault %+v: Explain (-want +got):\n%s\ninput: %s", f, diff, readinesstest.Describe(in))
		}
		if r != evaluate2(t, in) {
			t.Fatalf("Explain and Evaluate disagree")
		}
	})
}

func evaluate2(t *rapid.T, in readiness.Input, fs ...features.Set) readiness.Result {
	for _, f := range fs {
		in.Features = f
	}
	r, err := readiness.Evaluate(in)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return r
}

// TestPropertyExplainAgrees: the kubelet's messages can be rebuilt from Explain's lists,
// so Explain reports exactly what Evaluate judged.
func TestPropertyExplainAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := readinesstest.Input().Draw(t, "input")
		readinesstest.Log(t, in)
		e, err := readiness.Explain(in)
		if err != nil {
			t.Fatal(err)
		}
		r := e.Result
		if e.Ready != (r.Ready.Status == v1.ConditionTrue) {
			t.Fatalf("Ready %v versus %s", e.Ready, r.Ready.Status)
		}
		if e.Sandbox != r.PodReadyToStartContainers.Message {
			t.Fatalf("sandbox %q versus %q", e.Sandbox, r.PodReadyToStartContainers.Message)
		}
		if e.StatusesUnknown || in.Phase == v1.PodSucceeded || in.Phase == v1.PodFailed {
			return
		}
		parts := func(a, b string, x, y []string) string {
			var p []string
			if len(x) > 0 {
				p = append(p, a+fmt.Sprintf("%s", x))
			}
			if len(y) > 0 {
				p = append(p, b+fmt.Sprintf("%s", y))
			}
			return strings.Join(p, ", ")
		}
		unknown := append(append([]string{}, e.UnknownSidecars...), e.UnknownContainers...)
		unready := append(append([]string{}, e.UnreadySidecars...), e.UnreadyContainers...)
		if msg := parts("containers with unknown status: ", "containers with unready status: ", unknown, unready); msg != r.ContainersReady.Message {
			t.Fatalf("ContainersReady message %q, rebuilt from Explain %q", r.ContainersReady.Message, msg)
		}
		if r.Initialized.Status == v1.ConditionFalse {
			in2 := map[string]bool{}
			for _, n := range append(append([]string{}, e.UnknownInitContainers...), e.UnknownSidecars...) {
				in2["u"+n] = true
			}
			for _, n := range append(append([]string{}, e.IncompleteInitContainers...), e.NotStartedSidecars...) {
				in2["i"+n] = true
			}
			var u, i []string
			for _, c := range in.Pod.Spec.InitContainers {
				if in2["u"+c.Name] {
					u = append(u, c.Name)
				}
				if in2["i"+c.Name] {
					i = append(i, c.Name)
				}
			}
			if msg := parts("containers with unknown status: ", "containers with incomplete status: ", u, i); msg != r.Initialized.Message {
				t.Fatalf("Initialized message %q, rebuilt from Explain %q", r.Initialized.Message, msg)
			}
		}
		if r.ContainersReady.Status == v1.ConditionTrue {
			var msgs []string
			notTrue := map[v1.PodConditionType]v1.ConditionStatus{}
			for _, g := range e.NotTrueGates {
				notTrue[g.Type] = g.Status
			}
			missing := map[v1.PodConditionType]bool{}
			for _, g := range e.MissingGates {
				missing[g] = true
			}
			for _, g := range in.Pod.Spec.ReadinessGates {
				if missing[g.ConditionType] {
					msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
				} else if s, ok := notTrue[g.ConditionType]; ok {
					msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", g.ConditionType, s))
				}
			}
			if msg := strings.Join(msgs, ", "); msg != r.Ready.Message {
				t.Fatalf("Ready message %q, rebuilt from Explain %q", r.Ready.Message, msg)
			}
		}
	})
}

// TestPropertyStatusPlacement: only the joined order of the two status lists matters,
// as the kubelet joins them before it looks.
func TestPropertyStatusPlacement(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := readinesstest.Input().Draw(t, "input")
		readinesstest.Log(t, in)
		f := readinesstest.Features().Draw(t, "features")
		joined := readinesstest.Joined(in)
		k := rapid.IntRange(0, len(joined)).Draw(t, "split")
		moved := in
		moved.InitContainerStatuses = joined[:k:k]
		moved.ContainerStatuses = joined[k:]
		if a, b := evaluate2(t, in, f), evaluate2(t, moved, f); a != b {
			t.Fatalf("splitting the joined list at %d changed the result:\n%+v\n%+v", k, a, b)
		}
	})
}

// TestPropertyIrrelevantAdditions: statuses of containers not in the spec, a later
// duplicate status that has not started, unrelated conditions, a later duplicate gate
// condition and an ephemeral container change nothing.
func TestPropertyIrrelevantAdditions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := readinesstest.Input().Draw(t, "input")
		readinesstest.Log(t, in)
		f := readinesstest.Features().Draw(t, "features")
		before := evaluate2(t, in, f)
		more := readinesstest.DeepCopy(in)
		if readinesstest.Joined(in) != nil {
			more.ContainerStatuses = append(more.ContainerStatuses,
				v1.ContainerStatus{Name: "zz-not-in-spec-zz", Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}})
			// A later status of a name counts only when there is no earlier one, and a
			// started one would prove initialization: add only unstarted duplicates of
			// containers that have a status.
			for _, c := range in.Pod.Spec.Containers {
				if hasStatus(readinesstest.Joined(in), c.Name) && rapid.Bool().Draw(t, "duplicate") {
					more.ContainerStatuses = append(more.ContainerStatuses, v1.ContainerStatus{Name: c.Name, Ready: rapid.Bool().Draw(t, "dupReady")})
				}
			}
		}
		more.Conditions = append(more.Conditions, cond("zz.example.com/unrelated", v1.ConditionFalse, "", ""))
		// A later condition of a gate's type counts only when there is no earlier one.
		for _, g := range in.Pod.Spec.ReadinessGates {
			if conditions.Get(in.Conditions, g.ConditionType) != nil && rapid.Bool().Draw(t, "duplicateGate") {
				more.Conditions = append(more.Conditions, cond(g.ConditionType, v1.ConditionUnknown, "", ""))
			}
		}
		more.Pod.Spec.EphemeralContainers = append(more.Pod.Spec.EphemeralContainers,
			v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "zz-debugger-ephemeral"}})
		if after := evaluate2(t, more, f); after != before {
			t.Fatalf("irrelevant additions changed the result:\n%+v\n%+v\n%s", before, after, readinesstest.Describe(more))
		}
	})
}

// TestPropertyFeatureIsolation: each feature changes only its own part of the result.
func TestPropertyFeatureIsolation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := readinesstest.Input().Draw(t, "input")
		readinesstest.Log(t, in)
		def := evaluate2(t, in)

		off := evaluate2(t, in, features.Set{NoReadyToStartContainers: true})
		if off.PodReadyToStartContainers != (v1.PodCondition{}) {
			t.Fatalf("NoReadyToStartContainers: %+v", off.PodReadyToStartContainers)
		}
		off.PodReadyToStartContainers = def.PodReadyToStartContainers
		if off != def {
			t.Fatalf("NoReadyToStartContainers changed other conditions:\n%+v\n%+v", def, off)
		}

		diag := evaluate2(t, in, features.Set{NoSandboxDiagnostics: true})
		want := def
		want.PodReadyToStartContainers.Reason, want.PodReadyToStartContainers.Message = "", ""
		if diag != want {
			t.Fatalf("NoSandboxDiagnostics:\n%+v\nwant\n%+v", diag, want)
		}

		sticky := evaluate2(t, in, features.Set{NoRestartAllContainers: true})
		if sticky.Initialized != def.Initialized && (def.Initialized.Status != v1.ConditionTrue || sticky.Initialized.Status != v1.ConditionFalse) {
			t.Fatalf("NoRestartAllContainers may only turn a True Initialized False: %+v -> %+v", def.Initialized, sticky.Initialized)
		}
		sticky.Initialized = def.Initialized
		if sticky != def {
			t.Fatalf("NoRestartAllContainers changed more than Initialized")
		}

		// Restart rules do not enter readiness at all.
		if rules := evaluate2(t, in, features.Set{NoContainerRestartRules: true}); rules != def {
			t.Fatalf("NoContainerRestartRules changed the result")
		}
	})
}

// TestPropertyApply: applying a result sets each kubelet condition with the
// lastTransitionTime rule, and applying it again later changes nothing.
func TestPropertyApply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := readinesstest.Input().Draw(t, "input")
		readinesstest.Log(t, in)
		r := evaluate2(t, in)
		var s v1.PodStatus
		if in.OldStatus != nil {
			s = *in.OldStatus.DeepCopy()
		}
		s.Phase = in.Phase
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = at(i)
		}
		old := s.DeepCopy()
		apply(t, &s, r, at(30))
		for _, want := range r.Conditions() {
			got := conditions.Get(s.Conditions, want.Type)
			if got == nil {
				t.Fatalf("%s not written", want.Type)
			}
			prev := conditions.Get(old.Conditions, want.Type)
			// Evaluate never says True in a terminal phase, so nothing is forced here.
			if got.Status != want.Status || got.Reason != want.Reason || got.Message != want.Message {
				t.Fatalf("%s = %+v, want %+v", want.Type, got, want)
			}
			wantLTT := at(30)
			if prev != nil && prev.Status == got.Status {
				wantLTT = prev.LastTransitionTime
			}
			if !got.LastTransitionTime.Equal(&wantLTT) {
				t.Fatalf("%s LTT %v, want %v (old %+v)", want.Type, got.LastTransitionTime, wantLTT, prev)
			}
		}
		if p := in.Phase; p == v1.PodSucceeded || p == v1.PodFailed {
			for _, ct := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
				if conditions.Get(s.Conditions, ct).Status == v1.ConditionTrue {
					t.Fatalf("terminal phase %s left %s True", p, ct)
				}
			}
		}
		again := s.DeepCopy()
		if apply(t, &s, r, at(45)) {
			t.Fatalf("applying the same result again reported a change")
		}
		if diff := cmp.Diff(again, &s); diff != "" {
			t.Fatalf("applying the same result again changed the status:\n%s", diff)
		}
	})
}

func hasStatus(list []v1.ContainerStatus, name string) bool {
	for _, s := range list {
		if s.Name == name {
			return true
		}
	}
	return false
}

// TestPropertySandboxMatchesNeedsNew: PodReadyToStartContainers is sandbox.NeedsNew's
// verdict, for any sandboxes.
func TestPropertySandboxMatchesNeedsNew(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := readinesstest.Pod().Draw(t, "pod")
		sb := readinesstest.Sandboxes(pod).Draw(t, "sandboxes")
		r := evaluate2(t, readiness.Input{Pod: pod, Sandboxes: sb})
		d := sandbox.NeedsNew(pod, sb)
		if (r.PodReadyToStartContainers.Status == v1.ConditionTrue) == d.Create || r.PodReadyToStartContainers.Message != d.Message {
			t.Fatalf("condition %+v, decision %+v", r.PodReadyToStartContainers, d)
		}
	})
}
