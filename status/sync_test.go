package status

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/status/statustest"
)

// The sync cases of the kubelet's pkg/kubelet/status/status_manager_test.go and the Manager's
// own guarantees, against statustest, asserting requests by verb.

func mgrWithServer(t *testing.T, srv *statustest.Server, opts Options) (*Manager, *clocktesting.FakeClock) {
	t.Helper()
	fc := clocktesting.NewFakeClock(mgrT0)
	opts.Clock = fc
	return NewManager(srv, opts), fc
}

func mgrSync(t *testing.T, m *Manager) {
	t.Helper()
	if err := m.Sync(context.Background()); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func mgrCounts(srv *statustest.Server) string {
	return fmt.Sprintf("get=%d patch=%d", srv.Requests(statustest.VerbGet), srv.Requests(statustest.VerbPatch))
}

func mgrWant(t *testing.T, srv *statustest.Server, want string) {
	t.Helper()
	if got := mgrCounts(srv); got != want {
		t.Fatalf("requests %s, want %s", got, want)
	}
}

func mgrServerPod(t *testing.T, srv *statustest.Server) *v1.Pod {
	t.Helper()
	p, err := srv.Peek("new", "foo")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mgrCreate stores pod on srv and returns the stored copy (with its resourceVersion).
func mgrCreate(t *testing.T, srv *statustest.Server, pod *v1.Pod) *v1.Pod {
	t.Helper()
	p, err := srv.Create(pod)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSyncPod(t *testing.T) {
	srv := statustest.NewServer(mgrPod())
	m, _ := mgrWithServer(t, srv, Options{})
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=1") // upstream: [get, patch]
	want := mgrStatus(t, m, "12345678").Message
	if got := mgrServerPod(t, srv).Status.Message; got != want {
		t.Fatalf("server message %q, want %q", got, want)
	}
	// The next change is computed against the PATCH response: no GET (upstream: 2 more).
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=2")
}

func TestSyncPodIgnoresNotFound(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=0") // upstream: [get]
	// Unlike the kubelet, which GETs a deleted pod on every batch until
	// RemoveOrphanedStatuses (kubernetes#139020), the status is dropped.
	if _, ok := m.GetPodStatus("12345678"); ok {
		t.Fatal("status of a deleted pod still cached")
	}
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=0")
}

func TestSyncPodChecksMismatchedUID(t *testing.T) {
	first := mgrPod()
	first.UID = "first"
	srv := statustest.NewServer(first)
	m, _ := mgrWithServer(t, srv, Options{})
	second := mgrPod()
	second.UID = "second"
	mgrSet(t, m, second, mgrRandomStatus())
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=0") // upstream: [get]
	if _, ok := m.GetPodStatus("second"); ok {
		t.Fatal("status of a recreated pod still cached")
	}
}

// TestSyncPodNoDeadlock replays upstream's script: 404, recreated, normal, deleting but
// running, terminated container, GET error.
func TestSyncPodNoDeadlock(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	pod := mgrPod()
	pod.Spec.Containers = []v1.Container{{Name: "c"}}
	running := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "c", State: mgrRunning()}}}
	step := func(name string, prepare func(), s v1.PodStatus, want string) {
		t.Helper()
		if prepare != nil {
			prepare()
		}
		srv.ResetRequests()
		mgrSet(t, m, pod, s)
		_ = m.Sync(context.Background())
		if got := mgrCounts(srv); got != want {
			t.Fatalf("%s: requests %s, want %s", name, got, want)
		}
	}
	step("pod not found", nil, running, "get=1 patch=0")
	other := pod.DeepCopy()
	other.UID = "other"
	step("pod recreated", func() { mgrCreate(t, srv, other) }, running, "get=1 patch=0")
	step("normal", func() { _ = srv.Delete("new", "foo"); mgrCreate(t, srv, pod) }, running, "get=1 patch=1")
	now := metav1.NewTime(mgrT0)
	// Upstream's fake client never stores patches, so it patches again here; the server
	// already holds this status, so the forced version sends nothing.
	step("deleting, still running", func() { pod = pod.DeepCopy(); pod.DeletionTimestamp = &now }, running, "get=0 patch=0")
	term := *running.DeepCopy()
	term.ContainerStatuses[0].State = mgrTerminated(0)
	step("container terminated", nil, term, "get=0 patch=1")
	srv.FailNext(statustest.VerbGet, 1, statustest.InternalError())
	srv.FailNext(statustest.VerbPatch, 1, statustest.InternalError())
	again := *term.DeepCopy()
	again.Message = "again"
	step("patch error", nil, again, "get=0 patch=1")
	srv.ResetRequests()
	if err := m.Sync(context.Background()); err == nil {
		t.Fatal("GET error not reported")
	}
	mgrWant(t, srv, "get=1 patch=0")
}

func TestStaleUpdates(t *testing.T) {
	srv := statustest.NewServer(mgrPod())
	m, _ := mgrWithServer(t, srv, Options{})
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
	mgrWant(t, srv, "get=1 patch=1")
	if got := mgrServerPod(t, srv).Status.Message; got != "third" {
		t.Fatalf("server has %q", got)
	}
	mgrSet(t, m, pod, s) // same status: nothing
	if v := mgrVersion(m, pod.UID); v != 3 {
		t.Fatalf("same status made version %d", v)
	}
	// A forced resync of an up-to-date pod: the patch is unchanged, so no PATCH.
	m.mu.Lock()
	e := m.pods[pod.UID]
	e.synced--
	m.markDirtyLocked(e)
	m.mu.Unlock()
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=1")
}

