package readinesstest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// TB is the part of testing.TB (and of *rapid.T) the checks use: *testing.T,
// *testing.B, *testing.F and *rapid.T all satisfy it.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// Logger is the part of testing.TB (and of *rapid.T) Log uses: *testing.T, *testing.B,
// *testing.F and *rapid.T all satisfy it. podstatetest.Logger is the same interface.
type Logger interface {
	Helper()
	Logf(format string, args ...any)
}

// Log logs Describe(in) through t. Called right after an input is drawn inside
// rapid.Check, it makes a failing property print its input readably: rapid shows a
// failing case's log, and its own dump of a drawn value prints pointers as addresses.
// podstatetest.Log does the same for podstate inputs.
func Log(t Logger, in readiness.Input) {
	t.Helper()
	t.Logf("input: %s", Describe(in))
}

// CheckInvariants reports through t.Errorf every invariant (see Invariants) that r
// violates as the result of evaluating in (with the feature set in.Features).
func CheckInvariants(t TB, in readiness.Input, r readiness.Result) {
	t.Helper()
	if err := Invariants(in, r); err != nil {
		t.Errorf("readiness invariants violated:\n%v\ninput: %s\nresult: %+v", err, Describe(in), r)
	}
}

// Invariants returns the violations (joined; nil when there are none) of what must hold
// for any result r that Evaluate returns for in, whose feature set in.Features is called
// f below:
//
//   - every condition has its Type (PodReadyToStartContainers only when f has it on,
//     otherwise it is the zero condition), a Status of True or False, and zero
//     LastProbeTime and LastTransitionTime;
//   - a True condition has no Reason and no Message, except Initialized, which says
//     PodCompleted in phase Succeeded; a False one has a Reason (PodReadyToStartContainers
//     only with sandbox diagnostics on);
//   - Ready is True exactly when ContainersReady is True and every readiness gate's
//     condition (the first of its type in in.Conditions) is True;
//   - when ContainersReady is not True, Ready has the same Status, Reason and Message;
//   - when ContainersReady is True and Ready is not, the reason is ReadinessGatesNotReady
//     and the message names every gate that is not True, in spec order;
//   - in phase Succeeded or Failed, neither Ready nor ContainersReady is True;
//   - with no container statuses at all, ContainersReady says UnknownContainerStatuses,
//     and so does Initialized if there are init containers;
//   - a pod without init containers is Initialized;
//   - PodReadyToStartContainers is True exactly when sandbox.NeedsNew says no new sandbox
//     is needed, and its message is NeedsNew's message;
//   - every observedGeneration follows the kubelet's rule: the pod's generation with
//     observedGeneration tracking on; otherwise the generation only if the old status has
//     a condition of that type with a non-zero observedGeneration, else 0.
func Invariants(in readiness.Input, r readiness.Result) error {
	f := in.Features
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if in.Pod == nil {
		return errors.New("no pod: Evaluate must fail on a nil Input.Pod")
	}
	spec := &in.Pod.Spec

	type named struct {
		c    v1.PodCondition
		want v1.PodConditionType
	}
	all := []named{{r.Initialized, v1.PodInitialized}, {r.ContainersReady, v1.ContainersReady}, {r.Ready, v1.PodReady}}
	if f.ReadyToStartContainers() {
		all = append(all, named{r.PodReadyToStartContainers, v1.PodReadyToStartContainers})
	} else if r.PodReadyToStartContainers != (v1.PodCondition{}) {
		fail("PodReadyToStartContainers is off but the result has %+v", r.PodReadyToStartContainers)
	}
	for _, n := range all {
		c := n.c
		if c.Type != n.want {
			fail("condition of type %q where %q belongs", c.Type, n.want)
		}
		if c.Status != v1.ConditionTrue && c.Status != v1.ConditionFalse {
			fail("%s: status %q is neither True nor False", n.want, c.Status)
		}
		if !c.LastProbeTime.IsZero() || !c.LastTransitionTime.IsZero() {
			fail("%s: times are set (%v, %v); Evaluate has no clock", n.want, c.LastProbeTime, c.LastTransitionTime)
		}
		switch {
		case c.Status == v1.ConditionTrue && n.want == v1.PodInitialized && c.Reason == readiness.ReasonPodCompleted:
			if in.Phase != v1.PodSucceeded || c.Message != "" {
				fail("Initialized True/PodCompleted outside phase Succeeded (phase %q) or with a message %q", in.Phase, c.Message)
			}
		case c.Status == v1.ConditionTrue && (c.Reason != "" || c.Message != ""):
			fail("%s: True with reason %q and message %q", n.want, c.Reason, c.Message)
		case c.Status == v1.ConditionFalse && c.Reason == "" &&
			!(n.want == v1.PodReadyToStartContainers && !f.SandboxDiagnostics()):
			fail("%s: False without a reason", n.want)
		}
		if want := wantGeneration(f, in, n.want); c.ObservedGeneration != want {
			fail("%s: observedGeneration %d, want %d", n.want, c.ObservedGeneration, want)
		}
	}

	cr, ready := r.ContainersReady, r.Ready
	gatesTrue := true
	var notTrue []string
	for _, g := range spec.ReadinessGates {
		c := firstCondition(in.Conditions, g.ConditionType)
		if c == nil || c.Status != v1.ConditionTrue {
			gatesTrue = false
			notTrue = append(notTrue, fmt.Sprintf("%q", string(g.ConditionType)))
		}
	}
	if (ready.Status == v1.ConditionTrue) != (cr.Status == v1.ConditionTrue && gatesTrue) {
		fail("Ready is %q but ContainersReady is %q and all gates True is %v", ready.Status, cr.Status, gatesTrue)
	}
	if cr.Status != v1.ConditionTrue && (ready.Status != cr.Status || ready.Reason != cr.Reason || ready.Message != cr.Message) {
		fail("ContainersReady is not True (%q, %q, %q) but Ready does not copy it (%q, %q, %q)",
			cr.Status, cr.Reason, cr.Message, ready.Status, ready.Reason, ready.Message)
	}
	if cr.Status == v1.ConditionTrue && ready.Status != v1.ConditionTrue {
		if ready.Reason != readiness.ReasonReadinessGatesNotReady {
			fail("containers are ready but Ready's reason is %q, want %q", ready.Reason, readiness.ReasonReadinessGatesNotReady)
		}
		last := 0
		for _, q := range notTrue {
			i := strings.Index(ready.Message[last:], q)
			if i < 0 {
				fail("Ready's message %q does not name gate %s (in spec order)", ready.Message, q)
				break
			}
			last += i + len(q)
		}
	}
	if (in.Phase == v1.PodSucceeded || in.Phase == v1.PodFailed) &&
		(ready.Status == v1.ConditionTrue || cr.Status == v1.ConditionTrue) {
		fail("phase %s but Ready is %q and ContainersReady is %q", in.Phase, ready.Status, cr.Status)
	}
	if Joined(in) == nil {
		if cr.Status != v1.ConditionFalse || cr.Reason != readiness.ReasonUnknownContainerStatuses {
			fail("no container statuses but ContainersReady is %q/%q", cr.Status, cr.Reason)
		}
		if len(spec.InitContainers) > 0 && (r.Initialized.Status != v1.ConditionFalse || r.Initialized.Reason != readiness.ReasonUnknownContainerStatuses) {
			fail("no container statuses but Initialized is %q/%q", r.Initialized.Status, r.Initialized.Reason)
		}
	}
	if len(spec.InitContainers) == 0 && r.Initialized.Status != v1.ConditionTrue {
		fail("no init containers but Initialized is %q", r.Initialized.Status)
	}
	if f.ReadyToStartContainers() {
		d := sandbox.NeedsNew(in.Pod, in.Sandboxes)
		p := r.PodReadyToStartContainers
		if (p.Status == v1.ConditionTrue) == d.Create {
			fail("PodReadyToStartContainers is %q but a new sandbox needed is %v (%s)", p.Status, d.Create, d.Message)
		}
		if f.SandboxDiagnostics() && d.Create && (p.Reason != readiness.ReasonPodSandboxNotReady || p.Message != d.Message) {
			fail("PodReadyToStartContainers says %q/%q, want %q/%q", p.Reason, p.Message, readiness.ReasonPodSandboxNotReady, d.Message)
		}
		if !f.SandboxDiagnostics() && (p.Reason != "" || p.Message != "") {
			fail("sandbox diagnostics are off but PodReadyToStartContainers says %q/%q", p.Reason, p.Message)
		}
	}
	return errors.Join(errs...)
}

