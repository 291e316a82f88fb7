package status

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/internal/kubeletrules"
)

func mgrTerminated(code int32) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
}

func mgrWaiting() v1.ContainerState { return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}} }

func mgrRunning() v1.ContainerState { return v1.ContainerState{Running: &v1.ContainerStateRunning{}} }

var mgrUnknown = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
	ExitCode: 137, Reason: kubeletrules.ReasonContainerStatusUnknown, Message: kubeletrules.MessageContainerNotLocated,
}}

func TestTerminatePod(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		init3, test3         v1.ContainerState
		wantInit3, wantTest3 v1.ContainerState
	}{
		{"all terminated", mgrTerminated(3), mgrTerminated(0), mgrTerminated(3), mgrTerminated(0)},
		// TestTerminatePodWaiting: a trailing untouched init container stays waiting.
		{"waiting", mgrWaiting(), mgrWaiting(), mgrWaiting(), mgrUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := mgrNewCache(t, Options{})
			pod := mgrPod()
			pod.Spec.InitContainers = []v1.Container{{Name: "init-test-1"}, {Name: "init-test-2"}, {Name: "init-test-3"}}
			pod.Spec.Containers = []v1.Container{{Name: "test-1"}, {Name: "test-2"}, {Name: "test-3"}}
			pod.Status = v1.PodStatus{
				Phase:                 v1.PodFailed,
				InitContainerStatuses: []v1.ContainerStatus{{Name: "init-test-1"}, {Name: "init-test-2", State: mgrTerminated(0)}, {Name: "init-test-3", State: tc.init3}},
				ContainerStatuses:     []v1.ContainerStatus{{Name: "test-1"}, {Name: "test-2", State: mgrTerminated(2)}, {Name: "test-3", State: tc.test3}},
				Message:               "Message",
			}
			mgrSet(t, m, pod, pod.Status)
			apiPod := pod.DeepCopy()
			// A stale API copy whose containers run: evidence that the pod initialised.
			apiPod.Status = v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{
				{Name: "test-1", State: mgrRunning()}, {Name: "test-2", State: mgrRunning()}, {Name: "test-3", State: mgrRunning()},
			}}
			if err := m.TerminatePod(context.Background(), apiPod); err != nil {
				t.Fatal(err)
			}
			s := mgrStatus(t, m, pod.UID)
			wantInit := []v1.ContainerState{mgrUnknown, mgrTerminated(0), tc.wantInit3}
			wantCtr := []v1.ContainerState{mgrUnknown, mgrTerminated(2), tc.wantTest3}
			for i := range wantInit {
				if d := cmp.Diff(wantInit[i], s.InitContainerStatuses[i].State); d != "" {
					t.Errorf("init %d: %s", i, d)
				}
				if d := cmp.Diff(wantCtr[i], s.ContainerStatuses[i].State); d != "" {
					t.Errorf("container %d: %s", i, d)
				}
			}
			if s.Phase != v1.PodFailed || s.Message != "Message" {
				t.Errorf("phase %q message %q", s.Phase, s.Message)
			}
		})
	}
}