func TestObservePodSeedsBase(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	for i := 0; i < 5; i++ {
		mgrSet(t, m, mgrPod(), mgrRandomStatus())
		mgrSync(t, m)
	}
	mgrWant(t, srv, "get=0 patch=5") // upstream: 5 GETs and 5 PATCHes
}

func TestObservePodIgnoresOlderCopies(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	old := mgrCreate(t, srv, mgrPod())
	m.ObservePod(context.Background(), old)
	mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "one"})
	mgrSync(t, m)
	m.ObservePod(context.Background(), old) // a late watch event
	mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "two"})
	mgrSync(t, m)
	mgrWant(t, srv, "get=0 patch=2")
	if got := mgrServerPod(t, srv).Status.Message; got != "two" {
		t.Fatalf("server has %q", got)
	}
}

func TestConflictRefetchesAndRetries(t *testing.T) {
	srv := statustest.NewServer()
	ev := newMgrEvents()
	m, _ := mgrWithServer(t, srv, Options{Observer: ev.observer()})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	srv.FailNext(statustest.VerbPatch, 2, statustest.Conflict("foo"))
	mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "x"})
	mgrSync(t, m)
	mgrWant(t, srv, "get=2 patch=3")
	if n := len(ev.conflicts); n != 2 {
		t.Errorf("%d conflicts observed", n)
	}
	if got := mgrServerPod(t, srv).Status.Message; got != "x" {
		t.Fatalf("server has %q", got)
	}
}

func TestRetryBackoffHonoursRetryAfter(t *testing.T) {
	srv := statustest.NewServer()
	m, fc := mgrWithServer(t, srv, Options{Retry: RetryOptions{Base: time.Second, Max: time.Minute, Jitter: -1}})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	srv.Script(statustest.VerbPatch,
		statustest.Fault{Err: statustest.InternalError()},
		statustest.Fault{Err: statustest.TooManyRequests(30)},
		statustest.Fault{Err: statustest.Timeout(), AfterWrite: true})
	mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "x"})
	var delays []time.Duration
	for i := 0; i < 3; i++ {
		if err := m.Sync(context.Background()); err == nil {
			t.Fatalf("attempt %d: no error", i)
		}
		m.mu.Lock()
		delays = append(delays, m.pods["12345678"].notBefore.Sub(fc.Now()))
		m.mu.Unlock()
	}
	// 1s; then max(2s, Retry-After 30s); then 4s.
	want := []time.Duration{time.Second, 30 * time.Second, 4 * time.Second}
	for i := range want {
		if delays[i] != want[i] {
			t.Errorf("delay %d = %v, want %v", i, delays[i], want[i])
		}
	}
	// The timed-out PATCH was applied: after a GET the patch is unchanged, nothing is sent.
	srv.ResetRequests()
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=0")
	if got := mgrServerPod(t, srv).Status.Message; got != "x" {
		t.Fatalf("server message %q after recovery", got)
	}
}

func TestBackoffIsCappedAndJittered(t *testing.T) {
	b := newBackoff(RetryOptions{Base: time.Second, Max: 8 * time.Second, Jitter: 0.5, Seed: ptr.To[uint64](7)})
	for attempt := 1; attempt <= 10; attempt++ {
		d := b.delay(attempt, statustest.InternalError())
		lo := min(time.Second<<(attempt-1), 8*time.Second)
		if d < lo || d >= lo+lo/2 {
			t.Errorf("attempt %d: delay %v outside [%v, %v)", attempt, d, lo, lo+lo/2)
		}
	}
	// Deterministic for a seed.
	b1 := newBackoff(RetryOptions{Base: time.Second, Max: 8 * time.Second, Jitter: 0.5, Seed: ptr.To[uint64](7)})
	b2 := newBackoff(RetryOptions{Base: time.Second, Max: 8 * time.Second, Jitter: 0.5, Seed: ptr.To[uint64](7)})
	for i := 1; i < 5; i++ {
		if b1.delay(i, nil) != b2.delay(i, nil) {
			t.Fatal("same seed, different delays")
		}
	}
}

func TestSyncErrorNamesPod(t *testing.T) {
	srv := statustest.NewServer(mgrPod())
	m, _ := mgrWithServer(t, srv, Options{})
	srv.FailNext(statustest.VerbGet, 1, statustest.ServiceUnavailable())
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
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "first"})
	once := true
	srv.OnWrite(func(statustest.Event) {
		// Runs inside the client's PatchPodStatus: the Manager's lock must not be held.
		if once {
			once = false
			if err := m.SetPodStatus(context.Background(), mgrPod(), v1.PodStatus{Message: "second"}); err != nil {
				t.Error(err)
			}
		}
	})
	mgrSync(t, m)
	if got := mgrServerPod(t, srv).Status.Message; got != "first" {
		t.Fatalf("server %q after the first sync", got)
	}
	m.mu.Lock()
	pending := m.pods["12345678"].pending()
	m.mu.Unlock()
	if !pending {
		t.Fatal("the change made during the PATCH was marked synced")
	}
	mgrSync(t, m)
	if got := mgrServerPod(t, srv).Status.Message; got != "second" {
		t.Fatalf("server %q, want second", got)
	}
}

