package readiness_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/readiness/readinesstest"
	"github.com/podstatus/podstatus/sandbox"
)

// Helpers named after the upstream test helpers of pkg/kubelet/status/generate_test.go.

func readyStatus(n string) v1.ContainerStatus    { return v1.ContainerStatus{Name: n, Ready: true} }
func notReadyStatus(n string) v1.ContainerStatus { return v1.ContainerStatus{Name: n} }
func startedStatus(n string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: n, Started: ptr(true)}
}
func notStartedStatus(n string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: n, Started: ptr(false)}
}

func ptr[T any](v T) *T { return &v }

func always() *v1.ContainerRestartPolicy { return ptr(v1.ContainerRestartPolicyAlways) }

func containers(names ...string) []v1.Container {
	out := make([]v1.Container, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	return out
}

func sidecars(names ...string) []v1.Container {
	out := containers(names...)
	for i := range out {
		out[i].RestartPolicy = always()
	}
	return out
}

func gates(types ...v1.PodConditionType) []v1.PodReadinessGate {
	out := make([]v1.PodReadinessGate, len(types))
	for i, t := range types {
		out[i].ConditionType = t
	}
	return out
}

func cond(t v1.PodConditionType, s v1.ConditionStatus, reason, message string) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: s, Reason: reason, Message: message}
}

// inputs returns the ways the kubelet's joined status list (as the upstream tests pass
// it) can be given to Evaluate: everything in ContainerStatuses (with an empty, non-nil
// init list when the joined list is non-nil), and each init container's status in the
// init list. Both must give the same result.
func inputs(spec v1.PodSpec, joined []v1.ContainerStatus, phase v1.PodPhase) map[string]readiness.Input {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "new", Name: "foo", UID: "12345678"}, Spec: spec}
	flat := readiness.Input{Pod: pod, Phase: phase, InitContainerStatuses: joined[:0:0], ContainerStatuses: joined}
	split := readiness.Input{Pod: pod, Phase: phase}
	if joined != nil {
		split.InitContainerStatuses = []v1.ContainerStatus{}
		split.ContainerStatuses = []v1.ContainerStatus{}
	}
	isInit := map[string]bool{}
	for _, c := range spec.InitContainers {
		isInit[c.Name] = true
	}
	for _, s := range joined {
		if isInit[s.Name] {
			split.InitContainerStatuses = append(split.InitContainerStatuses, s)
		} else {
			split.ContainerStatuses = append(split.ContainerStatuses, s)
		}
	}
	return map[string]readiness.Input{"flat": flat, "split": split}
}

func evaluate(t *testing.T, in readiness.Input, fs ...features.Set) readiness.Result {
	t.Helper()
	for _, f := range fs {
		in.Features = f
	}
	r, err := readiness.Evaluate(in)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return r
}

