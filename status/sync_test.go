package status

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func mgrWithFake(t *testing.T, f *mgrFake, opts Options) (*Manager, *clocktesting.FakeClock) {
	t.Helper()
	fc := clocktesting.NewFakeClock(mgrT0)
	opts.Clock = fc
	return NewManager(f, opts), fc
}

func mgrSync(t *testing.T, m *Manager) {
	t.Helper()
	if err := m.Sync(context.Background()); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func mgrWant(t *testing.T, f *mgrFake, want string) {
	t.Helper()
	if got := f.counts(); got != want {
		t.Fatalf("requests %s, want %s", got, want)
	}
}

func TestSyncPod(t *testing.T) {
	f := newMgrFake(mgrPod())
	m, _ := mgrWithFake(t, f, Options{})
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m)
	mgrWant(t, f, "get=1 patch=1")
	want := mgrStatus(t, m, "12345678").Message
	if got := f.get("new", "foo").Status.Message; got != want {
		t.Fatalf("server message %q, want %q", got, want)
	}
	// A second change goes out on the PATCH response as base: no GET.
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m)
	mgrWant(t, f, "get=1 patch=2")
}

func TestSyncPodIgnoresNotFound(t *testing.T) {
	f := newMgrFake()
	m, _ := mgrWithFake(t, f, Options{})
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m)
	mgrWant(t, f, "get=1 patch=0")
	// Unlike the kubelet, which GETs the deleted pod on every batch until
	// RemoveOrphanedStatuses, the status is dropped: no more requests.
	if _, ok := m.GetPodStatus("12345678"); ok {
		t.Fatal("status of a deleted pod still cached")
	}
	mgrSync(t, m)
	mgrWant(t, f, "get=1 patch=0")
}

func TestSyncPodChecksMismatchedUID(t *testing.T) {
	first := mgrPod()
	first.UID = "first"
	f := newMgrFake(first)
	m, _ := mgrWithFake(t, f, Options{})
	second := mgrPod()
	second.UID = "second"
	mgrSet(t, m, second, mgrRandomStatus())
	mgrSync(t, m)
	mgrWant(t, f, "get=1 patch=0")
	if _, ok := m.GetPodStatus("second"); ok {
		t.Fatal("status of a recreated pod still cached")
	}
}

func TestStaleUpdates(t *testing.T) {
	f := newMgrFake(mgrPod())
	m, _ := mgrWithFake(t, f, Options{})
	pod := mgrPod()
	s := mgrRandomStatus()
	mgrSet(t, m, pod, s)
	s.Message = "second"
	mgrSet(t, m, pod, s)
	s.Message = "third"
	mgrSet(t, m, pod, s)
	if v := mgrVersion(m, pod.UID); v != 3 {
		t.Fatalf("version %d", v)
	}
	mgrSync(t, m)
	mgrWant(t, f, "get=1 patch=1")
	mgrSet(t, m, pod, s) // same status: nothing
	if v := mgrVersion(m, pod.UID); v != 3 {
		t.Fatalf("same status made version %d", v)
	}
	// Forced resync of an up-to-date pod: the patch is unchanged, so no PATCH.
	m.mu.Lock()
	e := m.pods[pod.UID]
	e.synced--
	m.markDirtyLocked(e)
	m.mu.Unlock()
	mgrSync(t, m)
	mgrWant(t, f, "get=1 patch=1")
}

func TestObservePodSeedsBase(t *testing.T) {
	f := newMgrFake()
	stored := f.put(mgrPod())
	m, _ := mgrWithFake(t, f, Options{})
	m.ObservePod(stored)
	for i := 0; i < 5; i++ {
		mgrSet(t, m, mgrPod(), mgrRandomStatus())
		mgrSync(t, m)
	}
	mgrWant(t, f, "get=0 patch=5")
}

func TestConflictRefetchesAndRetries(t *testing.T) {
	f := newMgrFake()
	m, _ := mgrWithFake(t, f, Options{})
	m.ObservePod(f.put(mgrPod()))
	conflicts := 2
	f.fail = func(verb string) error {
		if verb == "patch" && conflicts > 0 {
			conflicts--
			return apierrors.NewConflict(podsGR, "foo", errors.New("the object has been modified"))
		}
		return nil
	}
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m)
	mgrWant(t, f, "get=2 patch=3")
}

func TestRetryBackoffHonoursRetryAfter(t *testing.T) {
	f := newMgrFake()
	m, fc := mgrWithFake(t, f, Options{Retry: RetryOptions{Base: time.Second, Max: time.Minute, Jitter: -1}})
	m.ObservePod(f.put(mgrPod()))
	fails := []error{
		apierrors.NewInternalError(errors.New("boom")),
		apierrors.NewTooManyRequests("slow down", 30),
		apierrors.NewTimeoutError("timeout", 0),
	}
	f.fail = func(verb string) error {
		if verb == "patch" && len(fails) > 0 {
			err := fails[0]
			fails = fails[1:]
			return err
		}
		return nil
	}
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	var delays []time.Duration
	for i := 0; i < 3; i++ {
		err := m.Sync(context.Background())
		if err == nil {
			t.Fatalf("attempt %d: no error", i)
		}
		m.mu.Lock()
		e := m.pods["12345678"]
		delays = append(delays, e.notBefore.Sub(fc.Now()))
		m.mu.Unlock()
	}
	// 1s, then max(2s, Retry-After 30s), then 4s.
	want := []time.Duration{time.Second, 30 * time.Second, 4 * time.Second}
	for i := range want {
		if delays[i] != want[i] {
			t.Errorf("delay %d = %v, want %v", i, delays[i], want[i])
		}
	}
	mgrSync(t, m)
	if got := f.get("new", "foo").Status.Message; got != mgrStatus(t, m, "12345678").Message {
		t.Fatalf("server message %q after recovery", got)
	}
}

