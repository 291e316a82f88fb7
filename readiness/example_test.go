package readiness_test

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// examplePod is a web pod with a sidecar and a load-balancer readiness gate.
func examplePod() *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", Generation: 2},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "proxy", RestartPolicy: &always}},
			Containers:     []v1.Container{{Name: "web"}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: "example.com/lb"}},
		},
	}
}

func ExampleEvaluate() {
	started := true
	in := readiness.Input{
		Pod:   examplePod(),
		Phase: v1.PodRunning,
		InitContainerStatuses: []v1.ContainerStatus{
			{Name: "proxy", Ready: true, Started: &started, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
		},
		ContainerStatuses: []v1.ContainerStatus{
			{Name: "web", Ready: true, Started: &started, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
		},
		// The load balancer has not yet said the pod is in rotation.
		Conditions: []v1.PodCondition{{Type: "example.com/lb", Status: v1.ConditionFalse}},
		Sandboxes:  []sandbox.Status{{ID: "sb-1", Attempt: 0, Ready: true, IP: "10.1.0.5"}},
	}
	r, err := readiness.Evaluate(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range r.Conditions() {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s=%s %s %s", c.Type, c.Status, c.Reason, c.Message)))
	}
	// Output:
	// PodReadyToStartContainers=True
	// Initialized=True
	// Ready=False ReadinessGatesNotReady the status of pod readiness gate "example.com/lb" is not "True", but False
	// ContainersReady=True
}

func ExampleExplain() {
	in := readiness.Input{
		Pod:               examplePod(),
		Phase:             v1.PodRunning,
		ContainerStatuses: []v1.ContainerStatus{{Name: "web", Ready: false}},
	}
	e, err := readiness.Explain(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.Result.Ready.Message)
	fmt.Println(e)
	// Output:
	// containers with unknown status: [proxy], containers with unready status: [web]
	// sandbox: no pod sandbox exists
	// sidecars with unknown status: proxy
	// containers not started: web
	// containers not ready: web
	// readiness gate "example.com/lb": condition does not exist
}

func ExampleApply() {
	in := readiness.Input{Pod: &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}},
		Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "c", Ready: true}},
		Features: features.Set{NoReadyToStartContainers: true}}
	r, _ := readiness.Evaluate(in)

	t1 := metav1.NewTime(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC))
	t2 := metav1.NewTime(time.Date(2026, 1, 1, 0, 2, 0, 0, time.UTC))
	var s v1.PodStatus
	changed, err := readiness.Apply(&s, readiness.ApplyInput{Result: r, Now: t1})
	fmt.Println("changed:", changed, err)
	changed, _ = readiness.Apply(&s, readiness.ApplyInput{Result: r, Now: t2}) // same statuses: times kept
	fmt.Println("changed again:", changed)

	s.Phase = v1.PodSucceeded // a finished pod is never reported ready
	changed, _ = readiness.Apply(&s, readiness.ApplyInput{Result: r, Now: t2})
	fmt.Println("changed on success:", changed)
	for _, c := range s.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason, c.LastTransitionTime.UTC().Format(time.TimeOnly))
	}
	// Output:
	// changed: true <nil>
	// changed again: false
	// changed on success: true
	// Initialized True  00:01:00
	// Ready False PodCompleted 00:02:00
	// ContainersReady False PodCompleted 00:02:00
}

// Input.Features selects the behaviour of an older kubelet; the zero value is v1.37.0.
func ExampleInput_features() {
	in := readiness.Input{Pod: &v1.Pod{}, InitContainerStatuses: []v1.ContainerStatus{}}
	for _, f := range []features.Set{features.V1_37(), features.V1_34()} {
		in.Features = f
		r, _ := readiness.Evaluate(in)
		c := r.PodReadyToStartContainers
		fmt.Printf("%s=%s reason=%q message=%q\n", c.Type, c.Status, c.Reason, c.Message)
	}
	// Output:
	// PodReadyToStartContainers=False reason="PodSandboxNotReady" message="no pod sandbox exists"
	// PodReadyToStartContainers=False reason="" message=""
}
