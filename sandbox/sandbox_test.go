package sandbox_test

import (
	"math"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/sandbox"
)

// TestNeedsNew covers each return of the kubelet's PodSandboxChanged
// (pkg/kubelet/kuberuntime/util/util.go, v1.37.0):
// (changed, attempt, sandboxID, reason).
func TestNeedsNew(t *testing.T) {
	podNet := &v1.Pod{}
	hostNet := &v1.Pod{Spec: v1.PodSpec{HostNetwork: true}}
	ok := func(id string, attempt uint32) sandbox.Status {
		return sandbox.Status{ID: id, Attempt: attempt, Ready: true, IP: "10.0.0.1"}
	}
	cases := []struct {
		name      string
		pod       *v1.Pod
		sandboxes []sandbox.Status
		want      sandbox.Decision
	}{
		{"no sandbox: attempt 0, no ID", podNet, nil,
			sandbox.Decision{Create: true, Attempt: 0, SandboxID: "", Message: sandbox.MessageNoSandbox}},
		{"empty list", podNet, []sandbox.Status{},
			sandbox.Decision{Create: true, Message: sandbox.MessageNoSandbox}},
		{"two ready: newest attempt + 1, newest ID", podNet, []sandbox.Status{ok("new", 4), ok("old", 3)},
			sandbox.Decision{Create: true, Attempt: 5, SandboxID: "new", Message: sandbox.MessageMultipleReady}},
		{"two ready behind a not-ready newest: counted first", podNet,
			[]sandbox.Status{{ID: "new", Attempt: 2}, ok("mid", 1), ok("old", 0)},
			sandbox.Decision{Create: true, Attempt: 3, SandboxID: "new", Message: sandbox.MessageMultipleReady}},
		{"newest not ready, an older one ready", podNet, []sandbox.Status{{ID: "new", Attempt: 1}, ok("old", 0)},
			sandbox.Decision{Create: true, Attempt: 2, SandboxID: "new", Message: sandbox.MessageNotReady}},
		{"not ready without network status", podNet, []sandbox.Status{{ID: "s", NoNetworkStatus: true}},
			sandbox.Decision{Create: true, Attempt: 1, SandboxID: "s", Message: sandbox.MessageNotReady}},
		{"host-network pod in a pod-network sandbox: no ID", hostNet, []sandbox.Status{ok("s", 7)},
			sandbox.Decision{Create: true, Attempt: 8, SandboxID: "", Message: sandbox.MessageNetworkNamespaceChanged}},
		{"pod-network pod in a host-network sandbox: no ID", podNet, []sandbox.Status{{ID: "s", Attempt: 1, Ready: true, HostNetwork: true, IP: "10.0.0.1"}},
			sandbox.Decision{Create: true, Attempt: 2, SandboxID: "", Message: sandbox.MessageNetworkNamespaceChanged}},
		{"network status without IP", podNet, []sandbox.Status{{ID: "s", Attempt: 2, Ready: true}},
			sandbox.Decision{Create: true, Attempt: 3, SandboxID: "s", Message: sandbox.MessageNoIP}},
		{"no network status at all passes", podNet, []sandbox.Status{{ID: "s", Attempt: 2, Ready: true, NoNetworkStatus: true}},
			sandbox.Decision{Attempt: 2, SandboxID: "s"}},
		{"host network needs no IP", hostNet, []sandbox.Status{{ID: "s", Attempt: 0, Ready: true, HostNetwork: true}},
			sandbox.Decision{Attempt: 0, SandboxID: "s"}},
		{"ready with IP, older not ready", podNet, []sandbox.Status{ok("new", 3), {ID: "old", Attempt: 2}},
			sandbox.Decision{Attempt: 3, SandboxID: "new"}},
		{"nil pod is a pod-network pod", nil, []sandbox.Status{{ID: "s", Ready: true, HostNetwork: true, IP: "10.0.0.1"}},
			sandbox.Decision{Create: true, Attempt: 1, Message: sandbox.MessageNetworkNamespaceChanged}},
		{"attempt wraps like uint32", podNet, []sandbox.Status{{ID: "s", Attempt: math.MaxUint32}},
			sandbox.Decision{Create: true, Attempt: 0, SandboxID: "s", Message: sandbox.MessageNotReady}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sandbox.NeedsNew(c.pod, c.sandboxes); got != c.want {
				t.Errorf("NeedsNew = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestMessagesMatchKubelet pins the messages to the constants of
// pkg/kubelet/types/constants.go (v1.37.0).
func TestMessagesMatchKubelet(t *testing.T) {
	for got, want := range map[string]string{
		sandbox.MessageNoSandbox:               "no pod sandbox exists",
		sandbox.MessageMultipleReady:           "multiple pod sandboxes are ready and need to be reconciled",
		sandbox.MessageNotReady:                "pod sandbox is not ready",
		sandbox.MessageNetworkNamespaceChanged: "network namespace mode changed and sandbox needs to be recreated",
		sandbox.MessageNoIP:                    "pod sandbox has no IP address",
	} {
		if got != want {
			t.Errorf("message %q, want %q", got, want)
		}
	}
}

func TestNeedsNewDoesNotModifyInput(t *testing.T) {
	list := []sandbox.Status{{ID: "a", Attempt: 1}, {ID: "b", Ready: true}}
	before := append([]sandbox.Status(nil), list...)
	sandbox.NeedsNew(&v1.Pod{}, list)
	for i := range list {
		if list[i] != before[i] {
			t.Errorf("sandbox %d changed: %+v", i, list[i])
		}
	}
}

// TestNeedsNewDoesNotAllocate: the readiness engine asks NeedsNew on every evaluation, and
// Evaluate of a ready pod does not allocate.
func TestNeedsNewDoesNotAllocate(t *testing.T) {
	pod := &v1.Pod{}
	list := []sandbox.Status{{ID: "b", Attempt: 1, Ready: true, IP: "10.1.0.5"}, {ID: "a"}}
	if n := testing.AllocsPerRun(100, func() { sandbox.NeedsNew(pod, list) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