func TestRecreatedPodDetectedOnPatch(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m)
	if _, err := srv.Recreate("new", "foo"); err != nil {
		t.Fatal(err)
	}
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	mgrSync(t, m) // PATCH → 422 (uid precondition), GET → another UID → dropped
	mgrWant(t, srv, "get=1 patch=2")
	if _, ok := m.GetPodStatus("12345678"); ok {
		t.Fatal("status of the old pod still cached")
	}
	if got := mgrServerPod(t, srv).Status.Message; got != "" {
		t.Fatalf("the recreated pod was written: %q", got)
	}
}

func TestLastTransitionTimeAfterNodeControllerFlip(t *testing.T) {
	for _, upstream := range []bool{false, true} {
		srv := statustest.NewServer()
		m, fc := mgrWithServer(t, srv, Options{UpstreamTransitionTimes: upstream})
		m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
		ready := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)}}
		mgrSet(t, m, mgrPod(), ready)
		mgrSync(t, m)
		first := mgrGetCond(mgrServerPod(t, srv).Status, v1.PodReady).LastTransitionTime
		// The node lifecycle controller marks the pod not ready a minute later.
		fc.Step(time.Minute)
		flipped, err := srv.SetCondition("new", "foo", v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse,
			Reason: "NodeNotReady", LastTransitionTime: metav1.NewTime(fc.Now())})
		if err != nil {
			t.Fatal(err)
		}
		fc.Step(time.Minute)
		m.ObservePod(context.Background(), flipped) // the kubelet is back, sees it and restores Ready
		mgrSync(t, m)
		got := mgrGetCond(mgrServerPod(t, srv).Status, v1.PodReady)
		if got.Status != v1.ConditionTrue {
			t.Fatalf("upstream=%v: Ready not restored: %+v", upstream, got)
		}
		if upstream {
			if !got.LastTransitionTime.Equal(&first) {
				t.Errorf("upstream: LTT %v, want the old %v (rolled back)", got.LastTransitionTime, first)
			}
		} else if want := metav1.NewTime(fc.Now()); !got.LastTransitionTime.Equal(&want) {
			t.Errorf("fixed: LTT %v, want now %v", got.LastTransitionTime, want)
		} else if c := mgrGetCond(mgrStatus(t, m, "12345678"), v1.PodReady); !c.LastTransitionTime.Equal(&want) {
			t.Errorf("fixed: the cache reports LTT %v, the server %v", c.LastTransitionTime, want)
		}
	}
}

// mgrGatedPod returns a pod with one container and one readiness gate (False on the
// server), and the kubelet status of a running, container-ready pod.
func mgrGatedPod() (*v1.Pod, v1.PodStatus) {
	gate := v1.PodConditionType("example.com/gate")
	pod := mgrPod()
	pod.Spec.Containers = []v1.Container{{Name: "c"}}
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
	pod.Status.Conditions = []v1.PodCondition{mgrCond(gate, v1.ConditionFalse)}
	s := v1.PodStatus{
		Phase:             v1.PodRunning,
		ContainerStatuses: []v1.ContainerStatus{{Name: "c", ContainerID: "test://c", Ready: true, State: mgrRunning()}},
		Conditions: []v1.PodCondition{
			mgrCond(v1.ContainersReady, v1.ConditionTrue),
			{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ReadinessGatesNotReady",
				Message: `the status of pod readiness gate "example.com/gate" is not "True", but False`},
		},
	}
	return pod, s
}

// TestObservePodReevaluatesReadinessGates: a gate flipped on the server re-evaluates
// Ready at once, and the next sync sends it.
func TestObservePodReevaluatesReadinessGates(t *testing.T) {
	pod, s := mgrGatedPod()
	srv := statustest.NewServer()
	stored := mgrCreate(t, srv, pod)
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), stored)
	mgrSet(t, m, stored, s)
	mgrSync(t, m)
	// Another controller sets the gate; the watch delivers it.
	p, err := srv.SetCondition("new", "foo", mgrCond("example.com/gate", v1.ConditionTrue))
	if err != nil {
		t.Fatal(err)
	}
	m.ObservePod(context.Background(), p)
	mgrSync(t, m)
	got := mgrServerPod(t, srv).Status
	if c := mgrGetCond(got, v1.PodReady); c == nil || c.Status != v1.ConditionTrue || c.Reason != "" || c.Message != "" {
		t.Fatalf("Ready = %+v after the gate became True", c)
	}
	if c := mgrGetCond(got, "example.com/gate"); c.Status != v1.ConditionTrue {
		t.Fatalf("gate = %+v", c)
	}
	mgrWant(t, srv, "get=0 patch=2")
}

