package podstate_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/kubeletrules"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

var t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

func boolp(b bool) *bool { return &b }

func sidecarPolicy() *v1.ContainerRestartPolicy {
	p := v1.ContainerRestartPolicyAlways
	return &p
}

// cond is a condition written compactly: type, status, reason, message.
func cond(t v1.PodConditionType, s v1.ConditionStatus, reasonMsg ...string) v1.PodCondition {
	c := v1.PodCondition{Type: t, Status: s}
	if len(reasonMsg) > 0 {
		c.Reason = reasonMsg[0]
	}
	if len(reasonMsg) > 1 {
		c.Message = reasonMsg[1]
	}
	return c
}

const (
	T = v1.ConditionTrue
	F = v1.ConditionFalse
)

func running() v1.ContainerState {
	return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t0}}
}

func exited(code int32, reason string) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: t0, FinishedAt: t0}}
}

func readySandbox(ip string) []sandbox.Status {
	return []sandbox.Status{{ID: "sb1", Attempt: 0, Ready: true, IP: ip}}
}

func webPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{
				Name: "app", Image: "nginx",
				ReadinessProbe: &v1.Probe{},
			}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: "example.com/lb"}},
			RestartPolicy:  v1.RestartPolicyAlways,
		},
		Status: v1.PodStatus{
			Phase: v1.PodPending,
			Conditions: []v1.PodCondition{
				cond(v1.PodScheduled, T),
				cond("example.com/lb", T),
			},
			QOSClass: v1.PodQOSBestEffort,
		},
	}
}

func generate(t *testing.T, in podstate.Input, fs ...features.Set) v1.PodStatus {
	t.Helper()
	for _, f := range fs {
		in.Features = f
	}
	s, err := podstate.Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// conds drops the fields the tables do not pin (lastTransitionTime, observedGeneration).
func conds(s v1.PodStatus) []v1.PodCondition {
	out := make([]v1.PodCondition, len(s.Conditions))
	for i, c := range s.Conditions {
		out[i] = v1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
	}
	return out
}

func TestGenerateHealthyStart(t *testing.T) {
	in := podstate.Input{
		Pod: webPod(),
		Runtime: podstate.Runtime{
			Sandboxes: readySandbox("10.1.0.5"),
			HostIPs:   []string{"10.0.0.1"},
			Containers: []podstate.Container{{
				Name: "app", ContainerID: "containerd://abc", ImageID: "sha256:1", RestartCount: 0,
				State: running(), Readiness: podstate.ProbeSuccess,
			}},
		},
	}
	s := generate(t, in)
	if s.Phase != v1.PodRunning {
		t.Errorf("phase %s, want Running", s.Phase)
	}
	want := []v1.PodCondition{
		cond("example.com/lb", T),
		cond(v1.PodReadyToStartContainers, T),
		cond(v1.PodInitialized, T),
		cond(v1.PodReady, T),
		cond(v1.ContainersReady, T),
		cond(v1.PodScheduled, T),
	}
	if d := cmp.Diff(want, conds(s)); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if s.PodIP != "10.1.0.5" || len(s.PodIPs) != 1 || s.HostIP != "10.0.0.1" || len(s.HostIPs) != 1 {
		t.Errorf("IPs: podIP %q podIPs %v hostIP %q hostIPs %v", s.PodIP, s.PodIPs, s.HostIP, s.HostIPs)
	}
	wantCS := v1.ContainerStatus{
		Name: "app", Image: "nginx", ImageID: "sha256:1", ContainerID: "containerd://abc",
		State: running(), Ready: true, Started: boolp(true), Resources: &v1.ResourceRequirements{},
	}
	if d := cmp.Diff([]v1.ContainerStatus{wantCS}, s.ContainerStatuses); d != "" {
		t.Errorf("container statuses (-want +got):\n%s", d)
	}
	if s.QOSClass != v1.PodQOSBestEffort {
		t.Errorf("qosClass %q", s.QOSClass)
	}
	for _, c := range s.Conditions {
		if !c.LastTransitionTime.IsZero() {
			t.Errorf("%s has a lastTransitionTime; Generate leaves it to the status manager", c.Type)
		}
	}

	// Readiness probe not yet passed: the container is started but not ready.
	in.Containers[0].Readiness = podstate.ProbeUnknown
	s = generate(t, in)
	if s.Phase != v1.PodRunning || s.ContainerStatuses[0].Ready || !*s.ContainerStatuses[0].Started {
		t.Errorf("unprobed: phase %s ready %v started %v", s.Phase, s.ContainerStatuses[0].Ready, *s.ContainerStatuses[0].Started)
	}
	if r := conds(s)[3]; r != cond(v1.PodReady, F, readiness.ReasonContainersNotReady, "containers with unready status: [app]") {
		t.Errorf("Ready = %+v", r)
	}
}

func TestGenerateSlowSandbox(t *testing.T) {
	in := podstate.Input{Pod: webPod(), Runtime: podstate.Runtime{HostIPs: []string{"10.0.0.1"}}}
	s := generate(t, in)
	if s.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", s.Phase)
	}
	want := []v1.PodCondition{
		cond("example.com/lb", T),
		cond(v1.PodReadyToStartContainers, F, readiness.ReasonPodSandboxNotReady, sandbox.MessageNoSandbox),
		cond(v1.PodInitialized, T),
		cond(v1.PodReady, F, readiness.ReasonContainersNotReady, "containers with unready status: [app]"),
		cond(v1.ContainersReady, F, readiness.ReasonContainersNotReady, "containers with unready status: [app]"),
		cond(v1.PodScheduled, T),
	}
	if d := cmp.Diff(want, conds(s)); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	cs := s.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != podstate.ReasonContainerCreating || cs.Image != "nginx" || cs.Ready || *cs.Started {
		t.Errorf("container status %+v", cs)
	}
	if s.PodIP != "" || s.PodIPs != nil {
		t.Errorf("pod IPs without a sandbox: %q %v", s.PodIP, s.PodIPs)
	}

	// The sandbox exists but has no IP yet.
	in.Sandboxes = []sandbox.Status{{ID: "sb1", Ready: true}}
	s = generate(t, in)
	if c := conds(s)[1]; c != cond(v1.PodReadyToStartContainers, F, readiness.ReasonPodSandboxNotReady, sandbox.MessageNoIP) {
		t.Errorf("PodReadyToStartContainers = %+v", c)
	}
	// Without sandbox diagnostics (v1.34) the False condition has no reason.
	s = generate(t, in, features.V1_34())
	if c := conds(s)[1]; c != cond(v1.PodReadyToStartContainers, F) {
		t.Errorf("v1.34 PodReadyToStartContainers = %+v", c)
	}
}

