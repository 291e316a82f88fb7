package status

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// changeCounter counts OnChange and checks that the Manager's lock is not held.
type changeCounter struct {
	t    *testing.T
	m    *Manager
	mu   sync.Mutex
	refs []PodRef
}

func (c *changeCounter) observer() *Observer { return &Observer{OnChange: c.onChange} }

func (c *changeCounter) onChange(ev ChangeEvent) {
	p := ev.Pod
	if !c.m.mu.TryLock() {
		c.t.Error("OnChange called with the Manager's lock held")
	} else {
		c.m.mu.Unlock()
	}
	c.mu.Lock()
	c.refs = append(c.refs, p)
	c.mu.Unlock()
}

func (c *changeCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.refs)
}

func TestOnChangeFollowsEachNewVersionACallerMade(t *testing.T) {
	obs := &changeCounter{t: t}
	m, _ := mgrNewCache(t, Options{Observer: obs.observer()})
	obs.m = m
	pod := mgrPod()
	pod.Spec.Containers = []v1.Container{{Name: "app"}}
	running := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{
		Name: "app", ContainerID: "containerd://app", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
	}}}
	changed := running.DeepCopy()
	changed.Message = "changed"
	deleting := pod.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: mgrT0}

	for _, step := range []struct {
		name    string
		do      func() error
		changes int // OnChange calls expected from this step
		forced  int // new versions of the same status it makes (not changes)
	}{
		{"first status", func() error { return m.SetPodStatus(context.Background(), pod, running) }, 1, 0},
		{"same status again", func() error { return m.SetPodStatus(context.Background(), pod, running) }, 0, 0},
		{"a changed field", func() error { return m.SetPodStatus(context.Background(), pod, *changed) }, 1, 0},
		{"container turns ready", func() error { return m.SetContainerReadiness(context.Background(), pod.UID, "containerd://app", true) }, 1, 0},
		{"container already ready", func() error { return m.SetContainerReadiness(context.Background(), pod.UID, "containerd://app", true) }, 0, 0},
		{"unknown container", func() error {
			return m.SetContainerReadiness(context.Background(), pod.UID, "containerd://nope", false)
		}, 0, 0},
		{"container started", func() error { return m.SetContainerStartup(context.Background(), pod.UID, "containerd://app", true) }, 1, 0},
		{"container already started", func() error { return m.SetContainerStartup(context.Background(), pod.UID, "containerd://app", true) }, 0, 0},
		{"unknown pod", func() error { return m.SetContainerStartup(context.Background(), "other", "containerd://app", true) }, 0, 0},
		{"deleting: the same status is forced", func() error { return m.SetPodStatus(context.Background(), deleting, mgrStatus(t, m, pod.UID)) }, 0, 1},
		{"terminated", func() error { return m.TerminatePod(context.Background(), deleting) }, 1, 0},
		{"terminated again: forced, unchanged", func() error { return m.TerminatePod(context.Background(), deleting) }, 0, 1},
		{"a pod without a UID", func() error { return m.SetPodStatus(context.Background(), &v1.Pod{}, running) }, 0, 0},
	} {
		before, v0 := obs.count(), mgrVersion(m, pod.UID)
		_ = step.do() // errors are the point of some steps; what matters is what was reported
		got, versions := obs.count()-before, int(mgrVersion(m, pod.UID)-v0)
		if got != step.changes || versions != step.changes+step.forced {
			t.Errorf("%s: %d OnChange, %d new versions; want %d and %d", step.name, got, versions, step.changes, step.changes+step.forced)
		}
	}
	for _, r := range obs.refs {
		if r != (PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}) {
			t.Errorf("OnChange for %+v, want the pod's reference", r)
		}
	}
}

// A pod's first status is a change only if it differs from the server's copy: adopting
// a running pod after a restart (its status unchanged) is no change, and costs no PATCH.
func TestOnChangeNotForAnAdoptedPodsUnchangedStatus(t *testing.T) {
	obs := &changeCounter{t: t}
	m, _ := mgrNewCache(t, Options{Observer: obs.observer()})
	obs.m = m
	start := metav1.NewTime(mgrT0)
	running := v1.PodStatus{Phase: v1.PodRunning, StartTime: &start, ContainerStatuses: []v1.ContainerStatus{{
		Name: "app", ContainerID: "containerd://app", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
	}}}
	for _, tc := range []struct {
		name    string
		server  v1.PodStatus // the pod's status on the server when the Manager first sees it
		changes int
	}{
		{"adopted, unchanged", running, 0},
		{"adopted, changed", v1.PodStatus{Phase: v1.PodPending}, 1},
		{"new pod", v1.PodStatus{}, 1},
	} {
		pod := mgrPod()
		pod.UID = "uid-" + types.UID(strings.ReplaceAll(tc.name, " ", "-"))
		pod.Spec.Containers = []v1.Container{{Name: "app"}}
		pod.Status = tc.server
		before := obs.count()
		if err := m.SetPodStatus(t.Context(), pod, running); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := obs.count() - before; got != tc.changes {
			t.Errorf("%s: %d OnChange, want %d", tc.name, got, tc.changes)
		}
		if v := mgrVersion(m, pod.UID); v != 1 {
			t.Errorf("%s: version %d, want 1 (the status is cached either way)", tc.name, v)
		}
	}
}

// TestObserversFansOut: Observers calls every set hook in order, skips nil Observers and
// hooks, and leaves a hook nobody set nil.
func TestObserversFansOut(t *testing.T) {
	var got []string
	a := &Observer{
		OnPatch: func(ev PatchEvent) { got = append(got, "a patch "+ev.Pod.Name) },
		OnSkip:  func(ev SkipEvent) { got = append(got, "a skip "+string(ev.Reason)) },
	}
	b := &Observer{OnPatch: func(ev PatchEvent) { got = append(got, "b patch "+ev.Pod.Name) }}
	o := Observers(a, nil, b, &Observer{})
	o.OnPatch(PatchEvent{Pod: PodRef{Name: "p"}})
	o.OnSkip(SkipEvent{Reason: SkipUnchanged})
	if want := "[a patch p b patch p a skip Unchanged]"; fmt.Sprint(got) != want {
		t.Errorf("calls %v, want %s", got, want)
	}
	if o.OnChange != nil || o.OnConflict != nil || o.OnRetry != nil || o.OnSynced != nil {
		t.Error("a hook no Observer sets is not nil")
	}
	if Observers() == nil {
		t.Error("Observers() returned nil; want an Observer with no hooks")
	}
}