// TestObservePodReconcilesKubeletFields: another writer changing a kubelet-owned field is
// undone on the next sync (the kubelet's needsReconcile, per event).
func TestObservePodReconcilesKubeletFields(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	mgrSet(t, m, mgrPod(), v1.PodStatus{Phase: v1.PodRunning, Message: "mine"})
	mgrSync(t, m)
	p, err := srv.Update("new", "foo", func(p *v1.Pod) { p.Status.Message = "theirs" })
	if err != nil {
		t.Fatal(err)
	}
	m.ObservePod(context.Background(), p)
	mgrSync(t, m)
	if got := mgrServerPod(t, srv).Status.Message; got != "mine" {
		t.Fatalf("server message %q, want mine", got)
	}
}

// TestForeignConditionsSurviveStaleBase: conditions another controller adds after the
// Manager took its base survive the Manager's next PATCH, even though the patch's
// $setElementOrder/conditions does not list them: strategic merge keeps server-only list
// elements and interleaves them by their server order.
func TestForeignConditionsSurviveStaleBase(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	pod := mgrPod()
	pod.Status.Conditions = []v1.PodCondition{mgrCond("example.com/a", v1.ConditionTrue)}
	m.ObservePod(context.Background(), mgrCreate(t, srv, pod))
	s := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
		mgrCond(v1.PodScheduled, v1.ConditionTrue), mgrCond(v1.PodReady, v1.ConditionFalse),
	}}
	mgrSet(t, m, mgrPod(), s)
	mgrSync(t, m)
	// Two foreign writes the Manager never observes: a new condition, and a flip of one
	// that is in the Manager's (now stale) base.
	if _, err := srv.SetCondition("new", "foo", mgrCond("example.com/b", v1.ConditionTrue)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.SetCondition("new", "foo", mgrCond("example.com/a", v1.ConditionFalse)); err != nil {
		t.Fatal(err)
	}
	// The kubelet's Ready flips and a new owned condition appears, so the patch carries
	// $setElementOrder/conditions built from the stale base.
	s.Conditions[1].Status = v1.ConditionTrue
	s.Conditions = append(s.Conditions, mgrCond(v1.PodInitialized, v1.ConditionTrue))
	mgrSet(t, m, mgrPod(), s)
	mgrSync(t, m)
	mgrWant(t, srv, "get=0 patch=2")
	last := srv.Patches()[1].Patch
	if !strings.Contains(string(last), "$setElementOrder/conditions") || strings.Contains(string(last), "example.com/b") {
		t.Fatalf("patch %s: want a $setElementOrder without the unseen condition", last)
	}
	got := mgrServerPod(t, srv).Status
	var types []string
	for _, c := range got.Conditions {
		types = append(types, string(c.Type)+"="+string(c.Status))
	}
	want := "example.com/a=False PodScheduled=True Ready=True Initialized=True example.com/b=True"
	if strings.Join(types, " ") != want {
		t.Fatalf("server conditions %v, want %s", types, want)
	}
}

// TestGateSeenInPatchResponse: a gate write whose watch event arrives only after the
// Manager's own PATCH response (which already contains it) still re-evaluates Ready.
func TestGateSeenInPatchResponse(t *testing.T) {
	pod, s := mgrGatedPod()
	srv := statustest.NewServer()
	stored := mgrCreate(t, srv, pod)
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), stored)
	mgrSet(t, m, stored, s)
	mgrSync(t, m)
	gateEvent, err := srv.SetCondition("new", "foo", mgrCond("example.com/gate", v1.ConditionTrue))
	if err != nil {
		t.Fatal(err)
	}
	s.Message = "unrelated change"
	mgrSet(t, m, stored, s)
	mgrSync(t, m)                                 // its response carries the gate
	m.ObservePod(context.Background(), gateEvent) // the late event is older than the base: ignored
	mgrSync(t, m)
	if c := mgrGetCond(mgrServerPod(t, srv).Status, v1.PodReady); c.Status != v1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}
	mgrWant(t, srv, "get=0 patch=3")
}

// TestDriftSeenInPatchResponse: another writer's change to a kubelet-owned condition that
// lands between the Manager's base and its next PATCH (which does not touch that condition)
// reaches the Manager only inside the PATCH response; its watch event is then older than
// the base and ignored. The same sync repairs it.
func TestDriftSeenInPatchResponse(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	s := v1.PodStatus{Phase: v1.PodRunning, Message: "a", Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)}}
	mgrSet(t, m, mgrPod(), s)
	mgrSync(t, m)
	foreign, err := srv.SetCondition("new", "foo", mgrCond(v1.PodReady, v1.ConditionFalse))
	if err != nil {
		t.Fatal(err)
	}
	s.Message = "b"
	mgrSet(t, m, mgrPod(), s)
	mgrSync(t, m)                               // its response carries Ready=False: patched again at once
	m.ObservePod(context.Background(), foreign) // the late event is older than the base: ignored
	mgrSync(t, m)
	if c := mgrGetCond(mgrServerPod(t, srv).Status, v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("server Ready = %+v, want True", c)
	}
	mgrWant(t, srv, "get=0 patch=3")
}

// writeDuringPatch is a status.Client over srv whose next PATCH, once applied, is followed
// by another writer's change and its watch event (ObservePod) before the response returns:
// the event arrives while the sync is in flight.
type writeDuringPatch struct {
	*statustest.Server
	m     *Manager
	write func() (*v1.Pod, error)
}