func TestGenerateSandboxCrash(t *testing.T) {
	pod := webPod()
	pod.Status.Phase = v1.PodRunning
	prev := v1.PodStatus{
		Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{
			cond("example.com/lb", T), cond(v1.PodReadyToStartContainers, T), cond(v1.PodInitialized, T),
			cond(v1.PodReady, T), cond(v1.ContainersReady, T), cond(v1.PodScheduled, T),
		},
		PodIP:  "10.1.0.5",
		PodIPs: []v1.PodIP{{IP: "10.1.0.5"}},
		ContainerStatuses: []v1.ContainerStatus{{
			Name: "app", Image: "nginx", ContainerID: "containerd://abc", RestartCount: 2,
			State: running(), Ready: true, Started: boolp(true),
		}},
	}
	in := podstate.Input{
		Pod:       pod,
		OldStatus: &prev,
		Runtime: podstate.Runtime{
			Sandboxes: []sandbox.Status{{ID: "sb1", Ready: false, IP: "10.1.0.5"}},
			HostIPs:   []string{"10.0.0.1"},
			// The runtime no longer reports the container.
		},
	}
	s := generate(t, in)
	if s.Phase != v1.PodRunning {
		t.Errorf("phase %s, want Running (restartPolicy Always, the container will be restarted)", s.Phase)
	}
	want := []v1.PodCondition{
		cond("example.com/lb", T),
		cond(v1.PodReadyToStartContainers, F, readiness.ReasonPodSandboxNotReady, sandbox.MessageNotReady),
		cond(v1.PodInitialized, T),
		cond(v1.PodReady, F, readiness.ReasonContainersNotReady, "containers with unready status: [app]"),
		cond(v1.ContainersReady, F, readiness.ReasonContainersNotReady, "containers with unready status: [app]"),
		cond(v1.PodScheduled, T),
	}
	if d := cmp.Diff(want, conds(s)); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	cs := s.ContainerStatuses[0]
	lt := cs.LastTerminationState.Terminated
	if cs.State.Waiting == nil || lt == nil || lt.Reason != kubeletrules.ReasonContainerStatusUnknown || lt.ExitCode != 137 || cs.RestartCount != 3 {
		t.Errorf("vanished running container: %+v", cs)
	}
	if s.PodIP != "" {
		t.Errorf("pod IP %q from a sandbox that is not ready", s.PodIP)
	}
	// The phase is unchanged, so its reason and message are carried.
	prev.Reason, prev.Message = "R", "M"
	if s = generate(t, in); s.Reason != "R" || s.Message != "M" {
		t.Errorf("reason %q message %q not carried", s.Reason, s.Message)
	}

	// The container is reported in an unknown state instead: it terminated, as far as the
	// kubelet can tell.
	in.Containers = []podstate.Container{{Name: "app", ContainerID: "containerd://abc", RestartCount: 2}}
	s = generate(t, in)
	if term := s.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 137 || term.Reason != kubeletrules.ReasonContainerStatusUnknown {
		t.Errorf("unknown state: %+v", s.ContainerStatuses[0].State)
	}
}

