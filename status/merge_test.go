package status

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/accept"
)

// mgrMergeBase is the upstream tests' getPodStatus().
func mgrMergeBase() v1.PodStatus {
	return v1.PodStatus{
		Phase:      v1.PodRunning,
		Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue), mgrCond(v1.PodScheduled, v1.ConditionTrue)},
		Message:    "Message",
	}
}

type mgrC struct {
	Type   v1.PodConditionType
	Status v1.ConditionStatus
	Reason string
}

func mgrSummary(s v1.PodStatus) []mgrC {
	var out []mgrC
	for _, c := range s.Conditions {
		out = append(out, mgrC{c.Type, c.Status, c.Reason})
	}
	return out
}

// TestMergePodStatus is upstream's table (TestMergePodStatus in
// pkg/kubelet/status/status_manager_test.go), with the condition order checked exactly.
func TestMergePodStatus(t *testing.T) {
	dt := func(reason string) v1.PodCondition {
		return v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: reason}
	}
	custom := v1.PodConditionType("example.com/custom")
	const (
		T, F = v1.ConditionTrue, v1.ConditionFalse
	)
	for _, tc := range []struct {
		name            string
		old, new        func(*v1.PodStatus)
		running         bool
		phase           v1.PodPhase
		reason, message string
		want            []mgrC
	}{
		{"no change", nil, nil, false, v1.PodRunning, "", "Message",
			[]mgrC{{v1.PodReady, T, ""}, {v1.PodScheduled, T, ""}}},
		{"add DisruptionTarget condition when transitioning into failed phase", nil,
			func(s *v1.PodStatus) {
				s.Phase = v1.PodFailed
				s.Conditions = append(s.Conditions, dt("TerminationByKubelet"))
			}, false, v1.PodFailed, "", "Message",
			[]mgrC{{v1.PodReady, F, "PodFailed"}, {v1.PodScheduled, T, ""}, {v1.DisruptionTarget, T, "TerminationByKubelet"}, {v1.ContainersReady, F, "PodFailed"}}},
		{"don't add DisruptionTarget condition when transitioning into failed phase, but there might still be running containers", nil,
			func(s *v1.PodStatus) {
				s.Phase = v1.PodFailed
				s.Conditions = append(s.Conditions, dt("TerminationByKubelet"))
			}, true, v1.PodRunning, "", "Message",
			[]mgrC{{v1.PodReady, T, ""}, {v1.PodScheduled, T, ""}}},
		{"preserve DisruptionTarget condition",
			func(s *v1.PodStatus) { s.Conditions = append(s.Conditions, dt("TerminationByKubelet")) }, nil, false, v1.PodRunning, "", "Message",
			[]mgrC{{v1.DisruptionTarget, T, "TerminationByKubelet"}, {v1.PodReady, T, ""}, {v1.PodScheduled, T, ""}}},
		{"override DisruptionTarget condition",
			func(s *v1.PodStatus) { s.Conditions = append(s.Conditions, dt("EvictedByEvictionAPI")) },
			func(s *v1.PodStatus) {
				s.Phase = v1.PodFailed
				s.Conditions = append(s.Conditions, dt("TerminationByKubelet"))
			}, false, v1.PodFailed, "", "Message",
			[]mgrC{{v1.DisruptionTarget, T, "TerminationByKubelet"}, {v1.PodReady, F, "PodFailed"}, {v1.PodScheduled, T, ""}, {v1.ContainersReady, F, "PodFailed"}}},
		{"don't override DisruptionTarget condition when remaining in running phase",
			func(s *v1.PodStatus) { s.Conditions = append(s.Conditions, dt("EvictedByEvictionAPI")) },
			func(s *v1.PodStatus) { s.Conditions = append(s.Conditions, dt("TerminationByKubelet")) }, false, v1.PodRunning, "", "Message",
			[]mgrC{{v1.DisruptionTarget, T, "EvictedByEvictionAPI"}, {v1.PodReady, T, ""}, {v1.PodScheduled, T, ""}}},
		{"don't override DisruptionTarget condition when transitioning to failed phase but there might still be running containers",
			func(s *v1.PodStatus) { s.Conditions = append(s.Conditions, dt("EvictedByEvictionAPI")) },
			func(s *v1.PodStatus) {
				s.Phase = v1.PodFailed
				s.Conditions = append(s.Conditions, dt("TerminationByKubelet"))
			}, true, v1.PodRunning, "", "Message",
			[]mgrC{{v1.DisruptionTarget, T, "EvictedByEvictionAPI"}, {v1.PodReady, T, ""}, {v1.PodScheduled, T, ""}}},
		{"readiness changes", nil, func(s *v1.PodStatus) { s.Conditions[0].Status = F }, false, v1.PodRunning, "", "Message",
			[]mgrC{{v1.PodReady, F, ""}, {v1.PodScheduled, T, ""}}},
		{"additional pod condition", func(s *v1.PodStatus) { s.Conditions = append(s.Conditions, mgrCond(custom, T)) }, nil, false, v1.PodRunning, "", "Message",
			[]mgrC{{custom, T, ""}, {v1.PodReady, T, ""}, {v1.PodScheduled, T, ""}}},
		{"additional pod condition and readiness changes",
			func(s *v1.PodStatus) { s.Conditions = append(s.Conditions, mgrCond(custom, T)) },
			func(s *v1.PodStatus) { s.Conditions[0].Status = F }, false, v1.PodRunning, "", "Message",
			[]mgrC{{custom, T, ""}, {v1.PodReady, F, ""}, {v1.PodScheduled, T, ""}}},
		{"additional pod condition changes",
			func(s *v1.PodStatus) { s.Conditions = append(s.Conditions, mgrCond(custom, T)) },
			func(s *v1.PodStatus) { s.Conditions = append(s.Conditions, mgrCond(custom, F)) }, false, v1.PodRunning, "", "Message",
			[]mgrC{{custom, T, ""}, {v1.PodReady, T, ""}, {v1.PodScheduled, T, ""}}},
		{"custom condition only in new", nil,
			func(s *v1.PodStatus) { s.Conditions = append(s.Conditions, mgrCond(custom, T)) }, false, v1.PodRunning, "", "Message",
			[]mgrC{{v1.PodReady, T, ""}, {v1.PodScheduled, T, ""}}},
		{"phase is transitioning to failed and no containers running",
			func(s *v1.PodStatus) { s.Reason = "Unknown" },
			func(s *v1.PodStatus) { s.Phase, s.Reason, s.Message = v1.PodFailed, "Evicted", "Was Evicted" }, false, v1.PodFailed, "Evicted", "Was Evicted",
			[]mgrC{{v1.PodReady, F, "PodFailed"}, {v1.PodScheduled, T, ""}, {v1.ContainersReady, F, "PodFailed"}}},
		{"phase is transitioning to failed and containers running",
			func(s *v1.PodStatus) { s.Reason = "Unknown" },
			func(s *v1.PodStatus) { s.Phase, s.Reason, s.Message = v1.PodFailed, "Evicted", "Was Evicted" }, true, v1.PodRunning, "Unknown", "Message",
			[]mgrC{{v1.PodReady, T, ""}, {v1.PodScheduled, T, ""}}},
		{"Succeeded with ContainersReady True", nil,
			func(s *v1.PodStatus) {
				s.Phase = v1.PodSucceeded
				s.Conditions = append(s.Conditions, mgrCond(v1.ContainersReady, T))
			}, false, v1.PodSucceeded, "", "Message",
			[]mgrC{{v1.PodReady, F, "PodCompleted"}, {v1.PodScheduled, T, ""}, {v1.ContainersReady, F, "PodCompleted"}}},
		{"old Failed, new Running", func(s *v1.PodStatus) { s.Phase = v1.PodFailed }, nil, false, v1.PodRunning, "", "Message",
			[]mgrC{{v1.PodReady, T, ""}, {v1.PodScheduled, T, ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, nw := mgrMergeBase(), mgrMergeBase()
			if tc.old != nil {
				tc.old(&old)
			}
			if tc.new != nil {
				tc.new(&nw)
			}
			oldCopy, newCopy := *old.DeepCopy(), *nw.DeepCopy()
			// The kubelet's own table: its merge, without the Manager's two additions.
			got := mustMerge(t, old, nw, MergeInput{Now: metav1.NewTime(mgrT0), CouldHaveRunningContainers: tc.running,
				UpstreamTransitionTimes: true, UpstreamTerminalPhase: true})
			if d := cmp.Diff(tc.want, mgrSummary(got)); d != "" {
				t.Errorf("conditions (-want +got):\n%s", d)
			}
			if got.Phase != tc.phase || got.Reason != tc.reason || got.Message != tc.message {
				t.Errorf("phase/reason/message = %q/%q/%q, want %q/%q/%q", got.Phase, got.Reason, got.Message, tc.phase, tc.reason, tc.message)
			}
			if d := cmp.Diff(oldCopy, old); d != "" {
				t.Errorf("Merge modified the server status: %s", d)
			}
			if d := cmp.Diff(newCopy, nw); d != "" {
				t.Errorf("Merge modified the kubelet status: %s", d)
			}
		})
	}
}

