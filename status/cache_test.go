package status

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
)

// The tests in this file are the status-cache cases of the kubelet's
// pkg/kubelet/status/status_manager_test.go; "update count" is the version difference.

func TestNewStatus(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod := mgrPod()
	mgrSet(t, m, pod, mgrRandomStatus())
	if v := mgrVersion(m, pod.UID); v != 1 {
		t.Fatalf("updates = %d, want 1", v)
	}
	if s := mgrStatus(t, m, pod.UID); s.StartTime.IsZero() {
		t.Error("StartTime not set")
	}
}

func TestNewStatusPreservesPodStartTime(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod := mgrPod()
	start := metav1.NewTime(mgrT0.Add(-time.Minute + 123*time.Millisecond))
	pod.Status.StartTime = &start
	mgrSet(t, m, pod, mgrRandomStatus())
	got := mgrStatus(t, m, pod.UID).StartTime
	want := start.Rfc3339Copy()
	if !got.Equal(&want) {
		t.Fatalf("StartTime = %v, want %v", got, want)
	}
	if pod.Status.StartTime.Nanosecond() == 0 {
		t.Error("the caller's pod was modified (v1.34 aliasing quirk)")
	}
}

func TestNewStatusSetsReadyTransitionTime(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod := mgrPod()
	mgrSet(t, m, pod, v1.PodStatus{Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)}})
	if c := mgrGetCond(mgrStatus(t, m, pod.UID), v1.PodReady); c == nil || c.LastTransitionTime.IsZero() {
		t.Fatalf("Ready lastTransitionTime not set: %+v", c)
	}
}

func TestChangedStatus(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod := mgrPod()
	mgrSet(t, m, pod, mgrRandomStatus())
	mgrSet(t, m, pod, mgrRandomStatus())
	if v := mgrVersion(m, pod.UID); v != 2 {
		t.Fatalf("updates = %d, want 2", v)
	}
}

func TestChangedStatusKeepsStartTime(t *testing.T) {
	m, fc := mgrNewCache(t, Options{})
	pod := mgrPod()
	now := metav1.NewTime(mgrT0.Add(250 * time.Millisecond))
	first := mgrRandomStatus()
	first.StartTime = &now
	mgrSet(t, m, pod, first)
	fc.Step(time.Minute)
	mgrSet(t, m, pod, mgrRandomStatus())
	got := mgrStatus(t, m, pod.UID).StartTime
	want := now.Rfc3339Copy()
	if !got.Equal(&want) {
		t.Fatalf("StartTime = %v, want %v", got, want)
	}
}

func TestChangedStatusUpdatesLastTransitionTime(t *testing.T) {
	m, fc := mgrNewCache(t, Options{})
	pod := mgrPod()
	mgrSet(t, m, pod, v1.PodStatus{Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)}})
	old := mgrGetCond(mgrStatus(t, m, pod.UID), v1.PodReady).LastTransitionTime
	fc.Step(2 * time.Second)
	mgrSet(t, m, pod, v1.PodStatus{Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionFalse)}})
	got := mgrGetCond(mgrStatus(t, m, pod.UID), v1.PodReady).LastTransitionTime
	if got.IsZero() || !old.Before(&got) {
		t.Fatalf("lastTransitionTime %v, want after %v", got, old)
	}
}

func TestUnchangedStatus(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod := mgrPod()
	s := mgrRandomStatus()
	mgrSet(t, m, pod, s)
	mgrSet(t, m, pod, s)
	if v := mgrVersion(m, pod.UID); v != 1 {
		t.Fatalf("updates = %d, want 1", v)
	}
}