// TestContainersReadyUpstreamCases is TestGenerateContainersReadyCondition of the
// kubelet v1.37.0, with the full condition compared.
func TestContainersReadyUpstreamCases(t *testing.T) {
	cases := []struct {
		name     string
		spec     v1.PodSpec
		statuses []v1.ContainerStatus
		phase    v1.PodPhase
		want     v1.PodCondition
	}{
		{"1 no spec, nil statuses", v1.PodSpec{}, nil, v1.PodRunning,
			cond(v1.ContainersReady, v1.ConditionFalse, "UnknownContainerStatuses", "")},
		{"2 no spec, empty statuses", v1.PodSpec{}, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.ContainersReady, v1.ConditionTrue, "", "")},
		{"3 one container, no status", v1.PodSpec{Containers: containers("1234")}, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unknown status: [1234]")},
		{"4 both ready", v1.PodSpec{Containers: containers("1234", "5678")},
			[]v1.ContainerStatus{readyStatus("1234"), readyStatus("5678")}, v1.PodRunning,
			cond(v1.ContainersReady, v1.ConditionTrue, "", "")},
		{"5 one unknown", v1.PodSpec{Containers: containers("1234", "5678")},
			[]v1.ContainerStatus{readyStatus("1234")}, v1.PodRunning,
			cond(v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unknown status: [5678]")},
		{"6 one unready", v1.PodSpec{Containers: containers("1234", "5678")},
			[]v1.ContainerStatus{readyStatus("1234"), notReadyStatus("5678")}, v1.PodRunning,
			cond(v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [5678]")},
		{"7 succeeded", v1.PodSpec{Containers: containers("1234")},
			[]v1.ContainerStatus{notReadyStatus("1234")}, v1.PodSucceeded,
			cond(v1.ContainersReady, v1.ConditionFalse, "PodCompleted", "")},
		{"8 sidecar unknown", v1.PodSpec{InitContainers: sidecars("restartable-init-1"), Containers: containers("regular-1")},
			[]v1.ContainerStatus{readyStatus("regular-1")}, v1.PodRunning,
			cond(v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unknown status: [restartable-init-1]")},
		{"9 sidecars all ready", v1.PodSpec{InitContainers: sidecars("restartable-init-1", "restartable-init-2"), Containers: containers("regular-1")},
			[]v1.ContainerStatus{readyStatus("restartable-init-1"), readyStatus("restartable-init-2"), readyStatus("regular-1")}, v1.PodRunning,
			cond(v1.ContainersReady, v1.ConditionTrue, "", "")},
		{"10 second sidecar unknown", v1.PodSpec{InitContainers: sidecars("restartable-init-1", "restartable-init-2"), Containers: containers("regular-1")},
			[]v1.ContainerStatus{readyStatus("restartable-init-1"), readyStatus("regular-1")}, v1.PodRunning,
			cond(v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unknown status: [restartable-init-2]")},
		{"11 second sidecar unready", v1.PodSpec{InitContainers: sidecars("restartable-init-1", "restartable-init-2"), Containers: containers("regular-1")},
			[]v1.ContainerStatus{readyStatus("restartable-init-1"), notReadyStatus("restartable-init-2"), readyStatus("regular-1")}, v1.PodRunning,
			cond(v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [restartable-init-2]")},
	}
	for _, c := range cases {
		for how, in := range inputs(c.spec, c.statuses, c.phase) {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				if diff := cmp.Diff(c.want, evaluate(t, in).ContainersReady); diff != "" {
					t.Errorf("ContainersReady (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestReadyUpstreamCases is TestGeneratePodReadyCondition of the kubelet v1.37.0, with
// the full condition compared.
func TestReadyUpstreamCases(t *testing.T) {
	gate1True := cond("gate1", v1.ConditionTrue, "", "")
	cases := []struct {
		name       string
		spec       v1.PodSpec
		conditions []v1.PodCondition
		statuses   []v1.ContainerStatus
		phase      v1.PodPhase
		want       v1.PodCondition
	}{
		{"1 nil statuses", v1.PodSpec{}, nil, nil, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionFalse, "UnknownContainerStatuses", "")},
		{"2 empty statuses", v1.PodSpec{}, nil, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionTrue, "", "")},
		{"3 unknown container", v1.PodSpec{Containers: containers("1234")}, nil, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unknown status: [1234]")},
		{"4 all ready", v1.PodSpec{Containers: containers("1234", "5678")}, nil,
			[]v1.ContainerStatus{readyStatus("1234"), readyStatus("5678")}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionTrue, "", "")},
		{"5 one unknown", v1.PodSpec{Containers: containers("1234", "5678")}, nil,
			[]v1.ContainerStatus{readyStatus("1234")}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unknown status: [5678]")},
		{"6 one unready", v1.PodSpec{Containers: containers("1234", "5678")}, nil,
			[]v1.ContainerStatus{readyStatus("1234"), notReadyStatus("5678")}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [5678]")},
		{"7 succeeded", v1.PodSpec{Containers: containers("1234")}, nil,
			[]v1.ContainerStatus{notReadyStatus("1234")}, v1.PodSucceeded,
			cond(v1.PodReady, v1.ConditionFalse, "PodCompleted", "")},
		{"8 gate missing", v1.PodSpec{ReadinessGates: gates("gate1")}, nil, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady", `corresponding condition of pod readiness gate "gate1" does not exist.`)},
		{"9 gate false", v1.PodSpec{ReadinessGates: gates("gate1")},
			[]v1.PodCondition{cond("gate1", v1.ConditionFalse, "", "")}, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady", `the status of pod readiness gate "gate1" is not "True", but False`)},
		{"10 gate true", v1.PodSpec{ReadinessGates: gates("gate1")},
			[]v1.PodCondition{gate1True}, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionTrue, "", "")},
		{"11 second gate missing", v1.PodSpec{ReadinessGates: gates("gate1", "gate2")},
			[]v1.PodCondition{gate1True}, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady", `corresponding condition of pod readiness gate "gate2" does not exist.`)},
		{"12 second gate false", v1.PodSpec{ReadinessGates: gates("gate1", "gate2")},
			[]v1.PodCondition{gate1True, cond("gate2", v1.ConditionFalse, "", "")}, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady", `the status of pod readiness gate "gate2" is not "True", but False`)},
		{"13 both gates true", v1.PodSpec{ReadinessGates: gates("gate1", "gate2")},
			[]v1.PodCondition{gate1True, cond("gate2", v1.ConditionTrue, "", "")}, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionTrue, "", "")},
		{"14 gate true, container unready", v1.PodSpec{Containers: containers("1234"), ReadinessGates: gates("gate1")},
			[]v1.PodCondition{gate1True}, []v1.ContainerStatus{notReadyStatus("1234")}, v1.PodRunning,
			cond(v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [1234]")},
	}
	for _, c := range cases {
		for how, in := range inputs(c.spec, c.statuses, c.phase) {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				in.Conditions = c.conditions
				if diff := cmp.Diff(c.want, evaluate(t, in).Ready); diff != "" {
					t.Errorf("Ready (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestInitializedUpstreamCases is TestGeneratePodInitializedCondition of the kubelet
// v1.37.0. Upstream compares Type, Status and Reason; the messages here follow its rules
// (the differential test in internal/upstream checks them against the kubelet).
func TestInitializedUpstreamCases(t *testing.T) {
	noInit := v1.PodSpec{}
	oneInit := v1.PodSpec{InitContainers: containers("1234"), Containers: containers("regular")}
	twoInit := v1.PodSpec{InitContainers: containers("1234", "5678"), Containers: containers("regular")}
	oneRestartable := v1.PodSpec{InitContainers: sidecars("1234"), Containers: containers("regular")}
	cases := []struct {
		name     string
		spec     v1.PodSpec
		statuses []v1.ContainerStatus
		phase    v1.PodPhase
		want     v1.PodCondition
	}{
		{"1 nil statuses", twoInit, nil, v1.PodRunning,
			cond(v1.PodInitialized, v1.ConditionFalse, "UnknownContainerStatuses", "")},
		{"2 no init", noInit, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.PodInitialized, v1.ConditionTrue, "", "")},
		{"3 init unknown", oneInit, []v1.ContainerStatus{}, v1.PodRunning,
			cond(v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with unknown status: [1234]")},
		{"4 both ready", twoInit, []v1.ContainerStatus{readyStatus("1234"), readyStatus("5678")}, v1.PodRunning,
			cond(v1.PodInitialized, v1.ConditionTrue, "", "")},
		{"5 second unknown", twoInit, []v1.ContainerStatus{readyStatus("1234")}, v1.PodRunning,
			cond(v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with unknown status: [5678]")},
		{"6 second incomplete", twoInit, []v1.ContainerStatus{readyStatus("1234"), notReadyStatus("5678")}, v1.PodRunning,
			cond(v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [5678]")},
		{"7 succeeded", oneInit, []v1.ContainerStatus{readyStatus("1234")}, v1.PodSucceeded,
			cond(v1.PodInitialized, v1.ConditionTrue, "PodCompleted", "")},
		{"8 sidecar not started", oneRestartable, []v1.ContainerStatus{notStartedStatus("1234")}, v1.PodPending,
			cond(v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [1234]")},
		{"9 sidecar started", oneRestartable, []v1.ContainerStatus{startedStatus("1234")}, v1.PodRunning,
			cond(v1.PodInitialized, v1.ConditionTrue, "", "")},
		{"10 sidecar not started, regular running", oneRestartable, []v1.ContainerStatus{notStartedStatus("1234"),
			{Name: "regular", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}, v1.PodRunning,
			cond(v1.PodInitialized, v1.ConditionTrue, "", "")},
		{"11 init waiting, regular terminated", oneInit, []v1.ContainerStatus{
			{Name: "1234", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}},
			{Name: "regular", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}}}, v1.PodRunning,
			cond(v1.PodInitialized, v1.ConditionTrue, "", "")},
	}
	for _, c := range cases {
		for how, in := range inputs(c.spec, c.statuses, c.phase) {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				in.OldStatus = &v1.PodStatus{}
				if diff := cmp.Diff(c.want, evaluate(t, in).Initialized); diff != "" {
					t.Errorf("Initialized (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestReadyToStartContainersUpstreamCases is TestGeneratePodReadyToStartContainersCondition
// of the kubelet v1.37.0, with Reason and Message, plus the same cases as v1.34 (no
// reason, no message).
func TestReadyToStartContainersUpstreamCases(t *testing.T) {
	const reason = "PodSandboxNotReady"
	cases := []struct {
		name        string
		hostNetwork bool
		sandboxes   []sandbox.Status
		want        v1.PodCondition
	}{
		{"Empty pod status", false, nil,
			cond(v1.PodReadyToStartContainers, v1.ConditionFalse, reason, "no pod sandbox exists")},
		{"Pod sandbox status not ready", false, []sandbox.Status{{Attempt: 0, Ready: false, NoNetworkStatus: true}},
			cond(v1.PodReadyToStartContainers, v1.ConditionFalse, reason, "pod sandbox is not ready")},
		{"Pod with multiple ready sandboxes", false, []sandbox.Status{
			{Ready: true, IP: "10.0.0.10", Attempt: 1}, {Ready: true, IP: "10.0.0.11", Attempt: 0}},
			cond(v1.PodReadyToStartContainers, v1.ConditionFalse, reason, "multiple pod sandboxes are ready and need to be reconciled")},
		{"Pod sandbox status ready but network namespace mode changed", true, []sandbox.Status{
			{Ready: true, IP: "10.0.0.10", HostNetwork: false}},
			cond(v1.PodReadyToStartContainers, v1.ConditionFalse, reason, "network namespace mode changed and sandbox needs to be recreated")},
		{"Pod sandbox status ready but no IP configured", false, []sandbox.Status{{Ready: true, IP: ""}},
			cond(v1.PodReadyToStartContainers, v1.ConditionFalse, reason, "pod sandbox has no IP address")},
		{"Pod sandbox status ready and IP configured", false, []sandbox.Status{{Ready: true, IP: "10.0.0.10"}},
			cond(v1.PodReadyToStartContainers, v1.ConditionTrue, "", "")},
	}
	for _, c := range cases {
		in := readiness.Input{Pod: &v1.Pod{Spec: v1.PodSpec{HostNetwork: c.hostNetwork}}, Sandboxes: c.sandboxes, OldStatus: &v1.PodStatus{}}
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, evaluate(t, in).PodReadyToStartContainers); diff != "" {
				t.Errorf("v1.37 PodReadyToStartContainers (-want +got):\n%s", diff)
			}
			want := c.want
			want.Reason, want.Message = "", ""
			if diff := cmp.Diff(want, evaluate(t, in, features.V1_34()).PodReadyToStartContainers); diff != "" {
				t.Errorf("v1.34 PodReadyToStartContainers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQuirks pins surprising behaviours of the kubelet v1.37.0's condition generators
// (pkg/kubelet/status/generate.go) that a reimplementation could easily "fix".
func TestQuirks(t *testing.T) {
	run := func(t *testing.T, in readiness.Input) readiness.Result {
		t.Helper()
		if in.Pod == nil {
			in.Pod = &v1.Pod{}
		}
		return evaluate(t, in)
	}
	abz := v1.PodSpec{Containers: containers("b", "a", "z")}

	t.Run("nil statuses are unknown, empty ones are evaluated", func(t *testing.T) {
		got := run(t, readiness.Input{})
		if got.ContainersReady.Reason != "UnknownContainerStatuses" || got.Ready.Reason != "UnknownContainerStatuses" {
			t.Errorf("nil: %+v", got)
		}
		got = run(t, readiness.Input{InitContainerStatuses: []v1.ContainerStatus{}})
		if got.ContainersReady.Status != v1.ConditionTrue || got.Ready.Status != v1.ConditionTrue {
			t.Errorf("empty init list: %+v", got)
		}
		// The kubelet joins the lists with append(init, regular...): a nil init list and an
		// empty regular list join to nil.
		got = run(t, readiness.Input{ContainerStatuses: []v1.ContainerStatus{}})
		if got.ContainersReady.Reason != "UnknownContainerStatuses" {
			t.Errorf("nil init + empty regular: %+v", got.ContainersReady)
		}
	})
	t.Run("nil statuses without init containers are initialized", func(t *testing.T) {
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: abz}})
		if got.Initialized != cond(v1.PodInitialized, v1.ConditionTrue, "", "") {
			t.Errorf("Initialized = %+v", got.Initialized)
		}
	})
	t.Run("nil statuses in every phase", func(t *testing.T) {
		for _, p := range []v1.PodPhase{v1.PodSucceeded, v1.PodFailed, v1.PodPending, ""} {
			got := run(t, readiness.Input{Pod: &v1.Pod{Spec: abz}, Phase: p})
			if got.ContainersReady.Reason != "UnknownContainerStatuses" {
				t.Errorf("phase %q: %+v", p, got.ContainersReady)
			}
		}
	})
	t.Run("succeeded with an unknown container is not completed", func(t *testing.T) {
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: abz}, Phase: v1.PodSucceeded,
			ContainerStatuses: []v1.ContainerStatus{readyStatus("a"), notReadyStatus("b")}})
		want := cond(v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady",
			"containers with unknown status: [z], containers with unready status: [b]")
		if got.ContainersReady != want {
			t.Errorf("ContainersReady = %+v, want %+v", got.ContainersReady, want)
		}
	})
	t.Run("failed with an unknown container is failed", func(t *testing.T) {
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: abz}, Phase: v1.PodFailed,
			ContainerStatuses: []v1.ContainerStatus{readyStatus("a")}})
		if got.ContainersReady != cond(v1.ContainersReady, v1.ConditionFalse, "PodFailed", "") ||
			got.Ready != cond(v1.PodReady, v1.ConditionFalse, "PodFailed", "") {
			t.Errorf("got %+v / %+v", got.ContainersReady, got.Ready)
		}
	})
	t.Run("spec order, not sorted", func(t *testing.T) {
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: abz}, Phase: v1.PodRunning,
			ContainerStatuses: []v1.ContainerStatus{notReadyStatus("a")}})
		want := "containers with unknown status: [b z], containers with unready status: [a]"
		if got.ContainersReady.Message != want || got.Ready.Message != want {
			t.Errorf("message %q, want %q", got.ContainersReady.Message, want)
		}
	})
	t.Run("sidecars come before regular containers, other init containers are ignored", func(t *testing.T) {
		spec := v1.PodSpec{InitContainers: append(containers("i1"), sidecars("s2", "s1")...), Containers: containers("c1")}
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: spec}, InitContainerStatuses: []v1.ContainerStatus{notReadyStatus("s1")}})
		want := "containers with unknown status: [s2 c1], containers with unready status: [s1]"
		if got.ContainersReady.Message != want {
			t.Errorf("message %q, want %q", got.ContainersReady.Message, want)
		}
		want = "containers with unknown status: [i1 s2], containers with incomplete status: [s1]"
		if got.Initialized.Message != want {
			t.Errorf("Initialized message %q, want %q", got.Initialized.Message, want)
		}
	})
	t.Run("gate messages: trailing period, empty status, order, joined", func(t *testing.T) {
		spec := v1.PodSpec{ReadinessGates: gates("g1", "g2", "g3")}
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: spec}, InitContainerStatuses: []v1.ContainerStatus{},
			Conditions: []v1.PodCondition{cond("g3", "", "", ""), cond("g2", v1.ConditionUnknown, "", "")}})
		want := `corresponding condition of pod readiness gate "g1" does not exist., ` +
			`the status of pod readiness gate "g2" is not "True", but Unknown, ` +
			`the status of pod readiness gate "g3" is not "True", but `
		if got.Ready != cond(v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady", want) {
			t.Errorf("Ready = %+v\nwant message %q", got.Ready, want)
		}
		if got.ContainersReady.Status != v1.ConditionTrue {
			t.Errorf("gates changed ContainersReady: %+v", got.ContainersReady)
		}
	})
	t.Run("prefixed gate types are quoted", func(t *testing.T) {
		spec := v1.PodSpec{ReadinessGates: gates("www.example.com/feature-1", "example.com/lb")}
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: spec}, InitContainerStatuses: []v1.ContainerStatus{},
			Conditions: []v1.PodCondition{cond("www.example.com/feature-1", v1.ConditionTrue, "", ""), cond("example.com/lb", v1.ConditionFalse, "", "")}})
		want := `the status of pod readiness gate "example.com/lb" is not "True", but False`
		if got.Ready.Message != want {
			t.Errorf("message %q, want %q", got.Ready.Message, want)
		}
	})
	t.Run("the first condition of a gate's type counts", func(t *testing.T) {
		spec := v1.PodSpec{ReadinessGates: gates("g")}
		in := readiness.Input{Pod: &v1.Pod{Spec: spec}, InitContainerStatuses: []v1.ContainerStatus{},
			Conditions: []v1.PodCondition{cond("g", v1.ConditionTrue, "", ""), cond("g", v1.ConditionFalse, "", "")}}
		if got := run(t, in); got.Ready.Status != v1.ConditionTrue {
			t.Errorf("True then False: %+v", got.Ready)
		}
		in.Conditions[0].Status, in.Conditions[1].Status = v1.ConditionFalse, v1.ConditionTrue
		if got := run(t, in); got.Ready.Status != v1.ConditionFalse {
			t.Errorf("False then True: %+v", got.Ready)
		}
	})
	t.Run("ready copies containers ready and does not look at gates", func(t *testing.T) {
		spec := v1.PodSpec{Containers: containers("a"), ReadinessGates: gates("missing")}
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: spec, ObjectMeta: metav1.ObjectMeta{Generation: 4}},
			ContainerStatuses: []v1.ContainerStatus{notReadyStatus("a")}})
		want := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady",
			Message: "containers with unready status: [a]", ObservedGeneration: 4}
		if got.Ready != want {
			t.Errorf("Ready = %+v, want %+v", got.Ready, want)
		}
	})
	t.Run("the first status of a name counts, init list first", func(t *testing.T) {
		spec := v1.PodSpec{Containers: containers("a")}
		in := readiness.Input{Pod: &v1.Pod{Spec: spec},
			InitContainerStatuses: []v1.ContainerStatus{notReadyStatus("a")},
			ContainerStatuses:     []v1.ContainerStatus{readyStatus("a")}}
		if got := run(t, in); got.ContainersReady.Message != "containers with unready status: [a]" {
			t.Errorf("init list's status did not win: %+v", got.ContainersReady)
		}
		in = readiness.Input{Pod: &v1.Pod{Spec: spec}, ContainerStatuses: []v1.ContainerStatus{readyStatus("a"), notReadyStatus("a")}}
		if got := run(t, in); got.ContainersReady.Status != v1.ConditionTrue {
			t.Errorf("first status did not win: %+v", got.ContainersReady)
		}
	})
	t.Run("statuses of other containers are ignored, ephemeral containers never count", func(t *testing.T) {
		spec := v1.PodSpec{Containers: containers("a"),
			EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug"}}}}
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: spec}, ContainerStatuses: []v1.ContainerStatus{
			readyStatus("a"), notReadyStatus("ghost"), notReadyStatus("debug")}})
		if got.Ready.Status != v1.ConditionTrue || got.ContainersReady.Status != v1.ConditionTrue {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("failed pod with incomplete init is not initialized", func(t *testing.T) {
		spec := v1.PodSpec{InitContainers: containers("i"), Containers: containers("c")}
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: spec}, Phase: v1.PodFailed,
			InitContainerStatuses: []v1.ContainerStatus{notReadyStatus("i")}, OldStatus: &v1.PodStatus{}})
		if got.Initialized != cond(v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [i]") {
			t.Errorf("Initialized = %+v", got.Initialized)
		}
	})
	t.Run("succeeded with an unknown init container is not completed", func(t *testing.T) {
		spec := v1.PodSpec{InitContainers: containers("i"), Containers: containers("c")}
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: spec}, Phase: v1.PodSucceeded,
			ContainerStatuses: []v1.ContainerStatus{notReadyStatus("c")}})
		if got.Initialized != cond(v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with unknown status: [i]") {
			t.Errorf("Initialized = %+v", got.Initialized)
		}
	})
	t.Run("a started regular container in the init list still proves initialization", func(t *testing.T) {
		spec := v1.PodSpec{InitContainers: containers("i"), Containers: containers("c")}
		got := run(t, readiness.Input{Pod: &v1.Pod{Spec: spec}, InitContainerStatuses: []v1.ContainerStatus{
			notReadyStatus("i"), {Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1}}}}})
		if got.Initialized.Status != v1.ConditionTrue {
			t.Errorf("Initialized = %+v", got.Initialized)
		}
		// A later duplicate status that is running counts too (any status, not the first).
		got = run(t, readiness.Input{Pod: &v1.Pod{Spec: spec}, ContainerStatuses: []v1.ContainerStatus{
			notReadyStatus("i"), notReadyStatus("c"), {Name: "c", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}})
		if got.Initialized.Status != v1.ConditionTrue {
			t.Errorf("duplicate running status: Initialized = %+v", got.Initialized)
		}
	})
	t.Run("conditions carry no times", func(t *testing.T) {
		got := run(t, readiness.Input{Sandboxes: []sandbox.Status{{Ready: true, IP: "10.0.0.1"}}})
		for _, c := range got.Conditions() {
			if !c.LastTransitionTime.IsZero() || !c.LastProbeTime.IsZero() {
				t.Errorf("%s has times", c.Type)
			}
		}
	})
}

// TestFeatureVariants checks what each features.Set field changes.
func TestFeatureVariants(t *testing.T) {
	readyPod := func(gen int64) readiness.Input {
		return readiness.Input{
			Pod:                   &v1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Spec: v1.PodSpec{Containers: containers("c")}},
			Phase:                 v1.PodRunning,
			InitContainerStatuses: []v1.ContainerStatus{},
			ContainerStatuses:     []v1.ContainerStatus{readyStatus("c")},
		}
	}
	t.Run("V1_34 has no sandbox reason", func(t *testing.T) {
		in := readyPod(0)
		got := evaluate(t, in, features.V1_34())
		if got.PodReadyToStartContainers != cond(v1.PodReadyToStartContainers, v1.ConditionFalse, "", "") {
			t.Errorf("v1.34: %+v", got.PodReadyToStartContainers)
		}
		got = evaluate(t, in)
		if got.PodReadyToStartContainers != cond(v1.PodReadyToStartContainers, v1.ConditionFalse, "PodSandboxNotReady", "no pod sandbox exists") {
			t.Errorf("v1.37: %+v", got.PodReadyToStartContainers)
		}
		in.Sandboxes = []sandbox.Status{{Ready: true, IP: "10.0.0.1"}}
		if got := evaluate(t, in, features.V1_34()); got.PodReadyToStartContainers.Status != v1.ConditionTrue {
			t.Errorf("v1.34 with a sandbox: %+v", got.PodReadyToStartContainers)
		}
	})
	t.Run("NoReadyToStartContainers leaves the condition out", func(t *testing.T) {
		f := features.Set{NoReadyToStartContainers: true}
		got := evaluate(t, readyPod(0), f)
		if got.PodReadyToStartContainers != (v1.PodCondition{}) {
			t.Errorf("PodReadyToStartContainers = %+v, want the zero condition", got.PodReadyToStartContainers)
		}
		var types []v1.PodConditionType
		for _, c := range got.Conditions() {
			types = append(types, c.Type)
		}
		if diff := cmp.Diff([]v1.PodConditionType{v1.PodInitialized, v1.PodReady, v1.ContainersReady}, types); diff != "" {
			t.Errorf("Conditions() types (-want +got):\n%s", diff)
		}
		def := evaluate(t, readyPod(0))
		if got.Ready != def.Ready || got.Initialized != def.Initialized || got.ContainersReady != def.ContainersReady {
			t.Errorf("the other conditions changed: %+v versus %+v", got, def)
		}
		if n := len(def.Conditions()); n != 4 {
			t.Errorf("default Conditions() has %d conditions, want 4", n)
		}
	})
	t.Run("observedGeneration", func(t *testing.T) {
		off := features.Set{NoObservedGenerationTracking: true}
		in := readyPod(5)
		gens := func(r readiness.Result) [4]int64 {
			return [4]int64{r.PodReadyToStartContainers.ObservedGeneration, r.Initialized.ObservedGeneration,
				r.Ready.ObservedGeneration, r.ContainersReady.ObservedGeneration}
		}
		// Tracking on: the generation, whatever the old status (nil is an empty status).
		if g := gens(evaluate(t, in)); g != [4]int64{5, 5, 5, 5} {
			t.Errorf("tracking on, nil old status: %v", g)
		}
		in.OldStatus = &v1.PodStatus{}
		if g := gens(evaluate(t, in)); g != [4]int64{5, 5, 5, 5} {
			t.Errorf("tracking on, empty old status: %v", g)
		}
		// Tracking off: only where the old condition of that type already had one.
		if g := gens(evaluate(t, in, off)); g != [4]int64{0, 0, 0, 0} {
			t.Errorf("tracking off, empty old status: %v", g)
		}
		in.OldStatus = &v1.PodStatus{Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionTrue, ObservedGeneration: 3},
			{Type: v1.ContainersReady, Status: v1.ConditionTrue},
			{Type: v1.PodInitialized, Status: v1.ConditionTrue, ObservedGeneration: 1},
		}}
		if g := gens(evaluate(t, in, off)); g != [4]int64{0, 5, 5, 0} {
			t.Errorf("tracking off, some old generations: %v", g)
		}
		in.OldStatus = nil
		if g := gens(evaluate(t, in, off)); g != [4]int64{0, 0, 0, 0} {
			t.Errorf("tracking off, nil old status: %v", g)
		}
	})
	t.Run("NoSidecars", func(t *testing.T) {
		spec := v1.PodSpec{InitContainers: sidecars("s"), Containers: containers("c")}
		in := readiness.Input{Pod: &v1.Pod{Spec: spec},
			InitContainerStatuses: []v1.ContainerStatus{{Name: "s", Ready: true, Started: ptr(false)}},
			ContainerStatuses:     []v1.ContainerStatus{readyStatus("c")}}
		got := evaluate(t, in)
		if got.Initialized != cond(v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [s]") {
			t.Errorf("sidecars: Initialized = %+v", got.Initialized)
		}
		got = evaluate(t, in, features.Set{NoSidecars: true})
		if got.Initialized.Status != v1.ConditionTrue {
			t.Errorf("no sidecars: Initialized = %+v (s is Ready, so a plain init container is done)", got.Initialized)
		}
		in.InitContainerStatuses[0].Ready = false
		got = evaluate(t, in)
		if got.ContainersReady.Message != "containers with unready status: [s]" {
			t.Errorf("sidecars: ContainersReady = %+v", got.ContainersReady)
		}
		got = evaluate(t, in, features.Set{NoSidecars: true})
		if got.ContainersReady.Status != v1.ConditionTrue {
			t.Errorf("no sidecars: ContainersReady = %+v (plain init containers do not count)", got.ContainersReady)
		}
	})
	t.Run("sticky Initialized", func(t *testing.T) {
		spec := v1.PodSpec{InitContainers: containers("i"), Containers: containers("c")}
		in := readiness.Input{Pod: &v1.Pod{Spec: spec},
			InitContainerStatuses: []v1.ContainerStatus{{Name: "i", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}}},
			ContainerStatuses:     []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}}},
			OldStatus: &v1.PodStatus{Conditions: []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue}, {Type: v1.PodInitialized, Status: v1.ConditionTrue}}},
		}
		if got := evaluate(t, in); got.Initialized != cond(v1.PodInitialized, v1.ConditionTrue, "", "") {
			t.Errorf("on: Initialized = %+v", got.Initialized)
		}
		notInit := cond(v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [i]")
		for name, f := range map[string]features.Set{"off": {NoRestartAllContainers: true}, "v1.34": features.V1_34()} {
			if got := evaluate(t, in, f); got.Initialized != notInit {
				t.Errorf("%s: Initialized = %+v", name, got.Initialized)
			}
		}
		// It only keeps True: an old False changes nothing, and unknown statuses win.
		in.OldStatus.Conditions[1].Status = v1.ConditionFalse
		if got := evaluate(t, in); got.Initialized != notInit {
			t.Errorf("old False: Initialized = %+v", got.Initialized)
		}
		in.OldStatus.Conditions[1].Status = v1.ConditionTrue
		in.InitContainerStatuses, in.ContainerStatuses = nil, nil
		if got := evaluate(t, in); got.Initialized != cond(v1.PodInitialized, v1.ConditionFalse, "UnknownContainerStatuses", "") {
			t.Errorf("nil statuses: Initialized = %+v", got.Initialized)
		}
	})
}

