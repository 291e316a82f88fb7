package status

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetPodVolumeHealth(t *testing.T) {
	abnormal := []v1.VolumeHealthCondition{{Status: "Abnormal", Reason: "ReadOnly", Message: "remounted read-only"}}
	m, fc := mgrNewCache(t, Options{})
	pod := mgrPod()
	pod.Generation = 3
	if _, err := m.SetPodVolumeHealth(context.Background(), pod.UID, "data", abnormal); !errors.Is(err, ErrPodNotFound) {
		t.Fatalf("before any status: err = %v, want ErrPodNotFound", err)
	}
	mgrSet(t, m, pod, v1.PodStatus{Phase: v1.PodRunning})
	fc.Step(1500 * time.Millisecond)
	v := mgrVersion(m, pod.UID)

	steps := []struct {
		name        string
		volume      string
		conds       []v1.VolumeHealthCondition
		wantChanged bool
		wantEntries int
	}{
		{"new entry", "data", abnormal, true, 1},
		{"message only", "data", []v1.VolumeHealthCondition{{Status: "Abnormal", Reason: "ReadOnly", Message: "other"}}, false, 1},
		{"duplicate pair", "data", append(abnormal, abnormal...), false, 1},
		{"second volume", "logs", abnormal, true, 2},
		{"healthy again", "data", nil, true, 2},
		{"healthy, still", "data", []v1.VolumeHealthCondition{}, false, 2},
	}
	for _, s := range steps {
		got, err := m.SetPodVolumeHealth(context.Background(), pod.UID, s.volume, s.conds)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.wantChanged {
			t.Fatalf("%s: changed = %v, want %v", s.name, got, s.wantChanged)
		}
		if s.wantChanged {
			v++
		}
		if mgrVersion(m, pod.UID) != v {
			t.Fatalf("%s: version %d, want %d (a change queues, no change does not)", s.name, mgrVersion(m, pod.UID), v)
		}
		st := mgrStatus(t, m, pod.UID)
		if len(st.VolumeHealth) != s.wantEntries {
			t.Fatalf("%s: %d entries, want %d: %+v", s.name, len(st.VolumeHealth), s.wantEntries, st.VolumeHealth)
		}
		if st.ObservedGeneration != 3 {
			t.Fatalf("%s: observedGeneration %d, want 3 (kept)", s.name, st.ObservedGeneration)
		}
	}
	st := mgrStatus(t, m, pod.UID)
	want := metav1.NewTime(mgrT0.Add(time.Second)) // 1.5 s, in whole seconds
	for _, h := range st.VolumeHealth {
		if !h.LastTransitionTime.Equal(&want) {
			t.Errorf("volume %s: lastTransitionTime %v, want %v", h.Name, h.LastTransitionTime, want)
		}
	}
	if h := st.VolumeHealth[0]; h.Name != "data" || len(h.HealthConditions) != 0 {
		t.Errorf("data entry = %+v, want healthy (no conditions)", h)
	}

	// A later status without VolumeHealth keeps the entries, as in the kubelet.
	mgrSet(t, m, pod, v1.PodStatus{Phase: v1.PodRunning, Message: "later"})
	if got := mgrStatus(t, m, pod.UID).VolumeHealth; len(got) != 2 {
		t.Fatalf("after SetPodStatus without VolumeHealth: %+v, want the 2 entries kept", got)
	}
}
