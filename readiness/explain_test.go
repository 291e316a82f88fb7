package readiness_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

func TestExplain(t *testing.T) {
	spec := v1.PodSpec{
		InitContainers: append(append(containers("init-a"), sidecars("side-1", "side-2")...), containers("init-b")...),
		Containers:     containers("web", "db", "cache"),
		ReadinessGates: gates("example.com/lb", "g-false", "g-unknown", "g-empty", "g-true"),
	}
	allGates := []v1.PodCondition{
		cond("g-true", v1.ConditionTrue, "", ""), cond("g-false", v1.ConditionFalse, "", ""),
		cond("g-unknown", v1.ConditionUnknown, "", ""), cond("g-empty", "", "", ""),
	}
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	cases := []struct {
		name string
		in   readiness.Input
		want readiness.Explanation // Result and Ready are checked against Evaluate separately
		text []string              // lines String must contain
	}{
		{
			name: "everything wrong",
			in: readiness.Input{
				Pod:   &v1.Pod{Spec: spec},
				Phase: v1.PodRunning,
				InitContainerStatuses: []v1.ContainerStatus{
					{Name: "init-b", Ready: false},
					{Name: "side-2", Ready: true, Started: ptr(false), State: running},
				},
				ContainerStatuses: []v1.ContainerStatus{
					{Name: "cache", Ready: false, Started: ptr(true), State: running},
					{Name: "db", Ready: true, Started: ptr(true), State: running},
				},
				Conditions: allGates,
				Sandboxes:  []sandbox.Status{{ID: "s1", Ready: false}, {ID: "s0", Ready: true, IP: "10.0.0.1"}},
			},
			want: readiness.Explanation{
				Phase:                    v1.PodRunning,
				UnknownContainers:        []string{"web"},
				UnreadyContainers:        []string{"cache"},
				UnknownSidecars:          []string{"side-1"},
				NotStartedSidecars:       []string{"side-2"},
				UnknownInitContainers:    []string{"init-a"},
				IncompleteInitContainers: []string{"init-b"},
				MissingGates:             []v1.PodConditionType{"example.com/lb"},
				NotTrueGates: []readiness.GateResult{
					{Type: "g-false", Status: v1.ConditionFalse}, {Type: "g-unknown", Status: v1.ConditionUnknown}, {Type: "g-empty", Status: ""},
				},
				Sandbox: sandbox.MessageNotReady,
			},
			text: []string{
				"sandbox: pod sandbox is not ready",
				"init containers with unknown status: init-a",
				"init containers not completed: init-b",
				"sidecars with unknown status: side-1",
				"sidecars not started: side-2",
				"containers with unknown status: web",
				"containers not ready: cache",
				`readiness gate "example.com/lb": condition does not exist`,
				`readiness gate "g-false": condition is "False", not "True"`,
				`readiness gate "g-empty": condition is "", not "True"`,
			},
		},
		{
			name: "only gates",
			in: readiness.Input{
				Pod:               &v1.Pod{Spec: v1.PodSpec{Containers: containers("c"), ReadinessGates: gates("a", "b")}},
				ContainerStatuses: []v1.ContainerStatus{{Name: "c", Ready: true, Started: ptr(true), State: running}},
				Conditions:        []v1.PodCondition{cond("b", v1.ConditionFalse, "", "")},
				Sandboxes:         []sandbox.Status{{Ready: true, IP: "10.0.0.2"}},
			},
			want: readiness.Explanation{
				MissingGates: []v1.PodConditionType{"a"},
				NotTrueGates: []readiness.GateResult{{Type: "b", Status: v1.ConditionFalse}},
			},
			text: []string{`readiness gate "a": condition does not exist`},
		},
		{
			name: "unready sidecar and not started container",
			in: readiness.Input{
				Pod:                   &v1.Pod{Spec: v1.PodSpec{InitContainers: sidecars("s"), Containers: containers("c")}},
				InitContainerStatuses: []v1.ContainerStatus{{Name: "s", Ready: false, Started: ptr(true), State: running}},
				ContainerStatuses:     []v1.ContainerStatus{{Name: "c", Ready: false, State: running}},
				Sandboxes:             []sandbox.Status{{Ready: true, IP: "10.0.0.3"}},
			},
			want: readiness.Explanation{
				UnreadySidecars:      []string{"s"},
				UnreadyContainers:    []string{"c"},
				NotStartedContainers: []string{"c"},
			},
			text: []string{"sidecars not ready: s", "containers not started: c", "containers not ready: c"},
		},
		{
			name: "no statuses, no sandbox, failed",
			in:   readiness.Input{Pod: &v1.Pod{Spec: v1.PodSpec{Containers: containers("c")}}, Phase: v1.PodFailed},
			want: readiness.Explanation{
				Phase: v1.PodFailed, StatusesUnknown: true, UnknownContainers: []string{"c"}, Sandbox: sandbox.MessageNoSandbox,
			},
			text: []string{"pod phase is Failed", "no container statuses are known", "sandbox: no pod sandbox exists"},
		},
		{
			name: "ready",
			in: readiness.Input{
				Pod:               &v1.Pod{Spec: v1.PodSpec{Containers: containers("c"), HostNetwork: true}},
				ContainerStatuses: []v1.ContainerStatus{{Name: "c", Ready: true, Started: ptr(true), State: running}},
				Sandboxes:         []sandbox.Status{{Ready: true, HostNetwork: true, NoNetworkStatus: true}},
			},
			want: readiness.Explanation{Ready: true},
			text: []string{"ready"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readiness.Explain(c.in)
			if err != nil {
				t.Fatal(err)
			}
			r := evaluate(t, c.in)
			if got.Result != r {
				t.Errorf("Explain's Result %+v differs from Evaluate's %+v", got.Result, r)
			}
			if got.Ready != (r.Ready.Status == v1.ConditionTrue) {
				t.Errorf("Ready = %v but Ready condition is %s", got.Ready, r.Ready.Status)
			}
			c.want.Result, c.want.Ready = got.Result, got.Ready
			if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Explain (-want +got):\n%s", diff)
			}
			s := got.String()
			for _, line := range c.text {
				if !strings.Contains(s, line) {
					t.Errorf("String() lacks %q:\n%s", line, s)
				}
			}
			if got.Ready && s != "ready" {
				t.Errorf("String() of a ready pod = %q", s)
			}
		})
	}
}

