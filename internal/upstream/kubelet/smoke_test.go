package kubelet_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
)

// TestSmokeGenerateContainersReadyCondition calls the upstream kubelet on a trivial pod, so
// that the kubelet packages are built (and cached) with the rest of the module.
func TestSmokeGenerateContainersReadyCondition(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1", Generation: 1},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "a"}, {Name: "b"}}},
	}
	statuses := []v1.ContainerStatus{{Name: "a", Ready: true}, {Name: "b", Ready: false}}

	got := kubeletstatus.GenerateContainersReadyCondition(pod, &v1.PodStatus{}, statuses, v1.PodRunning)
	want := v1.PodCondition{
		Type:               v1.ContainersReady,
		ObservedGeneration: 1,
		Status:             v1.ConditionFalse,
		Reason:             kubeletstatus.ContainersNotReady,
		Message:            "containers with unready status: [b]",
	}
	if got != want {
		t.Errorf("GenerateContainersReadyCondition = %+v, want %+v", got, want)
	}

	statuses[1].Ready = true
	got = kubeletstatus.GenerateContainersReadyCondition(pod, &v1.PodStatus{}, statuses, v1.PodRunning)
	if got.Status != v1.ConditionTrue || got.Reason != "" || got.Message != "" {
		t.Errorf("all ready: GenerateContainersReadyCondition = %+v, want True with no reason", got)
	}
}