func TestMergeKeepsServerResourceClaims(t *testing.T) {
	server := mgrMergeBase()
	server.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "server"}}
	server.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{ResourceClaimName: "server"}
	server.NodeAllocatableResourceClaimStatuses = []v1.NodeAllocatableResourceClaimStatus{{ResourceClaimName: "server"}}
	kubelet := mgrMergeBase()
	kubelet.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "kubelet"}}
	got := mustMerge(t, server, kubelet, MergeInput{Now: metav1.NewTime(mgrT0)})
	if d := cmp.Diff(server.ResourceClaimStatuses, got.ResourceClaimStatuses); d != "" {
		t.Error(d)
	}
	if got.ExtendedResourceClaimStatus.ResourceClaimName != "server" || got.NodeAllocatableResourceClaimStatuses[0].ResourceClaimName != "server" {
		t.Error("claim statuses not the server's")
	}
}

func TestMergeTerminalOverrideTimes(t *testing.T) {
	ltt := metav1.NewTime(mgrT0.Add(-time.Hour))
	server := mgrMergeBase()
	kubelet := mgrMergeBase()
	kubelet.Phase = v1.PodSucceeded
	kubelet.Conditions[0].LastTransitionTime = ltt
	now := metav1.NewTime(mgrT0)
	got, err := Merge(MergeInput{Server: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 4}, Status: server}, Status: kubelet, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	r := mgrGetCond(got, v1.PodReady)
	if !r.LastTransitionTime.Equal(&now) || r.ObservedGeneration != 4 {
		t.Errorf("forced Ready = %+v, want LTT now and observedGeneration 4", r)
	}
}