func TestGenerateInitContainerFailure(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "migrate"}},
			Containers:     []v1.Container{{Name: "app"}},
			RestartPolicy:  v1.RestartPolicyNever,
		},
	}
	in := podstate.Input{
		Pod: pod,
		Runtime: podstate.Runtime{
			Sandboxes:  readySandbox("10.1.0.7"),
			Containers: []podstate.Container{{Name: "migrate", ContainerID: "containerd://m", State: exited(1, "Error")}},
		},
	}
	s := generate(t, in)
	if s.Phase != v1.PodFailed {
		t.Errorf("phase %s, want Failed", s.Phase)
	}
	want := []v1.PodCondition{
		cond(v1.PodReadyToStartContainers, T),
		cond(v1.PodInitialized, F, readiness.ReasonContainersNotInitialized, "containers with incomplete status: [migrate]"),
		cond(v1.PodReady, F, readiness.ReasonPodFailed),
		cond(v1.ContainersReady, F, readiness.ReasonPodFailed),
		cond(v1.PodScheduled, T),
	}
	if d := cmp.Diff(want, conds(s)); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if w := s.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != podstate.ReasonPodInitializing {
		t.Errorf("regular container: %+v", s.ContainerStatuses[0].State)
	}
	if term := s.InitContainerStatuses[0].State.Terminated; term == nil || term.ContainerID != "containerd://m" || s.InitContainerStatuses[0].Ready {
		t.Errorf("init container: %+v", s.InitContainerStatuses[0])
	}

	// Under restartPolicy OnFailure the init container is retried: Pending.
	pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	in.Containers[0].State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	in.Containers[0].LastTerminationState = exited(1, "Error")
	if s = generate(t, in); s.Phase != v1.PodPending {
		t.Errorf("retried init container: phase %s, want Pending", s.Phase)
	}

	// Once it exits 0 it is Ready and the pod initializes.
	in.Containers[0].State, in.Containers[0].LastTerminationState = exited(0, "Completed"), v1.ContainerState{}
	s = generate(t, in)
	if !s.InitContainerStatuses[0].Ready || conds(s)[1] != cond(v1.PodInitialized, T) {
		t.Errorf("completed init container: ready %v, Initialized %+v", s.InitContainerStatuses[0].Ready, conds(s)[1])
	}
}

