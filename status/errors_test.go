package status

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus"
)

// TestContainerUpdateErrors: where the kubelet logs and drops a readiness or startup
// update, the Manager returns an error a caller can test for.
func TestContainerUpdateErrors(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod := mgrPod()
	pod.Spec.Containers = []v1.Container{{Name: "c"}}
	for name, set := range map[string]func() error{
		"SetContainerReadiness": func() error { return m.SetContainerReadiness(context.Background(), pod.UID, "cri://c", true) },
		"SetContainerStartup":   func() error { return m.SetContainerStartup(context.Background(), pod.UID, "cri://c", true) },
	} {
		if err := set(); !errors.Is(err, ErrPodNotFound) || !strings.HasPrefix(err.Error(), "status: "+name+": ") {
			t.Errorf("%s before any status: %v, want ErrPodNotFound wrapped as status: %s: ...", name, err, name)
		}
	}
	mgrSet(t, m, pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{
		Name: "c", ContainerID: "cri://c", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
	}}})
	if err := m.SetContainerReadiness(context.Background(), pod.UID, "cri://other", true); !errors.Is(err, ErrContainerNotFound) {
		t.Errorf("unknown container ID: %v, want ErrContainerNotFound", err)
	}
	if err := m.SetContainerStartup(context.Background(), pod.UID, "cri://other", true); !errors.Is(err, ErrContainerNotFound) {
		t.Errorf("unknown container ID: %v, want ErrContainerNotFound", err)
	}
	if err := m.SetContainerStartup(context.Background(), pod.UID, "cri://c", true); err != nil {
		t.Errorf("SetContainerStartup: %v", err)
	}
	if err := m.SetContainerReadiness(context.Background(), pod.UID, "cri://c", true); err != nil {
		t.Errorf("SetContainerReadiness: %v", err)
	}
	if s := mgrStatus(t, m, pod.UID); !s.ContainerStatuses[0].Ready || !*s.ContainerStatuses[0].Started {
		t.Errorf("updates not applied: %+v", s.ContainerStatuses[0])
	}
}

// TestPodInputErrors: a pod the Manager cannot write is a *podstatus.InputError, wrapped
// with the method's name.
func TestPodInputErrors(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	noUID := mgrPod()
	noUID.UID = ""
	for _, tc := range []struct {
		name  string
		err   error
		field string
	}{
		{"SetPodStatus", m.SetPodStatus(context.Background(), nil, v1.PodStatus{}), "pod"},
		{"SetPodStatus", m.SetPodStatus(context.Background(), noUID, v1.PodStatus{}), "pod.UID"},
		{"TerminatePod", m.TerminatePod(context.Background(), noUID), "pod.UID"},
	} {
		var ie *podstatus.InputError
		if !errors.As(tc.err, &ie) || len(ie.Errs) != 1 || ie.Errs[0].Field != tc.field || !strings.HasPrefix(tc.err.Error(), "status: "+tc.name+": ") {
			t.Errorf("%s: error %v, want a *podstatus.InputError on %s wrapped as status: %s: ...", tc.name, tc.err, tc.field, tc.name)
		}
	}
}