// TestExplainSandboxFollowsFeatures: with PodReadyToStartContainers off the sandbox is
// only explained when sandboxes were given.
func TestExplainSandboxFollowsFeatures(t *testing.T) {
	in := readiness.Input{Pod: &v1.Pod{}, InitContainerStatuses: []v1.ContainerStatus{},
		Features: features.Set{NoReadyToStartContainers: true}}
	e, err := readiness.Explain(in)
	if err != nil {
		t.Fatal(err)
	}
	if e.Sandbox != "" || !e.Ready {
		t.Errorf("feature off, no sandboxes: %+v", e)
	}
	in.Sandboxes = []sandbox.Status{{Ready: true}}
	e, _ = readiness.Explain(in)
	if e.Sandbox != sandbox.MessageNoIP {
		t.Errorf("feature off, sandbox without IP: Sandbox = %q", e.Sandbox)
	}
	in.Sandboxes, in.Features = nil, features.Set{}
	e, _ = readiness.Explain(in)
	if e.Sandbox != sandbox.MessageNoSandbox || e.Result.PodReadyToStartContainers.Message != sandbox.MessageNoSandbox {
		t.Errorf("feature on, no sandboxes: %+v", e)
	}
}

// TestExplainTerminalString: a finished pod's explanation says so even when nothing
// else is wrong, and an explanation with nothing listed falls back to the condition.
func TestExplainTerminalString(t *testing.T) {
	in := readiness.Input{
		Pod:               &v1.Pod{Spec: v1.PodSpec{Containers: containers("c")}},
		Phase:             v1.PodSucceeded,
		ContainerStatuses: []v1.ContainerStatus{{Name: "c", Ready: true, Started: ptr(true)}},
		Sandboxes:         []sandbox.Status{{Ready: true, IP: "10.0.0.1"}},
	}
	e, err := readiness.Explain(in)
	if err != nil {
		t.Fatal(err)
	}
	if e.Ready || !strings.Contains(e.String(), "pod phase is Succeeded") {
		t.Errorf("Explain = %+v\n%s", e, e)
	}
	fallback := readiness.Explanation{Result: readiness.Result{Ready: cond(v1.PodReady, v1.ConditionFalse, "X", "why")}}
	if s := fallback.String(); s != "Ready is False: X why" {
		t.Errorf("fallback String() = %q", s)
	}
}