func TestUnchangedStatusPreservesLastTransitionTime(t *testing.T) {
	m, fc := mgrNewCache(t, Options{})
	pod := mgrPod()
	s := v1.PodStatus{Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)}}
	mgrSet(t, m, pod, s)
	old := mgrGetCond(mgrStatus(t, m, pod.UID), v1.PodReady).LastTransitionTime
	fc.Step(5 * time.Second)
	s.Conditions[0].LastTransitionTime = metav1.NewTime(mgrT0.Add(time.Hour)) // always overwritten
	mgrSet(t, m, pod, s)
	if v := mgrVersion(m, pod.UID); v != 1 {
		t.Fatalf("updates = %d, want 1", v)
	}
	if got := mgrGetCond(mgrStatus(t, m, pod.UID), v1.PodReady).LastTransitionTime; !got.Equal(&old) {
		t.Fatalf("lastTransitionTime %v, want %v", got, old)
	}
}

func TestDeletionTimestampForcesUpdate(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod := mgrPod()
	now := metav1.NewTime(mgrT0)
	pod.DeletionTimestamp = &now
	s := mgrRandomStatus()
	mgrSet(t, m, pod, s)
	mgrSet(t, m, pod, s)
	if v := mgrVersion(m, pod.UID); v != 2 {
		t.Fatalf("updates = %d, want 2 (a deleting pod is always updated)", v)
	}
}

func TestObservedGenerationNeverGoesBack(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod := mgrPod()
	pod.Generation = 5
	mgrSet(t, m, pod, mgrRandomStatus())
	older := mgrPod()
	older.Generation = 3
	mgrSet(t, m, older, mgrRandomStatus())
	if g := mgrStatus(t, m, pod.UID).ObservedGeneration; g != 5 {
		t.Fatalf("observedGeneration = %d, want 5", g)
	}
}

func TestIllegalContainerTransitionRejected(t *testing.T) {
	for _, tc := range []struct {
		policy v1.RestartPolicy
		exit   int32
		init   bool
		reject bool
	}{
		{v1.RestartPolicyNever, 0, false, true},
		{v1.RestartPolicyOnFailure, 0, false, true},
		{v1.RestartPolicyOnFailure, 1, false, false},
		{v1.RestartPolicyAlways, 0, false, false},
		{v1.RestartPolicyNever, 0, true, true},
		{v1.RestartPolicyOnFailure, 3, true, false},
	} {
		m, _ := mgrNewCache(t, Options{})
		pod := mgrPod()
		pod.Spec.RestartPolicy = tc.policy
		pod.Spec.Containers = []v1.Container{{Name: "c"}}
		pod.Spec.InitContainers = []v1.Container{{Name: "i"}}
		term := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: tc.exit}}
		run := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
		s := v1.PodStatus{
			InitContainerStatuses: []v1.ContainerStatus{{Name: "i", State: term}},
			ContainerStatuses:     []v1.ContainerStatus{{Name: "c", State: run}},
		}
		if !tc.init {
			s.ContainerStatuses[0].State = term
		}
		mgrSet(t, m, pod, s)
		next := *s.DeepCopy()
		if tc.init {
			next.InitContainerStatuses[0].State = run
		} else {
			next.ContainerStatuses[0].State = run
		}
		next.Message = "changed"
		err := m.SetPodStatus(context.Background(), pod, next)
		if (err != nil) != tc.reject {
			t.Errorf("%+v: err = %v, want rejection %v", tc, err, tc.reject)
		}
		if tc.reject {
			if !strings.Contains(err.Error(), "attempted illegal transition to non-terminated state") {
				t.Errorf("error %q does not say what happened", err)
			}
			var te *TransitionError
			want := TransitionError{Pod: PodRef{Namespace: "new", Name: "foo", UID: "12345678"}, Container: "c", Init: tc.init}
			if tc.init {
				want.Container = "i"
			}
			if !errors.As(err, &te) || *te != want {
				t.Errorf("%+v: error %v is not the *TransitionError %+v", tc, err, want)
			}
			if !strings.HasPrefix(err.Error(), "status: SetPodStatus: pod new/foo (uid 12345678): terminated ") {
				t.Errorf("error %q is not wrapped as status: SetPodStatus: ...", err)
			}
			if v := mgrVersion(m, pod.UID); v != 1 {
				t.Errorf("%+v: a rejected update changed the version to %d", tc, v)
			}
		}
	}
}