func TestSyncErrorNamesPod(t *testing.T) {
	f := newMgrFake(mgrPod())
	m, _ := mgrWithFake(t, f, Options{})
	f.fail = func(string) error { return apierrors.NewServiceUnavailable("down") }
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	err := m.Sync(context.Background())
	if err == nil || !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("err = %v, want a wrapped 503", err)
	}
	for _, s := range []string{"new/foo", "12345678", "get pod"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

// TestInFlightChangeIsSentAfterwards: a status set while a PATCH is in flight is sent
// afterwards, and the older in-flight result does not mark it synced.
func TestInFlightChangeIsSentAfterwards(t *testing.T) {
	f := newMgrFake()
	m, _ := mgrWithFake(t, f, Options{})
	m.ObservePod(f.put(mgrPod()))
	mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "first"})
	once := true
	f.fail = func(verb string) error {
		if verb == "patch" && once {
			once = false
			// Runs inside the PATCH, with the fake's lock held: the Manager's lock is not.
			if err := m.SetPodStatus(mgrPod(), v1.PodStatus{Message: "second"}); err != nil {
				t.Error(err)
			}
		}
		return nil
	}
	mgrSync(t, m)
	if got := f.get("new", "foo").Status.Message; got != "first" {
		t.Fatalf("server %q after the first sync", got)
	}
	m.mu.Lock()
	pending := m.pods["12345678"].pending()
	m.mu.Unlock()
	if !pending {
		t.Fatal("the change made during the PATCH was marked synced")
	}
	mgrSync(t, m)
	if got := f.get("new", "foo").Status.Message; got != "second" {
		t.Fatalf("server %q, want second", got)
	}
}

func TestRecreatedPodDetectedOnPatch(t *testing.T) {
	f := newMgrFake()
	m, _ := mgrWithFake(t, f, Options{})
	m.ObservePod(f.put(mgrPod()))
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m)
	again := mgrPod()
	again.UID = "new-uid"
	f.put(again)
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m) // PATCH → 422 (uid precondition), GET → other UID → dropped
	mgrWant(t, f, "get=1 patch=2")
	if _, ok := m.GetPodStatus("12345678"); ok {
		t.Fatal("status of the old pod still cached")
	}
	if f.get("new", "foo").Status.Message != "" {
		t.Fatal("the recreated pod was written")
	}
}

func TestLastTransitionTimeAfterNodeControllerFlip(t *testing.T) {
	for _, upstream := range []bool{false, true} {
		f := newMgrFake()
		m, fc := mgrWithFake(t, f, Options{UpstreamTransitionTimes: upstream})
		m.ObservePod(f.put(mgrPod()))
		ready := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)}}
		mgrSet(t, m, mgrPod(), ready)
		mgrSync(t, m)
		first := mgrGetCond(f.get("new", "foo").Status, v1.PodReady).LastTransitionTime
		// The node controller marks the pod not ready a minute later.
		fc.Step(time.Minute)
		p := f.get("new", "foo")
		p.Status.Conditions[0].Status = v1.ConditionFalse
		p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(fc.Now())
		flipped := f.put(p)
		fc.Step(time.Minute)
		m.ObservePod(flipped) // the kubelet sees it and restores Ready
		mgrSync(t, m)
		got := mgrGetCond(f.get("new", "foo").Status, v1.PodReady)
		if got.Status != v1.ConditionTrue {
			t.Fatalf("upstream=%v: Ready not restored: %+v", upstream, got)
		}
		if upstream {
			if !got.LastTransitionTime.Equal(&first) {
				t.Errorf("upstream: LTT %v, want the old %v (rolled back)", got.LastTransitionTime, first)
			}
		} else if want := metav1.NewTime(fc.Now()); !got.LastTransitionTime.Equal(&want) {
			t.Errorf("fixed: LTT %v, want now %v", got.LastTransitionTime, want)
		}
	}
}

// TestObservePodReevaluatesReadinessGates: a gate flipped on the server re-evaluates
// Ready at once.
func TestObservePodReevaluatesReadinessGates(t *testing.T) {
	gate := v1.PodConditionType("example.com/gate")
	pod := mgrPod()
	pod.Spec.Containers = []v1.Container{{Name: "c"}}
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
	pod.Status.Conditions = []v1.PodCondition{mgrCond(gate, v1.ConditionFalse)}
	f := newMgrFake()
	stored := f.put(pod)
	m, _ := mgrWithFake(t, f, Options{})
	m.ObservePod(stored)
	s := v1.PodStatus{
		Phase:             v1.PodRunning,
		ContainerStatuses: []v1.ContainerStatus{{Name: "c", Ready: true, State: mgrRunning()}},
		Conditions: []v1.PodCondition{
			mgrCond(gate, v1.ConditionFalse), mgrCond(v1.ContainersReady, v1.ConditionTrue),
			{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ReadinessGatesNotReady",
				Message: `the status of pod readiness gate "example.com/gate" is not "True", but False`},
		},
	}
	mgrSet(t, m, stored, s)
	mgrSync(t, m)
	// Another controller sets the gate.
	p := f.get("new", "foo")
	p.Status.Conditions[0].Status = v1.ConditionTrue
	m.ObservePod(f.put(p))
	mgrSync(t, m)
	got := f.get("new", "foo").Status
	if c := mgrGetCond(got, v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("Ready = %+v after the gate became True", c)
	}
	if c := mgrGetCond(got, gate); c.Status != v1.ConditionTrue {
		t.Fatalf("gate = %+v", c)
	}
}
