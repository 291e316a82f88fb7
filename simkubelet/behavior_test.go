package simkubelet

import (
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/podsim"
)

func TestBehaviorValidation(t *testing.T) {
	match := MatchName("ns", "p")
	for name, tc := range map[string]struct {
		b    Behavior
		want string
	}{
		"no match":              {Behavior{RunTime: time.Second}, "Options.Behaviors[0].Match: Required value"},
		"negative delay":        {Behavior{Match: match, StartDelay: -time.Second}, "Options.Behaviors[0].StartDelay: Invalid value: \"-1s\""},
		"delay beyond podsim's": {Behavior{Match: match, RunTime: 20000 * time.Hour}, "Options.Behaviors[0].RunTime"},
		"exit code above 255":   {Behavior{Match: match, ExitCode: 256}, "Options.Behaviors[0].ExitCode: Invalid value: 256"},
		"negative count":        {Behavior{Match: match, SandboxCreateFailures: -1}, "Options.Behaviors[0].SandboxCreateFailures"},
		"count above 1000":      {Behavior{Match: match, ReadinessProbeFailures: 1001}, "Options.Behaviors[0].ReadinessProbeFailures"},
		"unknown profile":       {Behavior{Match: match, Profile: "turbo"}, "Options.Behaviors[0].Profile: Unsupported value: \"turbo\""},
		"valid":                 {Behavior{Match: match}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(&rest.Config{Host: "x"}, Options{Nodes: 1, Behaviors: []Behavior{tc.b}})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if !errors.Is(err, podstatus.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want an input error containing %q", err, tc.want)
			}
		})
	}
	if _, err := New(&rest.Config{Host: "x"}, Options{Nodes: 1, BindSchedulerNames: []string{""}}); err == nil ||
		!strings.Contains(err.Error(), "Options.BindSchedulerNames[0]: Required value") {
		t.Errorf("an empty scheduler name: %v", err)
	}
	k, err := New(&rest.Config{Host: "x"}, Options{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.SetBehaviors([]Behavior{{Match: match}, {RunTime: -1}}); err == nil ||
		!strings.Contains(err.Error(), "Behaviors[1].Match: Required value") || !strings.Contains(err.Error(), "Behaviors[1].RunTime") {
		t.Errorf("SetBehaviors = %v, want an error naming Behaviors[1]'s two fields", err)
	}
	if got := k.behaviors.Load().list; len(got) != 0 {
		t.Errorf("a rejected SetBehaviors changed the list: %d behaviors", len(got))
	}
}

func TestMatchers(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", Labels: map[string]string{"app": "web", "tier": "fe"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-abc"}}}}
	for name, tc := range map[string]struct {
		m    func(*v1.Pod) bool
		want bool
	}{
		"labels, subset":    {MatchLabels(map[string]string{"app": "web"}), true},
		"labels, other":     {MatchLabels(map[string]string{"app": "db"}), false},
		"name":              {MatchName("ns", "web-1"), true},
		"name, other ns":    {MatchName("other", "web-1"), false},
		"owner":             {MatchOwner("ReplicaSet", "web-abc"), true},
		"owner, other kind": {MatchOwner("Job", "web-abc"), false},
	} {
		if got := tc.m(pod); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

// TestBehaviorRunsThePod: a pod a Behavior matches runs as the Behavior says (it exits
// 42 after 2 s), the same as the podsim annotations of the same names would make it,
// and the pod handed over is not modified.
func TestBehaviorRunsThePod(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "u", Annotations: map[string]string{"keep": "me"}},
		Spec: v1.PodSpec{NodeName: "n", RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "app", Image: "busybox"}}}}
	b := Behavior{Match: MatchName("ns", "job"), Profile: "fast", RunTime: 2 * time.Second, ExitCode: 42}
	simPod := b.apply(pod)
	if len(pod.Annotations) != 1 {
		t.Fatalf("apply changed the pod's annotations: %v", pod.Annotations)
	}
	if simPod.Annotations["keep"] != "me" {
		t.Errorf("apply dropped the pod's own annotations: %v", simPod.Annotations)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	ipam, err := podsim.NewIPAM("10.0.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	sim, w, err := podsim.New(simPod, ipam, podsim.Config{Clock: clk})
	if err != nil || w.Err() != nil {
		t.Fatalf("New: %v, warnings %v", err, w.Err())
	}
	clk.Step(2 * time.Second)
	f := sim.Advance()
	c := f.Containers[0]
	if c.State.Terminated == nil || c.State.Terminated.ExitCode != 42 || !f.Terminal {
		t.Errorf("after 2 s: %+v terminal %v; want exited 42 and the pod terminal", c.State, f.Terminal)
	}
}