func TestTerminatePod_DefaultUnknownStatus(t *testing.T) {
	last := func(code int32) v1.ContainerStatus {
		return v1.ContainerStatus{State: mgrWaiting(), LastTerminationState: mgrTerminated(code)}
	}
	st := func(s v1.ContainerState) v1.ContainerStatus { return v1.ContainerStatus{State: s} }
	for _, tc := range []struct {
		name               string
		init, ctrs         []v1.ContainerStatus
		wantInit, wantCtrs []v1.ContainerState
	}{
		{"last termination state set", nil, []v1.ContainerStatus{last(2)}, nil, []v1.ContainerState{mgrUnknown}},
		{"no previous state", nil, []v1.ContainerStatus{st(mgrWaiting())}, nil, []v1.ContainerState{mgrUnknown}},
		{"uninitialized pod defaults the first init container",
			[]v1.ContainerStatus{st(mgrWaiting())}, []v1.ContainerStatus{st(mgrWaiting())},
			[]v1.ContainerState{mgrUnknown}, []v1.ContainerState{mgrWaiting()}},
		{"uninitialized pod defaults only the first init container",
			[]v1.ContainerStatus{st(mgrWaiting()), st(mgrWaiting())}, []v1.ContainerStatus{st(mgrWaiting())},
			[]v1.ContainerState{mgrUnknown, mgrWaiting()}, []v1.ContainerState{mgrWaiting()}},
		{"uninitialized pod defaults gaps",
			[]v1.ContainerStatus{st(mgrWaiting()), st(mgrWaiting()), st(mgrTerminated(1)), st(mgrWaiting())}, []v1.ContainerStatus{st(mgrWaiting())},
			[]v1.ContainerState{mgrUnknown, mgrUnknown, mgrTerminated(1), mgrWaiting()}, []v1.ContainerState{mgrWaiting()}},
		{"failed last container is uninitialized",
			[]v1.ContainerStatus{st(mgrWaiting()), st(mgrWaiting()), st(mgrTerminated(1))}, []v1.ContainerStatus{st(mgrWaiting())},
			[]v1.ContainerState{mgrUnknown, mgrUnknown, mgrTerminated(1)}, []v1.ContainerState{mgrWaiting()}},
		{"successful last container is initialized",
			[]v1.ContainerStatus{st(mgrWaiting()), st(mgrWaiting()), st(mgrTerminated(0))}, []v1.ContainerStatus{st(mgrRunning())},
			[]v1.ContainerState{mgrUnknown, mgrUnknown, mgrTerminated(0)}, []v1.ContainerState{mgrUnknown}},
		{"successful last previous container is initialized, and container state is overwritten",
			[]v1.ContainerStatus{st(mgrWaiting()), st(mgrWaiting()), last(0)}, []v1.ContainerStatus{st(mgrWaiting())},
			[]v1.ContainerState{mgrUnknown, mgrUnknown, mgrUnknown}, []v1.ContainerState{mgrUnknown}},
		{"running container proves initialization",
			[]v1.ContainerStatus{st(mgrWaiting())}, []v1.ContainerStatus{st(mgrRunning())},
			[]v1.ContainerState{mgrUnknown}, []v1.ContainerState{mgrUnknown}},
		{"evidence of terminated container proves initialization",
			[]v1.ContainerStatus{st(mgrWaiting())}, []v1.ContainerStatus{st(mgrTerminated(0))},
			[]v1.ContainerState{mgrUnknown}, []v1.ContainerState{mgrTerminated(0)}},
		{"evidence of previously terminated container proves initialization",
			[]v1.ContainerStatus{st(mgrWaiting())}, []v1.ContainerStatus{last(0)},
			[]v1.ContainerState{mgrUnknown}, []v1.ContainerState{mgrUnknown}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := mgrNewCache(t, Options{})
			pod := mgrPod()
			pod.Spec.RestartPolicy = v1.RestartPolicyNever
			for i := range tc.init {
				n := "init-" + string(rune('0'+i))
				tc.init[i].Name = n
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: n})
			}
			for i := range tc.ctrs {
				n := "ctr-" + string(rune('0'+i))
				tc.ctrs[i].Name = n
				pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: n})
			}
			phase := v1.PodRunning
			if len(tc.init) > 0 {
				phase = v1.PodPending
			}
			pod.Status = v1.PodStatus{Phase: phase, InitContainerStatuses: tc.init, ContainerStatuses: tc.ctrs}
			mgrSet(t, m, pod, pod.Status)
			if err := m.TerminatePod(context.Background(), pod.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			s := mgrStatus(t, m, pod.UID)
			for i, w := range tc.wantInit {
				if d := cmp.Diff(w, s.InitContainerStatuses[i].State); d != "" {
					t.Errorf("init %d: %s", i, d)
				}
			}
			for i, w := range tc.wantCtrs {
				if d := cmp.Diff(w, s.ContainerStatuses[i].State); d != "" {
					t.Errorf("container %d: %s", i, d)
				}
				if s.ContainerStatuses[i].LastTerminationState.Terminated == nil && tc.ctrs[i].LastTerminationState.Terminated != nil {
					t.Errorf("container %d lost its last termination state", i)
				}
			}
			if s.Phase != v1.PodFailed {
				t.Errorf("phase %q, want Failed", s.Phase)
			}
		})
	}
}