func (c *writeDuringPatch) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	got, err := c.Server.PatchPodStatus(ctx, namespace, name, patch)
	if w := c.write; w != nil && err == nil {
		c.write = nil
		if p, werr := w(); werr == nil {
			c.m.ObservePod(ctx, p)
		}
	}
	return got, err
}

// TestDriftSeenDuringPatch: another writer's change whose watch event arrives while the
// Manager's PATCH is in flight (after it was sent) is repaired by the next sync, though the
// event came while a sync was pending and the response that follows is older.
func TestDriftSeenDuringPatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cond  v1.PodCondition
		patch int // PATCHes in all: the Manager's first, and a repair if one is due
	}{
		{"a kubelet-owned condition set False", mgrCond(v1.PodReady, v1.ConditionFalse), 2},
		{"a foreign condition added", mgrCond("example.com/x", v1.ConditionTrue), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := statustest.NewServer()
			c := &writeDuringPatch{Server: srv}
			m := NewManager(c, Options{Clock: clocktesting.NewFakeClock(mgrT0)})
			c.m = m
			m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
			s := v1.PodStatus{Phase: v1.PodRunning, Message: "a", Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)}}
			mgrSet(t, m, mgrPod(), s)
			c.write = func() (*v1.Pod, error) { return srv.SetCondition("new", "foo", tc.cond) }
			mgrSync(t, m) // PATCH, then the other writer's change and its event, then the response
			mgrSync(t, m)
			got := mgrServerPod(t, srv).Status
			if c := mgrGetCond(got, v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
				t.Fatalf("server Ready = %+v, want True", c)
			}
			if c := mgrGetCond(got, tc.cond.Type); tc.cond.Type != v1.PodReady && (c == nil || c.Status != tc.cond.Status) {
				t.Fatalf("server %s = %+v, want the other writer's", tc.cond.Type, c)
			}
			mgrWant(t, srv, fmt.Sprintf("get=0 patch=%d", tc.patch))
		})
	}
}

// noResourceVersions is a status.Client over srv that strips every resourceVersion, as
// client-go's fake clientset returns none: no server copy is then newer than another.
type noResourceVersions struct{ *statustest.Server }

func (c noResourceVersions) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	p, err := c.Server.PatchPodStatus(ctx, namespace, name, patch)
	if p != nil {
		p.ResourceVersion = ""
	}
	return p, err
}

func (c noResourceVersions) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	p, err := c.Server.GetPod(ctx, namespace, name)
	if p != nil {
		p.ResourceVersion = ""
	}
	return p, err
}

// TestDriftChecksNeedNewerCopies: against a server that gives no resourceVersions (client-go's
// fake clientset), the Manager keeps its first base, and neither a PATCH response nor an
// event that came during a sync counts as newer: the drift checks compare nothing and cost
// no request, and each change is one PATCH.
func TestDriftChecksNeedNewerCopies(t *testing.T) {
	srv := statustest.NewServer()
	m := NewManager(noResourceVersions{srv}, Options{Clock: clocktesting.NewFakeClock(mgrT0)})
	first := mgrCreate(t, srv, mgrPod())
	first.ResourceVersion = ""
	m.ObservePod(context.Background(), first)
	s := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)}}
	for i, msg := range []string{"a", "b", "c"} {
		s.Message = msg
		mgrSet(t, m, mgrPod(), s)
		mgrSync(t, m)
		mgrWant(t, srv, fmt.Sprintf("get=0 patch=%d", i+1))
	}
	if got := mgrServerPod(t, srv).Status.Message; got != "c" {
		t.Fatalf("server message %q, want c", got)
	}
}

// TestForeignConditionInPatchResponseCostsNoRequest: a difference the merge keeps (a
// foreign condition, another writer's message on a condition the kubelet shares) found in
// a PATCH response makes no second PATCH.
func TestForeignConditionInPatchResponseCostsNoRequest(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	s := v1.PodStatus{Phase: v1.PodRunning, Message: "a"}
	mgrSet(t, m, mgrPod(), s)
	mgrSync(t, m)
	dt := mgrCond(v1.DisruptionTarget, v1.ConditionTrue)
	dt.Reason = "EvictionByEvictionAPI"
	if _, err := srv.SetCondition("new", "foo", dt); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.SetCondition("new", "foo", mgrCond("example.com/x", v1.ConditionTrue)); err != nil {
		t.Fatal(err)
	}
	s.Message = "b"
	mgrSet(t, m, mgrPod(), s)
	mgrSync(t, m)
	mgrWant(t, srv, "get=0 patch=2")
	got := mgrServerPod(t, srv).Status
	if c := mgrGetCond(got, v1.DisruptionTarget); c == nil || c.Reason != "EvictionByEvictionAPI" {
		t.Fatalf("DisruptionTarget = %+v", c)
	}
}

func TestForgetPod(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	m.ForgetPod(context.Background(), "12345678")
	if _, ok := m.GetPodStatus("12345678"); ok {
		t.Fatal("status still cached")
	}
	mgrSync(t, m)
	mgrWant(t, srv, "get=0 patch=0")
}

