package simkubelet

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fresh returns s in a new allocation, as a decoder would.
func fresh(s string) string { return strings.Clone(s) }

func decodedPod(name, ip string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: fresh("team-a"), Name: name},
		Spec: v1.PodSpec{
			NodeName:      fresh("node-1"),
			RestartPolicy: v1.RestartPolicy(fresh("Always")),
			Containers:    []v1.Container{{Name: fresh("app"), Image: fresh("registry.k8s.io/pause:3.10"), TerminationMessagePath: fresh("/dev/termination-log")}},
			Tolerations:   []v1.Toleration{{Key: fresh("node.kubernetes.io/not-ready"), Operator: v1.TolerationOperator(fresh("Exists")), Effect: v1.TaintEffect(fresh("NoExecute"))}},
		},
		Status: v1.PodStatus{
			Phase:      v1.PodPhase(fresh("Running")),
			HostIP:     fresh("10.0.0.1"),
			HostIPs:    []v1.HostIP{{IP: fresh("10.0.0.1")}},
			PodIP:      ip,
			Conditions: []v1.PodCondition{{Type: v1.PodConditionType(fresh("Ready")), Status: v1.ConditionStatus(fresh("True"))}},
			ContainerStatuses: []v1.ContainerStatus{{
				Name: fresh("app"), Image: fresh("registry.k8s.io/pause:3.10"), ContainerID: "containerd://" + name,
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: fresh("Completed")}},
			}},
		},
	}
}

func sameData[S ~string](a, b S) bool {
	return unsafe.StringData(string(a)) == unsafe.StringData(string(b))
}

func TestInternPodSharesRepeatedStringsAndChangesNoValue(t *testing.T) {
	a, b := decodedPod("a", "10.1.0.1"), decodedPod("b", "10.1.0.2")
	wantA, wantB := a.DeepCopy(), b.DeepCopy()
	internPod(a)
	internPod(b)
	if diff := cmp.Diff(wantA, a); diff != "" {
		t.Fatalf("internPod changed a value (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantB, b); diff != "" {
		t.Fatalf("internPod changed a value (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		field string
		same  bool
	}{
		{"namespace", sameData(a.Namespace, b.Namespace)},
		{"node", sameData(a.Spec.NodeName, b.Spec.NodeName)},
		{"restartPolicy", sameData(a.Spec.RestartPolicy, b.Spec.RestartPolicy)},
		{"image", sameData(a.Spec.Containers[0].Image, b.Spec.Containers[0].Image)},
		{"image in status and spec", sameData(a.Spec.Containers[0].Image, b.Status.ContainerStatuses[0].Image)},
		{"toleration key", sameData(a.Spec.Tolerations[0].Key, b.Spec.Tolerations[0].Key)},
		{"phase", sameData(a.Status.Phase, b.Status.Phase)},
		{"hostIPs", sameData(a.Status.HostIPs[0].IP, b.Status.HostIPs[0].IP)},
		{"condition type", sameData(a.Status.Conditions[0].Type, b.Status.Conditions[0].Type)},
		{"terminated reason", sameData(a.Status.ContainerStatuses[0].State.Terminated.Reason, b.Status.ContainerStatuses[0].State.Terminated.Reason)},
	} {
		if !c.same {
			t.Errorf("%s: equal strings of two pods were not made one", c.field)
		}
	}
}

func TestInternPodEmptyPod(t *testing.T) {
	p := &v1.Pod{}
	internPod(p) // no panic on nil nested states and empty lists
	if diff := cmp.Diff(&v1.Pod{}, p); diff != "" {
		t.Fatalf("internPod changed an empty pod:\n%s", diff)
	}
}