func TestGenerateSidecarNotStarted(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "mesh"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "proxy", RestartPolicy: sidecarPolicy(), StartupProbe: &v1.Probe{}}},
			Containers:     []v1.Container{{Name: "app"}},
		},
	}
	in := podstate.Input{
		Pod: pod,
		Runtime: podstate.Runtime{
			Sandboxes:  readySandbox("10.1.0.8"),
			Containers: []podstate.Container{{Name: "proxy", ContainerID: "containerd://p", State: running()}},
		},
	}
	s := generate(t, in)
	if s.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", s.Phase)
	}
	want := []v1.PodCondition{
		cond(v1.PodReadyToStartContainers, T),
		cond(v1.PodInitialized, F, readiness.ReasonContainersNotInitialized, "containers with incomplete status: [proxy]"),
		cond(v1.PodReady, F, readiness.ReasonContainersNotReady, "containers with unready status: [proxy app]"),
		cond(v1.ContainersReady, F, readiness.ReasonContainersNotReady, "containers with unready status: [proxy app]"),
		cond(v1.PodScheduled, T),
	}
	if d := cmp.Diff(want, conds(s)); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if p := s.InitContainerStatuses[0]; *p.Started || p.Ready {
		t.Errorf("sidecar started %v ready %v before its startup probe passed", *p.Started, p.Ready)
	}

	// The startup probe passes: the sidecar is started and ready (no readiness probe),
	// the pod initializes and the app container can be created.
	in.Containers[0].Startup = podstate.ProbeSuccess
	s = generate(t, in)
	if p := s.InitContainerStatuses[0]; !*p.Started || !p.Ready {
		t.Errorf("sidecar started %v ready %v after its startup probe passed", *p.Started, p.Ready)
	}
	if c := conds(s)[1]; c != cond(v1.PodInitialized, T) {
		t.Errorf("Initialized = %+v", c)
	}
	if s.Phase != v1.PodPending { // app has not been created yet
		t.Errorf("phase %s, want Pending", s.Phase)
	}
	in.Containers = append(in.Containers, podstate.Container{Name: "app", ContainerID: "containerd://a", State: running()})
	if s = generate(t, in); s.Phase != v1.PodRunning || conds(s)[2] != cond(v1.PodReady, T) {
		t.Errorf("all up: phase %s, Ready %+v", s.Phase, conds(s)[2])
	}

	// The sidecar restarts after the pod initialized: the pod stays Running.
	in.Containers[0].State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	in.Containers[0].LastTerminationState = exited(1, "Error")
	if s = generate(t, in); s.Phase != v1.PodRunning {
		t.Errorf("restarting sidecar: phase %s, want Running", s.Phase)
	}

	// The sidecar runs again but its startup probe has not passed: the pod stays Running
	// while its app container is in the current sandbox, and re-initializes (Pending) when
	// the app container belongs to an older sandbox.
	in.Containers[0].State, in.Containers[0].Startup = running(), podstate.ProbeUnknown
	if s = generate(t, in); s.Phase != v1.PodRunning {
		t.Errorf("sidecar not started, pod initialized: phase %s, want Running", s.Phase)
	}
	in.Containers[1].SandboxID = "sb-old"
	if s = generate(t, in); s.Phase != v1.PodPending {
		t.Errorf("sidecar not started, new sandbox: phase %s, want Pending", s.Phase)
	}
}

func TestGenerateTerminatedPodStaysTerminal(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "done"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app"}}, RestartPolicy: v1.RestartPolicyAlways},
		Status:     v1.PodStatus{Phase: v1.PodSucceeded, Reason: "Done", Message: "all good"},
	}
	// The runtime claims the container runs again: the phase stays Succeeded.
	in := podstate.Input{
		Pod: pod,
		Runtime: podstate.Runtime{
			Sandboxes:  readySandbox("10.1.0.9"),
			Containers: []podstate.Container{{Name: "app", ContainerID: "containerd://x", State: running()}},
		},
	}
	s := generate(t, in)
	if s.Phase != v1.PodSucceeded || s.Reason != "Done" || s.Message != "all good" {
		t.Errorf("phase %s reason %q message %q, want Succeeded Done/all good", s.Phase, s.Reason, s.Message)
	}
	if c := conds(s)[2]; c != cond(v1.PodReady, F, readiness.ReasonPodCompleted) {
		t.Errorf("Ready = %+v", c)
	}

	// A cached Failed phase is kept while the server still says Running; an eviction
	// cannot turn a Succeeded pod into a Failed one.
	pod.Status = v1.PodStatus{Phase: v1.PodRunning}
	in.OldStatus = &v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted", Message: "low memory"}
	if s = generate(t, in); s.Phase != v1.PodFailed || s.Reason != "Evicted" {
		t.Errorf("cached Failed: phase %s reason %q", s.Phase, s.Reason)
	}
	pod.Status = v1.PodStatus{Phase: v1.PodSucceeded}
	in.OldStatus = nil
	in.Eviction = &podstate.Eviction{Reason: "DeadlineExceeded", Message: "too slow"}
	if s = generate(t, in); s.Phase != v1.PodSucceeded {
		t.Errorf("evicted Succeeded pod: phase %s", s.Phase)
	}
	pod.Status = v1.PodStatus{Phase: v1.PodRunning}
	if s = generate(t, in); s.Phase != v1.PodFailed || s.Reason != "DeadlineExceeded" || s.Message != "too slow" {
		t.Errorf("evicted Running pod: phase %s reason %q message %q", s.Phase, s.Reason, s.Message)
	}
}