// wantGeneration is the kubelet's CalculatePodConditionObservedGeneration, with a nil old
// status treated as an empty one.
func wantGeneration(f features.Set, in readiness.Input, t v1.PodConditionType) int64 {
	if f.ObservedGenerationTracking() {
		return in.Pod.Generation
	}
	if in.OldStatus != nil {
		for _, c := range in.OldStatus.Conditions {
			if c.Type == t && c.ObservedGeneration != 0 {
				return in.Pod.Generation
			}
		}
	}
	return 0
}

func firstCondition(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// CheckPure evaluates in twice and reports through t.Errorf if Evaluate
// changed its input (compared with a deep copy taken before, nil and empty lists told
// apart), if the two results or errors differ, or if Explain's Result differs from
// Evaluate's. It returns the first result.
func CheckPure(t TB, in readiness.Input) readiness.Result {
	t.Helper()
	return checkPure(t, in, readiness.Evaluate, readiness.Explain)
}

// checkPure is CheckPure with the functions under test passed in, so that its own tests
// can show it catches an impure one.
func checkPure(t TB, in readiness.Input,
	evaluate func(readiness.Input) (readiness.Result, error),
	explain func(readiness.Input) (readiness.Explanation, error),
) readiness.Result {
	t.Helper()
	before := DeepCopy(in)
	r1, err1 := evaluate(in)
	if !reflect.DeepEqual(before, in) {
		t.Errorf("Evaluate mutated its input:\nbefore: %s\nafter:  %s", Describe(before), Describe(in))
	}
	r2, err2 := evaluate(in)
	if r1 != r2 || fmt.Sprint(err1) != fmt.Sprint(err2) {
		t.Errorf("Evaluate is not deterministic: %+v (%v) then %+v (%v)", r1, err1, r2, err2)
	}
	e, err3 := explain(in)
	if !reflect.DeepEqual(before, in) {
		t.Errorf("Explain mutated its input:\nbefore: %s\nafter:  %s", Describe(before), Describe(in))
	}
	if (err1 == nil) != (err3 == nil) || (err1 == nil && e.Result != r1) {
		t.Errorf("Explain disagrees with Evaluate: %+v (%v) versus %+v (%v)", e.Result, err3, r1, err1)
	}
	return r1
}

// DeepCopy returns a copy of in that shares no memory with it and keeps nil and empty
// lists apart.
func DeepCopy(in readiness.Input) readiness.Input {
	out := in
	if in.Pod != nil {
		out.Pod = in.Pod.DeepCopy()
	}
	out.InitContainerStatuses = copyStatuses(in.InitContainerStatuses)
	out.ContainerStatuses = copyStatuses(in.ContainerStatuses)
	if in.Conditions != nil {
		out.Conditions = make([]v1.PodCondition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	if in.Sandboxes != nil {
		out.Sandboxes = append(make([]sandbox.Status, 0, len(in.Sandboxes)), in.Sandboxes...)
	}
	if in.OldStatus != nil {
		out.OldStatus = in.OldStatus.DeepCopy()
	}
	return out
}

func copyStatuses(in []v1.ContainerStatus) []v1.ContainerStatus {
	if in == nil {
		return nil
	}
	out := make([]v1.ContainerStatus, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

// Describe renders in compactly for failure messages: the spec's containers by kind,
// gates, phase, each status list (nil and empty told apart), conditions, sandboxes and
// the old status's conditions.
func Describe(in readiness.Input) string {
	if in.Pod == nil {
		return "{Pod: nil}"
	}
	var b strings.Builder
	spec := &in.Pod.Spec
	fmt.Fprintf(&b, "{gen=%d hostNetwork=%v init=[", in.Pod.Generation, spec.HostNetwork)
	for i, c := range spec.InitContainers {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.Name)
		if c.RestartPolicy != nil {
			fmt.Fprintf(&b, "(%s)", *c.RestartPolicy)
		}
	}
	b.WriteString("] containers=[")
	for i, c := range spec.Containers {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.Name)
	}
	fmt.Fprintf(&b, "] ephemeral=%d gates=[", len(spec.EphemeralContainers))
	for i, g := range spec.ReadinessGates {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(g.ConditionType))
	}
	fmt.Fprintf(&b, "] phase=%q initStatuses=%s statuses=%s conditions=[", in.Phase,
		describeStatuses(in.InitContainerStatuses), describeStatuses(in.ContainerStatuses))
	for i, c := range in.Conditions {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", c.Type, c.Status)
	}
	b.WriteString("] sandboxes=[")
	for i, s := range in.Sandboxes {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "{%s a%d ready=%v host=%v ip=%q nonet=%v}", s.ID, s.Attempt, s.Ready, s.HostNetwork, s.IP, s.NoNetworkStatus)
	}
	b.WriteString("] old=")
	if in.OldStatus == nil {
		b.WriteString("nil")
	} else {
		b.WriteByte('[')
		for i, c := range in.OldStatus.Conditions {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s=%s/og%d", c.Type, c.Status, c.ObservedGeneration)
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}

func describeStatuses(list []v1.ContainerStatus) string {
	if list == nil {
		return "nil"
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			b.WriteByte(' ')
		}
		started := "nil"
		if s.Started != nil {
			started = fmt.Sprint(*s.Started)
		}
		state := "none"
		switch {
		case s.State.Running != nil:
			state = "running"
		case s.State.Terminated != nil:
			state = fmt.Sprintf("exited(%d)", s.State.Terminated.ExitCode)
		case s.State.Waiting != nil:
			state = "waiting"
		}
		fmt.Fprintf(&b, "%s{ready=%v started=%s %s}", s.Name, s.Ready, started, state)
	}
	b.WriteByte(']')
	return b.String()
}