// TestSyncWorkFollowsChanges: with many cached, up-to-date pods, a sync looks only at the
// pods that changed.
func TestSyncWorkFollowsChanges(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	const n = 2000
	for i := 0; i < n; i++ {
		p := mgrBenchPod(i)
		m.ObservePod(context.Background(), mgrCreate(t, srv, p))
		mgrSet(t, m, p, mgrBenchStatus(0))
	}
	mgrSync(t, m)
	// The sync paths walk only m.dirty and m.held (requeueHeldLocked, dispatch, Sync): their
	// sizes are the entries a sync looks at.
	walked := func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.dirty) + len(m.held)
	}
	if got := walked(); got != 0 {
		t.Fatalf("with nothing pending a sync would walk %d entries", got)
	}
	mgrSync(t, m)
	dispatchAndRun(m)
	mgrSet(t, m, mgrBenchPod(7), mgrBenchStatus(1))
	if got := walked(); got != 1 {
		t.Fatalf("after one change a sync would walk %d entries, want 1", got)
	}
	mgrSync(t, m)
	if got := walked(); got != 0 {
		t.Fatalf("after the sync %d entries are left to walk", got)
	}
	mgrWant(t, srv, fmt.Sprintf("get=0 patch=%d", n+1))
}

// TestReconcilePodStatus: an observed copy equal to the cache on kubelet-owned fields
// queues nothing; one that differs is synced.
func TestReconcilePodStatus(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	mgrSet(t, m, mgrPod(), v1.PodStatus{Phase: v1.PodRunning, Message: "mine"})
	mgrSync(t, m)
	// A foreign condition changes the pod but no kubelet field.
	p, err := srv.SetCondition("new", "foo", mgrCond("example.com/x", v1.ConditionTrue))
	if err != nil {
		t.Fatal(err)
	}
	m.ObservePod(context.Background(), p)
	m.mu.Lock()
	dirty := len(m.dirty)
	m.mu.Unlock()
	if dirty != 0 {
		t.Fatal("a foreign change queued a sync")
	}
	p, err = srv.Update("new", "foo", func(p *v1.Pod) { p.Status.Phase = v1.PodPending })
	if err != nil {
		t.Fatal(err)
	}
	m.ObservePod(context.Background(), p)
	mgrSync(t, m)
	if got := mgrServerPod(t, srv).Status.Phase; got != v1.PodRunning {
		t.Fatalf("phase %s not reconciled", got)
	}
	mgrWant(t, srv, "get=0 patch=2")
}

// TestTerminalServerPhaseIsFinal: a phase another writer made terminal on the server is
// never reverted by a stale kubelet status.
func TestTerminalServerPhaseIsFinal(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	mgrSet(t, m, mgrPod(), v1.PodStatus{Phase: v1.PodRunning, Message: "running"})
	mgrSync(t, m)
	p, err := srv.Update("new", "foo", func(p *v1.Pod) {
		p.Status.Phase, p.Status.Reason, p.Status.Message = v1.PodFailed, "Evicted", "evicted"
	})
	if err != nil {
		t.Fatal(err)
	}
	m.ObservePod(context.Background(), p)
	mgrSet(t, m, mgrPod(), v1.PodStatus{Phase: v1.PodRunning, Message: "still running?"})
	mgrSync(t, m)
	got := mgrServerPod(t, srv).Status
	if got.Phase != v1.PodFailed || got.Reason != "Evicted" {
		t.Fatalf("server phase %s reason %q: a terminal phase was reverted", got.Phase, got.Reason)
	}
}

// TestTerminalCachedPhaseIsFinal: the Manager's own terminal phase is final too.
func TestTerminalCachedPhaseIsFinal(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	mgrSet(t, m, mgrPod(), v1.PodStatus{Phase: v1.PodSucceeded})
	mgrSync(t, m)
	mgrSet(t, m, mgrPod(), v1.PodStatus{Phase: v1.PodRunning, Message: "late"})
	mgrSync(t, m)
	if got := mgrServerPod(t, srv).Status; got.Phase != v1.PodSucceeded || got.Message != "late" {
		t.Fatalf("server phase %s message %q", got.Phase, got.Message)
	}
}

// TestWorkers: with several workers every change still goes out once, and each pod ends
// with its last status.
func TestWorkers(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{Workers: 4})
	const n = 200
	for i := 0; i < n; i++ {
		m.ObservePod(context.Background(), mgrCreate(t, srv, mgrBenchPod(i)))
	}
	for r := 0; r < 3; r++ {
		for i := 0; i < n; i++ {
			mgrSet(t, m, mgrBenchPod(i), mgrBenchStatus(r))
		}
		mgrSync(t, m)
	}
	mgrWant(t, srv, fmt.Sprintf("get=0 patch=%d", 3*n))
	for i := 0; i < n; i++ {
		p, err := srv.Peek("bench", mgrBenchPod(i).Name)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Status.ContainerStatuses[0].RestartCount; got != 2 {
			t.Fatalf("pod %d: restart count %d, want the last round's 2", i, got)
		}
	}
}