func TestGenerateTerminalRunToCompletion(t *testing.T) {
	pod := &v1.Pod{
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}, {Name: "b"}}, RestartPolicy: v1.RestartPolicyAlways},
	}
	in := podstate.Input{
		Pod: pod,
		Runtime: podstate.Runtime{
			Sandboxes: readySandbox("10.1.0.9"),
			Containers: []podstate.Container{
				{Name: "a", State: exited(0, "Completed")},
				{Name: "b", State: exited(2, "Error")},
			},
		},
	}
	if s := generate(t, in); s.Phase != v1.PodRunning {
		t.Errorf("restartPolicy Always, not terminal: phase %s, want Running", s.Phase)
	}
	in.Terminal = true
	in.Resize = []v1.PodCondition{cond(v1.PodResizePending, T, "Deferred")}
	s := generate(t, in)
	if s.Phase != v1.PodFailed {
		t.Errorf("terminal: phase %s, want Failed", s.Phase)
	}
	for _, c := range s.Conditions {
		if c.Type == v1.PodResizePending {
			t.Error("resize condition kept on a terminal pod")
		}
	}
}

func TestGenerateConditionOrder(t *testing.T) {
	pod := webPod()
	pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, v1.PodReadinessGate{ConditionType: v1.PodInitialized})
	pod.Status.Conditions = []v1.PodCondition{
		cond("z.example.com/last", F),
		cond(v1.PodReady, T),
		cond(v1.DisruptionTarget, T, "PreemptionByScheduler"),
		cond(v1.PodScheduled, T),
		cond("example.com/lb", T),
		cond(v1.PodResizeInProgress, T), // owned: dropped, Resize replaces it
	}
	in := podstate.Input{
		Pod:       pod,
		OldStatus: &v1.PodStatus{Conditions: []v1.PodCondition{cond(v1.DisruptionTarget, T, "TerminationByKubelet", "evicted")}},
		Runtime: podstate.Runtime{
			Sandboxes: readySandbox("10.1.0.5"),
			Containers: []podstate.Container{{
				Name: "app", State: running(), Readiness: podstate.ProbeSuccess,
			}},
			Resize: []v1.PodCondition{cond(v1.PodResizeInProgress, T, "", "b"), cond(v1.PodResizePending, T, "Deferred", "a"), cond("Other", T)},
		},
	}
	s := generate(t, in)
	want := []v1.PodCondition{
		cond("z.example.com/last", F),
		cond(v1.DisruptionTarget, T, "TerminationByKubelet", "evicted"), // replaced in place
		cond("example.com/lb", T),
		cond(v1.PodResizePending, T, "Deferred", "a"),
		cond(v1.PodResizeInProgress, T, "", "b"),
		cond(v1.PodReadyToStartContainers, T),
		cond(v1.PodInitialized, T),
		cond(v1.PodReady, T), // the Initialized gate reads the Initialized just written
		cond(v1.ContainersReady, T),
		cond(v1.PodScheduled, T),
	}
	if d := cmp.Diff(want, conds(s)); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	// A gate on a condition written after Ready does not exist yet.
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: v1.ContainersReady}}
	s = generate(t, in)
	if c := conds(s)[7]; c != cond(v1.PodReady, F, readiness.ReasonReadinessGatesNotReady, `corresponding condition of pod readiness gate "ContainersReady" does not exist.`) {
		t.Errorf("Ready = %+v", c)
	}
}