// shuffled returns n container statuses in random order.
func mgrShuffled(r *rand.Rand, prefix string, n int) []v1.ContainerStatus {
	out := make([]v1.ContainerStatus, n)
	for i := range out {
		out[i] = v1.ContainerStatus{Name: prefix + string(rune('a'+i))}
	}
	r.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func TestStatusEquality(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	own := conditions.Ownership{Features: Options{}.Features}
	pod := mgrPod()
	for i := 0; i < 5; i++ {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: "init" + string(rune('a'+i))})
	}
	for i := 0; i < 10; i++ {
		a := v1.PodStatus{
			ContainerStatuses: mgrShuffled(r, "c", 5), InitContainerStatuses: mgrShuffled(r, "init", 5),
			EphemeralContainerStatuses: mgrShuffled(r, "e", 5),
		}
		b := *a.DeepCopy()
		r.Shuffle(5, func(i, j int) {
			b.ContainerStatuses[i], b.ContainerStatuses[j] = b.ContainerStatuses[j], b.ContainerStatuses[i]
		})
		r.Shuffle(5, func(i, j int) {
			b.InitContainerStatuses[i], b.InitContainerStatuses[j] = b.InitContainerStatuses[j], b.InitContainerStatuses[i]
		})
		r.Shuffle(5, func(i, j int) {
			b.EphemeralContainerStatuses[i], b.EphemeralContainerStatuses[j] = b.EphemeralContainerStatuses[j], b.EphemeralContainerStatuses[i]
		})
		normalize(pod, &a)
		normalize(pod, &b)
		if !equalByKubelet(&a, &b, own) {
			t.Fatalf("shuffled statuses differ after normalisation:\n%v", cmp.Diff(a, b))
		}
	}
	gate := v1.PodConditionType("www.example.com/feature")
	a := v1.PodStatus{Conditions: []v1.PodCondition{mgrCond(gate, v1.ConditionTrue)}}
	b := v1.PodStatus{Conditions: []v1.PodCondition{mgrCond(gate, v1.ConditionFalse)}}
	if !equalByKubelet(&a, &b, own) {
		t.Error("a foreign condition counted as a kubelet change")
	}
	b = *a.DeepCopy()
	b.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "x"}}
	b.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{ResourceClaimName: "y"}
	b.NodeAllocatableResourceClaimStatuses = []v1.NodeAllocatableResourceClaimStatus{{ResourceClaimName: "z"}}
	if !equalByKubelet(&a, &b, own) {
		t.Error("resource-claim statuses counted as a kubelet change")
	}
}