// TestUpdateLastTransitionTime is upstream's table for the cache rule.
func TestUpdateLastTransitionTime(t *testing.T) {
	old := metav1.NewTime(mgrT0.Add(-time.Second))
	now := metav1.NewTime(mgrT0)
	for _, tc := range []struct {
		name     string
		oldConds []v1.PodCondition
		status   v1.ConditionStatus
		noCond   bool
		want     metav1.Time
	}{
		{name: "no corresponding condition", noCond: true},
		{name: "no old condition", status: v1.ConditionTrue, want: now},
		{name: "condition is changed", oldConds: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: old}}, status: v1.ConditionTrue, want: now},
		{name: "condition is not changed", oldConds: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: old}}, status: v1.ConditionFalse, want: old},
		{name: "same status, zero old time stays zero", oldConds: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}, status: v1.ConditionFalse},
	} {
		s := v1.PodStatus{}
		if !tc.noCond {
			s.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: tc.status, LastTransitionTime: metav1.NewTime(mgrT0.Add(time.Hour))}}
		}
		accept.Stamp(&s, &v1.PodStatus{Conditions: tc.oldConds}, now)
		if tc.noCond {
			if len(s.Conditions) != 0 {
				t.Errorf("%s: conditions appeared", tc.name)
			}
			continue
		}
		if got := s.Conditions[0].LastTransitionTime; !got.Equal(&tc.want) {
			t.Errorf("%s: LTT %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestServerTransitionTimes pins the kubernetes#119514 rule.
func TestServerTransitionTimes(t *testing.T) {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(mgrT0.Add(d)) }
	now := at(0)
	ready := func(s v1.ConditionStatus, ltt metav1.Time) v1.PodStatus {
		return v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: s, LastTransitionTime: ltt}}}
	}
	for _, tc := range []struct {
		name            string
		server, kubelet v1.PodStatus
		upstream, fixed metav1.Time
	}{
		{"node controller flipped Ready; kubelet flips it back", ready(v1.ConditionFalse, at(-10*time.Second)), ready(v1.ConditionTrue, at(-time.Hour)), at(-time.Hour), now},
		{"kubelet's own newer transition", ready(v1.ConditionFalse, at(-time.Hour)), ready(v1.ConditionTrue, at(-10*time.Second)), at(-10 * time.Second), at(-10 * time.Second)},
		{"same status: server's time stands", ready(v1.ConditionTrue, at(-time.Hour)), ready(v1.ConditionTrue, at(-time.Minute)), at(-time.Minute), at(-time.Hour)},
		{"same status, server time unset: ours", ready(v1.ConditionTrue, metav1.Time{}), ready(v1.ConditionTrue, at(-time.Minute)), at(-time.Minute), at(-time.Minute)},
	} {
		up := mustMerge(t, tc.server, tc.kubelet, MergeInput{Now: now, UpstreamTransitionTimes: true})
		fx := mustMerge(t, tc.server, tc.kubelet, MergeInput{Now: now})
		if got := up.Conditions[0].LastTransitionTime; !got.Equal(&tc.upstream) {
			t.Errorf("%s: upstream LTT %v, want %v", tc.name, got, tc.upstream)
		}
		if got := fx.Conditions[0].LastTransitionTime; !got.Equal(&tc.fixed) {
			t.Errorf("%s: fixed LTT %v, want %v", tc.name, got, tc.fixed)
		}
	}
}