// TestHeldTerminalPhaseIsRetried: a terminal phase held back while containers could run
// is sent once they stopped, without any new change or watch event (the kubelet's 10 s
// reconcile does this; without a retry the pod would stay Running on the server).
func TestHeldTerminalPhaseIsRetried(t *testing.T) {
	srv := statustest.NewServer()
	var running atomic.Bool // the pod's containers may still run
	running.Store(true)
	could := func(*v1.Pod) bool { return running.Load() }
	ev := newMgrEvents()
	m, _ := mgrWithServer(t, srv, Options{CouldHaveRunningContainers: could, Observer: ev.observer()})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	mgrSet(t, m, mgrPod(), v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)}})
	mgrSync(t, m)
	if err := m.TerminatePod(context.Background(), mgrPod()); err != nil {
		t.Fatal(err)
	}
	mgrSync(t, m)
	if got := mgrServerPod(t, srv).Status.Phase; got != v1.PodRunning {
		t.Fatalf("phase %s sent while containers could run", got)
	}
	running.Store(false) // the containers stopped
	mgrSync(t, m)
	if got := mgrServerPod(t, srv).Status; got.Phase != v1.PodFailed || isTrue(got.Conditions, v1.PodReady) {
		t.Fatalf("after the containers stopped: phase %s, conditions %v", got.Phase, got.Conditions)
	}
	mgrWant(t, srv, "get=0 patch=2") // the held-back sync had nothing else to send

	// The same through Run: the periodic tick retries the held pod.
	synctest.Test(t, func(t *testing.T) {
		srv2 := statustest.NewServer()
		running.Store(true)
		ev2 := newMgrEvents()
		m2, fc2 := mgrWithServer(t, srv2, Options{CouldHaveRunningContainers: could, Observer: ev2.observer()})
		m2.ObservePod(context.Background(), mgrCreate(t, srv2, mgrPod()))
		if err := m2.TerminatePod(context.Background(), mgrPod()); err != nil {
			t.Fatal(err)
		}
		mgrRun(t, m2)
		mgrAwait(t, ev2.synced, "held sync")
		if got := mgrServerPod(t, srv2).Status.Phase; got == v1.PodFailed {
			t.Fatal("terminal phase sent while containers could run")
		}
		running.Store(false)
		mgrWaitForWaiters(t, fc2, 1)
		fc2.Step(DefaultSyncPeriod)
		mgrAwait(t, ev2.synced, "sync after the tick")
		if got := mgrServerPod(t, srv2).Status.Phase; got != v1.PodFailed {
			t.Fatalf("phase %s after the tick", got)
		}
	})
}

// mgrNilClient answers every request with no pod and no error, as a broken client might.
type mgrNilClient struct{}

func (mgrNilClient) GetPod(context.Context, string, string) (*v1.Pod, error) { return nil, nil }

func (mgrNilClient) PatchPodStatus(context.Context, string, string, []byte) (*v1.Pod, error) {
	return nil, nil
}

func TestBrokenClientIsAnErrorNotAPanic(t *testing.T) {
	m := NewManager(mgrNilClient{}, Options{Clock: clocktesting.NewFakeClock(mgrT0)})
	mgrSet(t, m, mgrPod(), mgrRandomStatus())
	if err := m.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "no pod") {
		t.Fatalf("err = %v", err)
	}
}

// TestSetContainerReadinessReadsTheNewestGates: without ObservePod, a gate value the
// caller reported in SetPodStatus is newer than the base (the last PATCH response), and
// SetContainerReadiness must read it, as the kubelet reads its cached status. Reading the
// stale base sent Ready True while the server's gate was False (found by the sequence
// test against the kubelet in internal/upstream/manager).
func TestSetContainerReadinessReadsTheNewestGates(t *testing.T) {
	pod, s := mgrGatedPod()
	pod.Status.Conditions[0].Status = v1.ConditionTrue // the gate starts True
	srv := statustest.NewServer()
	stored := mgrCreate(t, srv, pod)
	m, _ := mgrWithServer(t, srv, Options{})
	ready := *s.DeepCopy()
	ready.Conditions[1] = mgrCond(v1.PodReady, v1.ConditionTrue)
	mgrSet(t, m, stored, ready)
	mgrSync(t, m) // base: the PATCH response, gate True

	// Another controller sets the gate False; no watch reaches the Manager, but the caller
	// learns it and reports it with its status.
	if _, err := srv.SetCondition("new", "foo", mgrCond("example.com/gate", v1.ConditionFalse)); err != nil {
		t.Fatal(err)
	}
	gated := *s.DeepCopy()
	gated.Conditions = append(gated.Conditions, mgrCond("example.com/gate", v1.ConditionFalse))
	mgrSet(t, m, stored, gated)
	for _, ready := range []bool{false, true} {
		if err := m.SetContainerReadiness(context.Background(), stored.UID, "test://c", ready); err != nil {
			t.Fatal(err)
		}
	}
	mgrSync(t, m)

	got := mgrServerPod(t, srv).Status
	if c := mgrGetCond(got, v1.PodReady); c == nil || c.Status != v1.ConditionFalse || c.Reason != "ReadinessGatesNotReady" {
		t.Fatalf("Ready on the server = %+v while the gate is False, want False/ReadinessGatesNotReady", c)
	}
}

