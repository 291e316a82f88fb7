package readinesstest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// RunningPod returns a fixed, typical input for benchmarks and examples: a running pod
// (generation 2) with containers containers — the first of them a sidecar when there is
// more than one — all running, started and ready, gates readiness gates
// (example.com/gate-0, …) whose conditions are True, and a ready sandbox with an IP listed
// before an older dead one. When ready is false the last regular container is not ready.
// The package's own benchmarks and the side-by-side benchmarks against the kubelet use it,
// so their figures are for the same inputs.
func RunningPod(containers int, ready bool, gates int) readiness.Input {
	always := v1.ContainerRestartPolicyAlways
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "pod", UID: "uid-bench", Generation: 2}}
	in := readiness.Input{Pod: pod, Phase: v1.PodRunning, OldStatus: &v1.PodStatus{}, InitContainerStatuses: []v1.ContainerStatus{}}
	for i := 0; i < containers; i++ {
		name := fmt.Sprintf("container-%d", i)
		started := true
		s := v1.ContainerStatus{Name: name, Ready: true, Started: &started, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
		if i == 0 && containers > 1 {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: name, RestartPolicy: &always})
			in.InitContainerStatuses = append(in.InitContainerStatuses, s)
			continue
		}
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: name})
		in.ContainerStatuses = append(in.ContainerStatuses, s)
	}
	if !ready && len(in.ContainerStatuses) > 0 {
		in.ContainerStatuses[len(in.ContainerStatuses)-1].Ready = false
	}
	for i := 0; i < gates; i++ {
		t := v1.PodConditionType(fmt.Sprintf("example.com/gate-%d", i))
		pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, v1.PodReadinessGate{ConditionType: t})
		in.Conditions = append(in.Conditions, v1.PodCondition{Type: t, Status: v1.ConditionTrue})
	}
	in.Sandboxes = []sandbox.Status{{ID: "sandbox-1", Attempt: 1, Ready: true, IP: "10.1.0.1"}, {ID: "sandbox-0"}}
	return in
}