// TestMalformedInput: a nil pod or duplicate container names give an error, never a
// panic and never a result.
func TestMalformedInput(t *testing.T) {
	eph := func(n string) []v1.EphemeralContainer {
		return []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: n}}}
	}
	many := func(n int, dup bool) v1.PodSpec {
		var s v1.PodSpec
		for i := 0; i < n; i++ {
			s.Containers = append(s.Containers, v1.Container{Name: fmt.Sprintf("c%d", i)})
		}
		if dup {
			s.EphemeralContainers = eph("c7")
		}
		return s
	}
	cases := []struct {
		name    string
		pod     *v1.Pod
		wantErr string
	}{
		{"nil pod", nil, "Input.Pod: Required value"},
		{"init and regular", &v1.Pod{Spec: v1.PodSpec{InitContainers: containers("a"), Containers: containers("a")}}, `"a"`},
		{"two regular", &v1.Pod{Spec: v1.PodSpec{Containers: containers("x", "b", "x")}}, `"x"`},
		{"two init", &v1.Pod{Spec: v1.PodSpec{InitContainers: sidecars("s", "s")}}, `"s"`},
		{"regular and ephemeral", &v1.Pod{Spec: v1.PodSpec{Containers: containers("a"), EphemeralContainers: eph("a")}}, `"a"`},
		{"init and ephemeral", &v1.Pod{Spec: v1.PodSpec{InitContainers: containers("i"), EphemeralContainers: eph("i")}}, `"i"`},
		{"large spec", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "big"}, Spec: many(40, true)}, `"c7"`},
		{"empty names twice", &v1.Pod{Spec: v1.PodSpec{Containers: containers("", "")}}, `""`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := readiness.Input{Pod: c.pod, InitContainerStatuses: []v1.ContainerStatus{}}
			r, err := readiness.Evaluate(in)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Evaluate error = %v, want one mentioning %s", err, c.wantErr)
			}
			if r != (readiness.Result{}) {
				t.Errorf("a result came with the error: %+v", r)
			}
			if _, err := readiness.Explain(in); err == nil {
				t.Errorf("Explain accepted it")
			}
		})
	}
	if _, err := readiness.Evaluate(readiness.Input{Pod: &v1.Pod{Spec: many(40, false)}}); err != nil {
		t.Errorf("large valid spec: %v", err)
	}
	// An empty pod is valid.
	if _, err := readiness.Evaluate(readiness.Input{Pod: &v1.Pod{}}); err != nil {
		t.Errorf("empty pod: %v", err)
	}
}

// TestEvaluateReadyDoesNotAllocate asserts the zero-allocation promise on ready pods
// (the benchmark inputs), by counting allocations rather than timing anything.
func TestEvaluateReadyDoesNotAllocate(t *testing.T) {
	for _, n := range []int{1, 3, 10} {
		for _, g := range []int{0, 2} {
			in := readinesstest.RunningPod(n, true, g)
			if r := evaluate(t, in); r.Ready.Status != v1.ConditionTrue || r.PodReadyToStartContainers.Status != v1.ConditionTrue {
				t.Fatalf("benchmark input %d/%d is not ready: %+v", n, g, r)
			}
			allocs := testing.AllocsPerRun(100, func() {
				if _, err := readiness.Evaluate(in); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%d containers, %d gates: %v allocs per Evaluate of a ready pod, want 0", n, g, allocs)
			}
			old := in
			old.Features = features.Set{NoObservedGenerationTracking: true}
			allocs = testing.AllocsPerRun(100, func() {
				if _, err := readiness.Evaluate(old); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%d containers, %d gates, with a feature set: %v allocs per Evaluate of a ready pod, want 0", n, g, allocs)
			}
		}
	}
}