// TestCallerReadyKeptWhileGatesUnchanged: a Ready the caller computed itself is kept when
// newer server copies (the PATCH response, watch events) arrive with the same gates; the
// Manager re-derives Ready only when a gate condition changes.
func TestCallerReadyKeptWhileGatesUnchanged(t *testing.T) {
	pod, s := mgrGatedPod()
	pod.Status.Conditions[0].Status = v1.ConditionTrue // the gate is True
	srv := statustest.NewServer()
	stored := mgrCreate(t, srv, pod)
	m, _ := mgrWithServer(t, srv, Options{})
	m.ObservePod(context.Background(), stored)
	s.Conditions[1] = v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ProviderNotReady"}
	mgrSet(t, m, stored, s)
	mgrSync(t, m)
	m.ObservePod(context.Background(), mgrServerPod(t, srv)) // the watch event of our own PATCH
	mgrSync(t, m)
	if c := mgrGetCond(mgrServerPod(t, srv).Status, v1.PodReady); c == nil || c.Reason != "ProviderNotReady" {
		t.Fatalf("Ready on the server = %+v, want the caller's False/ProviderNotReady", c)
	}
	mgrWant(t, srv, "get=0 patch=1")
}

// TestDefaultSeedsDiffer: Managers built with default options draw their own jitter, so
// node agents that lost the API server together do not retry at the same instants; a
// fixed Seed (0 included) still gives the same delays every time.
func TestDefaultSeedsDiffer(t *testing.T) {
	const managers = 10
	seen := map[time.Duration]bool{}
	for range managers {
		seen[NewManager(nil, Options{}).backoff.delay(1, nil)] = true
	}
	// The first delay is uniform in [500ms, 600ms) at float64 resolution: equal draws
	// from independent seeds are practically impossible.
	if len(seen) != managers {
		t.Fatalf("%d Managers with default options drew %d distinct first delays: %v", managers, len(seen), seen)
	}
	a := NewManager(nil, Options{Retry: RetryOptions{Seed: ptr.To[uint64](0)}}).backoff
	b := NewManager(nil, Options{Retry: RetryOptions{Seed: ptr.To[uint64](0)}}).backoff
	for i := 1; i < 5; i++ {
		if da, db := a.delay(i, nil), b.delay(i, nil); da != db {
			t.Fatalf("Seed 0, attempt %d: %v and %v", i, da, db)
		}
	}
}

// TestTransitionOnStaleBaseIsConditional: another writer moves Ready to False (the node
// lifecycle controller's MarkPodsNotReady) after the Manager took its base, and the
// Manager, not told, moves Ready to False too. Its PATCH carries a new lastTransitionTime,
// so it is conditional on the base's resourceVersion: the 409 refetches, and the server
// keeps the other writer's time instead of seeing lastTransitionTime change with no
// change of Status.
func TestTransitionOnStaleBaseIsConditional(t *testing.T) {
	srv := statustest.NewServer()
	ev := newMgrEvents()
	m, fc := mgrWithServer(t, srv, Options{Observer: ev.observer()})
	m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
	s := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{mgrCond(v1.PodReady, v1.ConditionTrue)}}
	mgrSet(t, m, mgrPod(), s)
	mgrSync(t, m)
	fc.Step(time.Minute)
	other := metav1.NewTime(fc.Now())
	if _, err := srv.SetCondition("new", "foo", v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: other}); err != nil {
		t.Fatal(err)
	}
	fc.Step(time.Minute)
	s.Conditions[0].Status = v1.ConditionFalse
	mgrSet(t, m, mgrPod(), s) // a new lastTransitionTime in the cache: now
	srv.ResetRequests()
	mgrSync(t, m)
	got := mgrGetCond(mgrServerPod(t, srv).Status, v1.PodReady)
	if got.Status != v1.ConditionFalse || !got.LastTransitionTime.Equal(&other) {
		t.Fatalf("server Ready %s at %v, want False at the other writer's %v", got.Status, got.LastTransitionTime.UTC(), other.UTC())
	}
	if len(ev.conflicts) != 1 {
		t.Errorf("%d conflicts, want the one that refetched", len(ev.conflicts))
	}
	if p := string(srv.Patches()[0].Patch); !strings.Contains(p, `"resourceVersion":`) {
		t.Errorf("transition patch without a resourceVersion precondition: %s", p)
	}
}

func TestWithResourceVersion(t *testing.T) {
	for _, tc := range []struct{ patch, rv, want string }{
		{`{"metadata":{"uid":"u"},"status":{"phase":"Failed"}}`, "42",
			`{"metadata":{"resourceVersion":"42","uid":"u"},"status":{"phase":"Failed"}}`},
		{`{"status":{}}`, "42", `{"status":{}}`},
		{`{"metadata":{"uid":"u"}}`, `4"2`, `{"metadata":{"resourceVersion":"4\"2","uid":"u"}}`},
	} {
		if got := string(withResourceVersion([]byte(tc.patch), tc.rv)); got != tc.want {
			t.Errorf("withResourceVersion(%s, %q) = %s, want %s", tc.patch, tc.rv, got, tc.want)
		}
	}
	// With room in the buffer, the patch is rewritten in place.
	patch := append(make([]byte, 0, 256), `{"metadata":{"uid":"u"},"status":{}}`...)
	if got := withResourceVersion(patch, "7"); &got[0] != &patch[0] || string(got) != `{"metadata":{"resourceVersion":"7","uid":"u"},"status":{}}` {
		t.Errorf("with room: got %s in a new buffer: %v", got, &got[0] != &patch[0])
	}
}