// TestIsPodStatusByKubeletEqualFutureProof: each kubelet-owned field is a difference.
func TestIsPodStatusByKubeletEqualFutureProof(t *testing.T) {
	own := conditions.Ownership{Features: Options{}.Features}
	now := metav1.NewTime(mgrT0)
	muts := map[string]func(*v1.PodStatus){
		"Phase":             func(s *v1.PodStatus) { s.Phase = v1.PodSucceeded },
		"Conditions":        func(s *v1.PodStatus) { s.Conditions = []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)} },
		"Message":           func(s *v1.PodStatus) { s.Message = "m" },
		"Reason":            func(s *v1.PodStatus) { s.Reason = "r" },
		"NominatedNodeName": func(s *v1.PodStatus) { s.NominatedNodeName = "n" },
		"HostIP":            func(s *v1.PodStatus) { s.HostIP = "1.1.1.1" },
		"HostIPs":           func(s *v1.PodStatus) { s.HostIPs = []v1.HostIP{{IP: "1.1.1.1"}} },
		"PodIP":             func(s *v1.PodStatus) { s.PodIP = "1.1.1.1" },
		"PodIPs":            func(s *v1.PodStatus) { s.PodIPs = []v1.PodIP{{IP: "1.1.1.1"}} },
		"StartTime":         func(s *v1.PodStatus) { s.StartTime = &now },
		"Init":              func(s *v1.PodStatus) { s.InitContainerStatuses = []v1.ContainerStatus{{Name: "i"}} },
		"Containers":        func(s *v1.PodStatus) { s.ContainerStatuses = []v1.ContainerStatus{{Name: "c"}} },
		"Ephemeral":         func(s *v1.PodStatus) { s.EphemeralContainerStatuses = []v1.ContainerStatus{{Name: "e"}} },
		"QOSClass":          func(s *v1.PodStatus) { s.QOSClass = v1.PodQOSGuaranteed },
		"Resize":            func(s *v1.PodStatus) { s.Resize = "InProgress" },
		"AllocatedResources": func(s *v1.PodStatus) {
			s.AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}
		},
		"ObservedGeneration": func(s *v1.PodStatus) { s.ObservedGeneration = 1 },
		"Resources":          func(s *v1.PodStatus) { s.Resources = &v1.ResourceRequirements{} },
		"VolumeHealth":       func(s *v1.PodStatus) { s.VolumeHealth = []v1.PodVolumeHealth{{Name: "v"}} },
	}
	for name, mut := range muts {
		var a, b v1.PodStatus
		mut(&b)
		if equalByKubelet(&a, &b, own) {
			t.Errorf("%s: change not detected", name)
		}
	}
	// Ignored: condition LTT, probe time, observedGeneration and order.
	a := v1.PodStatus{Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue), mgrCond(v1.PodScheduled, v1.ConditionTrue)}}
	b := *a.DeepCopy()
	b.Conditions[0], b.Conditions[1] = b.Conditions[1], b.Conditions[0]
	b.Conditions[0].LastTransitionTime = now
	b.Conditions[1].LastProbeTime = now
	b.Conditions[1].ObservedGeneration = 7
	if !equalByKubelet(&a, &b, own) {
		t.Error("order, times or observedGeneration counted as a change")
	}
	b.Conditions = b.Conditions[:1]
	if equalByKubelet(&a, &b, own) {
		t.Error("a dropped kubelet condition was not detected")
	}
}

func TestStatusNormalizationEnforcesMaxBytes(t *testing.T) {
	pod := mgrPod()
	var s v1.PodStatus
	for i := 0; i < 48; i++ {
		cs := v1.ContainerStatus{Name: string(rune('a'+i%26)) + string(rune('a'+i/26)), LastTerminationState: v1.ContainerState{
			Terminated: &v1.ContainerStateTerminated{Message: strings.Repeat("x", 192+i%17)},
		}}
		switch i % 3 {
		case 0:
			s.InitContainerStatuses = append(s.InitContainerStatuses, cs)
		case 1:
			s.ContainerStatuses = append(s.ContainerStatuses, cs)
		default:
			s.EphemeralContainerStatuses = append(s.EphemeralContainerStatuses, cs)
		}
	}
	normalize(pod, &s)
	total := 0
	for _, c := range s.InitContainerStatuses {
		n := len(c.LastTerminationState.Terminated.Message)
		if n < 192 || n > 256 {
			t.Errorf("message of %s is %d bytes", c.Name, n)
		}
		total += n
	}
	if total > maxTerminationMessageBytes {
		t.Errorf("init messages total %d bytes", total)
	}
	// With containers in the spec the budget is shared.
	pod.Spec.Containers = []v1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	s2 := v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "a", State: v1.ContainerState{
		Terminated: &v1.ContainerStateTerminated{Message: strings.Repeat("y", 5000)},
	}}}}
	normalize(pod, &s2)
	if n := len(s2.ContainerStatuses[0].State.Terminated.Message); n != maxTerminationMessageBytes/3 {
		t.Errorf("message cut to %d bytes, want %d", n, maxTerminationMessageBytes/3)
	}
}

