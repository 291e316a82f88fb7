package podstate_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/sandbox"
)

// A node agent turns what its runtime reports into the status the kubelet would send.
func ExampleGenerate() {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: v1.PodSpec{
			Containers:     []v1.Container{{Name: "app", Image: "nginx", ReadinessProbe: &v1.Probe{}}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: "example.com/lb"}},
		},
		Status: v1.PodStatus{Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue},
			{Type: "example.com/lb", Status: v1.ConditionFalse}, // written by a load-balancer controller
		}},
	}
	status, err := podstate.Generate(podstate.Input{
		Pod: pod,
		Runtime: podstate.Runtime{
			Sandboxes: []sandbox.Status{{ID: "sb-1", Ready: true, IP: "10.1.0.5"}},
			HostIPs:   []string{"10.0.0.1"},
			Containers: []podstate.Container{{
				Name:        "app",
				ContainerID: "containerd://4f1c",
				State:       v1.ContainerState{Running: &v1.ContainerStateRunning{}},
				Readiness:   podstate.ProbeSuccess,
			}},
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(status.Phase, status.PodIP, "ready:", status.ContainerStatuses[0].Ready)
	for _, c := range status.Conditions {
		fmt.Println(strings.TrimSpace(fmt.Sprintln(c.Type, c.Status, c.Reason, c.Message)))
	}
	// Output:
	// Running 10.1.0.5 ready: true
	// example.com/lb False
	// PodReadyToStartContainers True
	// Initialized True
	// Ready False ReadinessGatesNotReady the status of pod readiness gate "example.com/lb" is not "True", but False
	// ContainersReady True
	// PodScheduled True
}

// Without a status manager, Stamp sets the transition times, the start time and the
// observed generation against the previous status.
func ExampleStamp() {
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app"}}}}
	now := metav1.NewTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	in := podstate.Input{Pod: pod, Now: now} // no sandbox yet
	first, _ := podstate.Generate(in)
	if err := podstate.Stamp(&first, in); err != nil {
		panic(err)
	}

	in.OldStatus = &first
	in.Sandboxes = []sandbox.Status{{ID: "sb-1", Ready: true, IP: "10.1.0.5"}}
	in.Now = metav1.NewTime(now.Add(3 * time.Second))
	second, _ := podstate.Generate(in)
	if err := podstate.Stamp(&second, in); err != nil {
		panic(err)
	}

	for _, c := range second.Conditions {
		fmt.Println(c.Type, c.Status, c.LastTransitionTime.UTC().Format(time.TimeOnly))
	}
	fmt.Println("started", second.StartTime.UTC().Format(time.TimeOnly))
	// Output:
	// PodReadyToStartContainers True 12:00:03
	// Initialized True 12:00:00
	// Ready False 12:00:00
	// ContainersReady False 12:00:00
	// PodScheduled True 12:00:00
	// started 12:00:00
}

// The pod-level resources: before the server shows the pod Running, the aggregate of the
// spec; once Running, what the node reads back from the pod cgroup (Input.PodCgroup),
// where it was read.
func ExampleGenerate_podLevelResources() {
	cpu, mem := resource.MustParse("250m"), resource.MustParse("64Mi")
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: cpu, v1.ResourceMemory: mem},
			Limits:   v1.ResourceList{v1.ResourceMemory: mem},
		}}}},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	show := func(in podstate.Input) {
		s, err := podstate.Generate(in)
		if err != nil {
			panic(err)
		}
		b, _ := json.Marshal(struct {
			Resources          *v1.ResourceRequirements `json:"resources"`
			AllocatedResources v1.ResourceList          `json:"allocatedResources"`
		}{s.Resources, s.AllocatedResources})
		fmt.Println(string(b))
	}
	show(podstate.Input{Pod: pod})

	pod.Status.Phase = v1.PodRunning
	limit := int64(64 << 20)
	show(podstate.Input{
		Pod: pod,
		Runtime: podstate.Runtime{
			PodCgroup: &podstate.PodCgroup{
				CPU:         &podstate.CPUCgroup{Shares: 256, Quota: -1, Period: 100000}, // 250m, no limit
				MemoryLimit: &limit,
			},
		},
	})
	// Output:
	// {"resources":{"limits":{"memory":"64Mi"},"requests":{"cpu":"250m","memory":"64Mi"}},"allocatedResources":{"cpu":"250m","memory":"64Mi"}}
	// {"resources":{"limits":{"memory":"64Mi"},"requests":{"cpu":"250m","memory":"64Mi"}},"allocatedResources":{"cpu":"250m","memory":"64Mi"}}
}