func TestGenerateObservedGeneration(t *testing.T) {
	pod := webPod()
	pod.Generation = 4
	in := podstate.Input{Pod: pod, Runtime: podstate.Runtime{Sandboxes: readySandbox("10.1.0.5")}}
	s := generate(t, in)
	for _, c := range s.Conditions {
		if c.Type != "example.com/lb" && c.ObservedGeneration != 4 {
			t.Errorf("%s observedGeneration %d, want 4", c.Type, c.ObservedGeneration)
		}
	}
	s = generate(t, in, features.Set{NoObservedGenerationTracking: true})
	for _, c := range s.Conditions {
		if c.ObservedGeneration != 0 {
			t.Errorf("without tracking: %s observedGeneration %d, want 0", c.Type, c.ObservedGeneration)
		}
	}
	if s.ObservedGeneration != 0 {
		t.Errorf("pod-level observedGeneration %d set by Generate", s.ObservedGeneration)
	}
}

func TestGenerateIPs(t *testing.T) {
	pod := webPod()
	in := podstate.Input{
		Pod: pod,
		Runtime: podstate.Runtime{
			Sandboxes: readySandbox("10.1.0.5"),
			PodIPs:    []string{"fd00::5", "not-an-ip", "10.1.0.5", "10.1.0.6", "fd00::6"},
			HostIPs:   []string{"10.0.0.1", "fd00::1"},
		},
	}
	s := generate(t, in)
	if d := cmp.Diff([]v1.PodIP{{IP: "10.1.0.5"}, {IP: "fd00::5"}}, s.PodIPs); d != "" || s.PodIP != "10.1.0.5" {
		t.Errorf("IPv4 node: podIP %q, podIPs (-want +got):\n%s", s.PodIP, d)
	}
	if d := cmp.Diff([]v1.HostIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}, s.HostIPs); d != "" || s.HostIP != "10.0.0.1" {
		t.Errorf("hostIPs (-want +got):\n%s", d)
	}
	in.HostIPs = []string{"fd00::1"}
	s = generate(t, in)
	if d := cmp.Diff([]v1.PodIP{{IP: "fd00::5"}, {IP: "10.1.0.5"}}, s.PodIPs); d != "" {
		t.Errorf("IPv6 node: podIPs (-want +got):\n%s", d)
	}
	// Host network: the node's IPs, both families.
	pod.Spec.HostNetwork = true
	in.Sandboxes = []sandbox.Status{{ID: "sb", Ready: true, HostNetwork: true, NoNetworkStatus: true}}
	in.PodIPs = nil
	in.HostIPs = []string{"10.0.0.1", "fd00::1"}
	s = generate(t, in)
	if d := cmp.Diff([]v1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}, s.PodIPs); d != "" || s.PodIP != "10.0.0.1" {
		t.Errorf("host network: podIP %q podIPs (-want +got):\n%s", s.PodIP, d)
	}
}