func TestStatusNormalizeTimeStamp(t *testing.T) {
	now := metav1.NewTime(mgrT0.Add(123456789))
	state := func() v1.ContainerState {
		return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}
	}
	term := func() v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{StartedAt: now, FinishedAt: now}}
	}
	s := v1.PodStatus{
		StartTime:                  &now,
		Conditions:                 []v1.PodCondition{{Type: v1.PodReady, LastProbeTime: now, LastTransitionTime: now}},
		ContainerStatuses:          []v1.ContainerStatus{{Name: "c", State: state(), LastTerminationState: term()}},
		InitContainerStatuses:      []v1.ContainerStatus{{Name: "i", State: term()}},
		EphemeralContainerStatuses: []v1.ContainerStatus{{Name: "e", State: state()}},
	}
	normalize(mgrPod(), &s)
	for _, got := range []metav1.Time{
		*s.StartTime, s.Conditions[0].LastProbeTime, s.Conditions[0].LastTransitionTime,
		s.ContainerStatuses[0].State.Running.StartedAt, s.ContainerStatuses[0].LastTerminationState.Terminated.FinishedAt,
		s.InitContainerStatuses[0].State.Terminated.StartedAt, s.EphemeralContainerStatuses[0].State.Running.StartedAt,
	} {
		if got.Nanosecond() != 0 || !got.Time.Equal(mgrT0) {
			t.Errorf("time %v not truncated to %v", got, mgrT0)
		}
	}
}

func TestNormalizeSortsInitStatusesBySpec(t *testing.T) {
	pod := mgrPod()
	pod.Spec.InitContainers = []v1.Container{{Name: "b"}, {Name: "a"}, {Name: "z"}}
	s := v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{{Name: "x"}, {Name: "z"}, {Name: "a"}, {Name: "b"}}}
	normalize(pod, &s)
	var got []string
	for _, c := range s.InitContainerStatuses {
		got = append(got, c.Name)
	}
	if want := []string{"b", "a", "z", "x"}; !cmp.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestTerminalPhaseIsFinal(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	pod := mgrPod()
	mgrSet(t, m, pod, v1.PodStatus{Phase: v1.PodSucceeded})
	mgrSet(t, m, pod, v1.PodStatus{Phase: v1.PodRunning, Message: "late"})
	if s := mgrStatus(t, m, pod.UID); s.Phase != v1.PodSucceeded || s.Message != "late" {
		t.Fatalf("phase %s message %q, want Succeeded and the new message", s.Phase, s.Message)
	}
	// The API copy's terminal phase counts too.
	m2, _ := mgrNewCache(t, Options{})
	pod.Status.Phase = v1.PodFailed
	mgrSet(t, m2, pod, v1.PodStatus{Phase: v1.PodRunning})
	if s := mgrStatus(t, m2, pod.UID); s.Phase != v1.PodFailed {
		t.Fatalf("phase %s, want Failed from the API copy", s.Phase)
	}
	// And the merge keeps a terminal server phase.
	got := mustMerge(t, v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted"}, v1.PodStatus{Phase: v1.PodRunning}, MergeInput{Now: metav1.NewTime(mgrT0)})
	if got.Phase != v1.PodFailed || got.Reason != "Evicted" {
		t.Fatalf("merged phase %s reason %q", got.Phase, got.Reason)
	}
}

func TestBadPodsAreErrors(t *testing.T) {
	m, _ := mgrNewCache(t, Options{})
	for _, p := range []*v1.Pod{nil, {ObjectMeta: metav1.ObjectMeta{Name: "x"}}, {ObjectMeta: metav1.ObjectMeta{UID: "u"}}} {
		if err := m.SetPodStatus(context.Background(), p, v1.PodStatus{}); err == nil {
			t.Errorf("SetPodStatus(%v) accepted", p)
		}
		if err := m.TerminatePod(context.Background(), p); err == nil {
			t.Errorf("TerminatePod(%v) accepted", p)
		}
	}
	m.ObservePod(context.Background(), nil) // ignored, no panic
}

// TestNewerRV: resourceVersions order as apimachinery orders them, by value however
// long; anything else that differs counts as newer.
func TestNewerRV(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"10", "9", true}, {"9", "10", false}, {"7", "7", false},
		{"100000000000000000000", "99999999999999999999", true},
		{"", "5", true}, {"x", "5", true}, {"5", "5", false}, {"", "", false},
	} {
		if got := newerRV(tc.a, tc.b); got != tc.want {
			t.Errorf("newerRV(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