func TestTerminatePod_EnsurePodPhaseIsTerminal(t *testing.T) {
	for in, want := range map[v1.PodPhase]v1.PodPhase{
		v1.PodPending: v1.PodFailed, v1.PodRunning: v1.PodFailed, v1.PodSucceeded: v1.PodSucceeded,
		v1.PodFailed: v1.PodFailed, v1.PodUnknown: v1.PodFailed, "SomeUnknownPhase": v1.PodFailed,
	} {
		m, _ := mgrNewCache(t, Options{})
		pod := mgrPod()
		pod.Status.Phase = in
		if err := m.TerminatePod(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		if got := mgrStatus(t, m, pod.UID).Phase; got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

func TestTerminatePodIsAlwaysQueuedAndSticky(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod := mgrPod()
	pod.Status.Phase = v1.PodFailed
	mgrSet(t, m, pod, pod.Status)
	for range 2 {
		if err := m.TerminatePod(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
	if v := mgrVersion(m, pod.UID); v != 3 {
		t.Fatalf("version %d, want 3 (TerminatePod always updates)", v)
	}
	mgrSet(t, m, pod, v1.PodStatus{Phase: v1.PodFailed, Message: "later"})
	m.mu.Lock()
	finished := m.pods[pod.UID].finished
	m.mu.Unlock()
	if !finished {
		t.Fatal("podIsFinished is not sticky")
	}
}

// mgrReadinessPod is the fixture of TestSetContainerReadiness/Startup.
func mgrReadinessPod() (*v1.Pod, v1.PodStatus) {
	pod := mgrPod()
	pod.Spec.Containers = []v1.Container{{Name: "c1"}, {Name: "c2"}}
	s := v1.PodStatus{
		ContainerStatuses: []v1.ContainerStatus{
			{Name: "c1", ContainerID: "test://1"}, {Name: "c2", ContainerID: "test://2"},
		},
		Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionFalse)},
	}
	return pod, s
}

func TestSetContainerReadiness(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod, s := mgrReadinessPod()
	step := func(name string, f func(), wantUpdates uint64) {
		t.Helper()
		before := mgrVersion(m, pod.UID)
		f()
		if got := mgrVersion(m, pod.UID) - before; got != wantUpdates {
			t.Fatalf("%s: %d updates, want %d", name, got, wantUpdates)
		}
	}
	step("before status", func() { m.SetContainerReadiness(context.Background(), pod.UID, "test://1", true) }, 0)
	if _, ok := m.GetPodStatus(pod.UID); ok {
		t.Fatal("a status appeared from a readiness change")
	}
	step("initial", func() { mgrSet(t, m, pod, s) }, 1)
	step("c1 unchanged", func() { m.SetContainerReadiness(context.Background(), pod.UID, "test://1", false) }, 0)
	step("c1 ready", func() { m.SetContainerReadiness(context.Background(), pod.UID, "test://1", true) }, 1)
	st := mgrStatus(t, m, pod.UID)
	if c := mgrGetCond(st, v1.PodReady); c.Status != v1.ConditionFalse {
		t.Fatalf("Ready %v with c2 not ready", c.Status)
	}
	if c := mgrGetCond(st, v1.ContainersReady); c == nil || c.Status != v1.ConditionFalse || c.Message != "containers with unready status: [c2]" {
		t.Fatalf("ContainersReady = %+v", c)
	}
	step("c2 ready", func() { m.SetContainerReadiness(context.Background(), pod.UID, "test://2", true) }, 1)
	st = mgrStatus(t, m, pod.UID)
	if st.Conditions[0].Type != v1.PodReady || st.Conditions[0].Status != v1.ConditionTrue {
		t.Fatalf("Conditions[0] = %+v, want Ready True", st.Conditions[0])
	}
	step("unknown container", func() { m.SetContainerReadiness(context.Background(), pod.UID, "test://foo", true) }, 0)
}

func TestSetContainerStartup(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod, s := mgrReadinessPod()
	step := func(name string, f func(), wantUpdates uint64) {
		t.Helper()
		before := mgrVersion(m, pod.UID)
		f()
		if got := mgrVersion(m, pod.UID) - before; got != wantUpdates {
			t.Fatalf("%s: %d updates, want %d", name, got, wantUpdates)
		}
	}
	step("before status", func() { m.SetContainerStartup(context.Background(), pod.UID, "test://1", true) }, 0)
	step("initial", func() { mgrSet(t, m, pod, s) }, 1)
	step("c1 nil→false is a change", func() { m.SetContainerStartup(context.Background(), pod.UID, "test://1", false) }, 1)
	step("c1 false again", func() { m.SetContainerStartup(context.Background(), pod.UID, "test://1", false) }, 0)
	step("c1 started", func() { m.SetContainerStartup(context.Background(), pod.UID, "test://1", true) }, 1)
	step("c2 started", func() { m.SetContainerStartup(context.Background(), pod.UID, "test://2", true) }, 1)
	step("unknown container", func() { m.SetContainerStartup(context.Background(), pod.UID, "test://foo", true) }, 0)
	st := mgrStatus(t, m, pod.UID)
	for _, c := range st.ContainerStatuses {
		if c.Started == nil || !*c.Started {
			t.Errorf("%s not started", c.Name)
		}
	}
}