// mustMerge merges kubelet into a pod whose status is server.
func mustMerge(t *testing.T, server, kubelet v1.PodStatus, in MergeInput) v1.PodStatus {
	t.Helper()
	in.Server, in.Status = &v1.Pod{Status: server}, kubelet
	got, err := Merge(in)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	return got
}

// TestMergeInputErrors: a nil pod and a zero time are input errors, not a wall-clock
// fallback.
func TestMergeInputErrors(t *testing.T) {
	var ie *podstatus.InputError
	if _, err := Merge(MergeInput{Server: nil, Status: v1.PodStatus{}, Now: metav1.NewTime(mgrT0)}); !errors.As(err, &ie) || ie.Errs[0].Field != "MergeInput.Server" {
		t.Errorf("nil pod: %v", err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	_, err := Merge(MergeInput{Server: pod, Status: v1.PodStatus{}})
	if !errors.As(err, &ie) || ie.Errs[0].Field != "MergeInput.Now" || ie.Pod != "ns/p" {
		t.Errorf("zero Now: %v", err)
	}
	if want := "status: Merge: pod ns/p: MergeInput.Now: Required value: the time must be given"; err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestMergeDefaultsAreTheManagers: the zero MergeInput keep a terminal server phase,
// and UpstreamTerminalPhase gives the kubelet's merge.
func TestMergeDefaultsAreTheManagers(t *testing.T) {
	server := v1.PodStatus{Phase: v1.PodSucceeded, Reason: "Done"}
	kubelet := v1.PodStatus{Phase: v1.PodRunning}
	now := metav1.NewTime(mgrT0)
	if got := mustMerge(t, server, kubelet, MergeInput{Now: now}); got.Phase != v1.PodSucceeded || got.Reason != "Done" {
		t.Errorf("default: phase %s reason %q, want the server's Succeeded/Done", got.Phase, got.Reason)
	}
	if got := mustMerge(t, server, kubelet, MergeInput{Now: now, UpstreamTerminalPhase: true}); got.Phase != v1.PodRunning {
		t.Errorf("upstream: phase %s, want Running", got.Phase)
	}
}

// isTrue reports whether the first condition of type t in list is True.
func isTrue(list []v1.PodCondition, t v1.PodConditionType) bool {
	c := conditions.Get(list, t)
	return c != nil && c.Status == v1.ConditionTrue
}