func TestGenerateContainerDefaults(t *testing.T) {
	pod := &v1.Pod{
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "init", Image: "busybox"}},
			Containers: []v1.Container{
				{Name: "b", Image: "img-b", VolumeMounts: []v1.VolumeMount{{Name: "v", MountPath: "/v", ReadOnly: true}}},
				{Name: "a", Image: "img-a", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: *resourceQuantity("100m")}}},
			},
			EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug", Image: "dbg"}}},
		},
	}
	prev := &v1.PodStatus{
		InitContainerStatuses: []v1.ContainerStatus{{Name: "init", State: exited(0, "Completed"), Ready: true}},
	}
	in := podstate.Input{
		Pod:       pod,
		OldStatus: prev,
		Runtime: podstate.Runtime{
			Sandboxes:  readySandbox("10.1.0.5"),
			Containers: []podstate.Container{{Name: "a", State: running()}, {Name: "ghost", State: running()}},
		},
	}
	s := generate(t, in)
	if len(s.ContainerStatuses) != 2 || s.ContainerStatuses[0].Name != "a" || s.ContainerStatuses[1].Name != "b" {
		t.Fatalf("regular statuses not one per container, by name: %+v", s.ContainerStatuses)
	}
	b := s.ContainerStatuses[1]
	if b.State.Waiting == nil || b.State.Waiting.Reason != podstate.ReasonPodInitializing || b.Image != "img-b" {
		t.Errorf("b: %+v", b)
	}
	if len(b.VolumeMounts) != 1 || b.VolumeMounts[0].RecursiveReadOnly == nil || *b.VolumeMounts[0].RecursiveReadOnly != v1.RecursiveReadOnlyDisabled {
		t.Errorf("b volume mounts: %+v", b.VolumeMounts)
	}
	a := s.ContainerStatuses[0]
	if a.Image != "img-a" || a.AllocatedResources.Cpu().MilliValue() != 100 || a.Resources.Requests.Cpu().MilliValue() != 100 {
		t.Errorf("a: image %q allocated %v resources %v", a.Image, a.AllocatedResources, a.Resources)
	}
	if i := s.InitContainerStatuses[0]; i.State.Terminated == nil || !i.Ready {
		t.Errorf("init kept from the previous status: %+v", i)
	}
	if len(s.EphemeralContainerStatuses) != 1 || s.EphemeralContainerStatuses[0].Name != "debug" {
		t.Errorf("ephemeral: %+v", s.EphemeralContainerStatuses)
	}
	// The previous status is not modified.
	if prev.InitContainerStatuses[0].State.Terminated.Reason != "Completed" || len(prev.ContainerStatuses) != 0 {
		t.Error("Generate modified OldStatus")
	}

	// An init container the runtime no longer reports, while a regular container exists:
	// treated as completed.
	in.OldStatus = nil
	s = generate(t, in)
	if term := s.InitContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != "Completed" || !s.InitContainerStatuses[0].Ready {
		t.Errorf("vanished init container: %+v", s.InitContainerStatuses[0])
	}
}

func TestGenerateMalformedInput(t *testing.T) {
	if _, err := podstate.Generate(podstate.Input{}); err == nil {
		t.Error("nil pod: no error")
	}
	pod := webPod()
	_, err := podstate.Generate(podstate.Input{Pod: pod, Runtime: podstate.Runtime{Containers: []podstate.Container{{Name: "app"}, {Name: "app"}}}})
	if err == nil || !strings.Contains(err.Error(), `"app"`) {
		t.Errorf("duplicate facts: %v", err)
	}
	pod.Spec.InitContainers = []v1.Container{{Name: "app"}}
	if _, err := podstate.Generate(podstate.Input{Pod: pod}); err == nil {
		t.Error("duplicate container names: no error")
	}
}

func TestGenerateAllContainersRestarting(t *testing.T) {
	never := v1.ContainerRestartPolicyNever
	pod := &v1.Pod{Spec: v1.PodSpec{
		Containers: []v1.Container{{
			Name: "app", RestartPolicy: &never,
			RestartPolicyRules: []v1.ContainerRestartRule{{
				Action:    v1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
			}},
		}},
		RestartPolicy: v1.RestartPolicyNever,
	}}
	in := podstate.Input{
		Pod: pod,
		Runtime: podstate.Runtime{
			Sandboxes:  readySandbox("10.1.0.5"),
			Containers: []podstate.Container{{Name: "app", ContainerID: "containerd://1", State: exited(42, "Error")}},
		},
	}
	s := generate(t, in)
	last := conds(s)[len(s.Conditions)-1]
	if last != cond(v1.AllContainersRestarting, T, podstate.ReasonRestartAllContainersStarted, "container exited with restart policy rule") {
		t.Errorf("AllContainersRestarting = %+v", last)
	}
	if s.Phase != v1.PodRunning {
		t.Errorf("phase %s, want Running", s.Phase)
	}
	// Cleaned up: no container left in the runtime.
	in.OldStatus = &s
	in.Containers = nil
	s = generate(t, in)
	if last := conds(s)[len(s.Conditions)-1]; last != cond(v1.AllContainersRestarting, F) {
		t.Errorf("cleaned up: AllContainersRestarting = %+v", last)
	}
	if w := s.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != readiness.ReasonRestartingAllContainers {
		t.Errorf("removed container: %+v", s.ContainerStatuses[0].State)
	}
	// Without the feature there is no such condition.
	s = generate(t, in, features.V1_34())
	for _, c := range s.Conditions {
		if c.Type == v1.AllContainersRestarting {
			t.Error("AllContainersRestarting with the feature off")
		}
	}
}

func TestStamp(t *testing.T) {
	t1 := metav1.NewTime(t0.Add(90*time.Second + 500*time.Millisecond))
	pod := webPod()
	pod.Generation = 3
	old := &v1.PodStatus{
		Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: T, LastTransitionTime: t0},
			{Type: v1.PodReady, Status: F, LastTransitionTime: t0},
			{Type: v1.PodInitialized, Status: T}, // zero time, same status: stays zero
		},
		StartTime:          &t0,
		ObservedGeneration: 5,
	}
	s := &v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: "example.com/lb", Status: T, LastTransitionTime: t0},
		{Type: v1.PodInitialized, Status: T},
		{Type: v1.PodReady, Status: T},
		{Type: v1.ContainersReady, Status: T},
		{Type: v1.PodScheduled, Status: T, LastTransitionTime: t1},
	}}
	in := podstate.Input{Pod: pod, OldStatus: old, Now: t1}
	if err := podstate.Stamp(s, in); err != nil {
		t.Fatal(err)
	}
	sec := metav1.NewTime(t0.Add(90 * time.Second))
	want := map[v1.PodConditionType]metav1.Time{
		"example.com/lb": t0, v1.PodInitialized: {}, v1.PodReady: sec, v1.ContainersReady: sec, v1.PodScheduled: t0,
	}
	for _, c := range s.Conditions {
		if w := want[c.Type]; !c.LastTransitionTime.Equal(&w) {
			t.Errorf("%s lastTransitionTime %v, want %v", c.Type, c.LastTransitionTime, w)
		}
	}
	if !s.StartTime.Equal(&t0) || s.ObservedGeneration != 5 {
		t.Errorf("startTime %v observedGeneration %d", s.StartTime, s.ObservedGeneration)
	}
	s2 := &v1.PodStatus{}
	pod.Status = v1.PodStatus{}
	in = podstate.Input{Pod: pod, Now: t1}
	if err := podstate.Stamp(s2, in); err != nil {
		t.Fatal(err)
	}
	if !s2.StartTime.Equal(&sec) || s2.ObservedGeneration != 3 {
		t.Errorf("no old status: startTime %v observedGeneration %d", s2.StartTime, s2.ObservedGeneration)
	}
}

func resourceQuantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// TestGenerateInputErrors: malformed input is a *podstatus.InputError whose field paths
// start at Input.
func TestGenerateInputErrors(t *testing.T) {
	var ie *podstatus.InputError
	if _, err := podstate.Generate(podstate.Input{}); !errors.As(err, &ie) || ie.Errs[0].Field != "Input.Pod" {
		t.Errorf("nil pod: %v", err)
	}
	pod := webPod()
	in := podstate.Input{Pod: pod, Runtime: podstate.Runtime{Containers: []podstate.Container{{Name: "app"}, {Name: "app"}}}}
	_, err := podstate.Generate(in)
	if !errors.As(err, &ie) || ie.Errs[0].Field != "Input.Containers[1].Name" || !strings.HasPrefix(err.Error(), "podstate: Generate: pod ") {
		t.Errorf("two facts of one name: %v", err)
	}
}

// TestStampInputErrors: a nil status or pod and a zero time are input errors, and the
// status is left alone.
func TestStampInputErrors(t *testing.T) {
	s := v1.PodStatus{Phase: v1.PodRunning}
	err := podstate.Stamp(&s, podstate.Input{Pod: webPod()})
	var ie *podstatus.InputError
	if !errors.As(err, &ie) || len(ie.Errs) != 1 || ie.Errs[0].Field != "Input.Now" || !strings.HasPrefix(err.Error(), "podstate: Stamp: pod ") {
		t.Errorf("zero Now: %v", err)
	}
	if s.StartTime != nil {
		t.Errorf("status changed: %+v", s)
	}
	err = podstate.Stamp(nil, podstate.Input{})
	if !errors.As(err, &ie) || len(ie.Errs) != 3 || err.Error() != "podstate: Stamp: status: Required value; Input.Pod: Required value; Input.Now: Required value" {
		t.Errorf("nothing given: %v", err)
	}
}
