package status

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/status/statustest"
)

// mgrEvents is an Observer that reports events on channels, so tests of Run wait for
// events instead of sleeping.
type mgrEvents struct {
	synced    chan PodRef
	retried   chan time.Duration
	conflicts []PodRef
}

func newMgrEvents() *mgrEvents {
	return &mgrEvents{synced: make(chan PodRef, 100), retried: make(chan time.Duration, 100)}
}

// observer returns the hooks that feed o.
func (o *mgrEvents) observer() *Observer {
	return &Observer{
		OnConflict: func(ev ConflictEvent) { o.conflicts = append(o.conflicts, ev.Pod) },
		OnSynced:   func(ev SyncedEvent) { o.synced <- ev.Pod },
		OnRetry:    func(ev RetryEvent) { o.retried <- ev.Delay },
	}
}

// mgrAwaitLimit bounds every wait of the Manager's concurrency tests. They run inside a
// testing/synctest bubble, where time is fake: the limit costs no wall-clock time, and a
// regression fails the test at once instead of hanging until the binary's -timeout.
const mgrAwaitLimit = 10 * time.Minute

// mgrAwait waits for an event, for at most mgrAwaitLimit of the bubble's fake time. Call it
// only inside synctest.Test.
func mgrAwait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(mgrAwaitLimit):
		t.Fatalf("no %s within %v", what, mgrAwaitLimit)
		panic("unreachable")
	}
}

// mgrWaitForWaiters waits until every goroutine of the bubble is blocked, then checks that
// Run sleeps on at least n fake-clock waiters (its ticker, plus its retry timer when one
// is armed). Call it only inside synctest.Test.
func mgrWaitForWaiters(t *testing.T, fc interface{ Waiters() int }, n int) {
	t.Helper()
	synctest.Wait()
	if got := fc.Waiters(); got < n {
		t.Fatalf("Run sleeps on %d fake-clock waiters, want %d", got, n)
	}
}

func mgrRun(t *testing.T, m *Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := m.Run(ctx); err != nil {
			t.Errorf("Run returned %v, want nil once its context is done", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// TestRunIsEventDriven: a change is sent without the clock moving (no 10 s resync).
func TestRunIsEventDriven(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := statustest.NewServer()
		ev := newMgrEvents()
		m, _ := mgrWithServer(t, srv, Options{Observer: ev.observer()})
		m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
		mgrRun(t, m)
		mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "hello"})
		mgrAwait(t, ev.synced, "sync")
		if got := mgrServerPod(t, srv).Status.Message; got != "hello" {
			t.Fatalf("server message %q", got)
		}
	})
}

// TestRunGateChangeIsEventDriven: a readiness gate flipped by another controller reaches
// Ready through ObservePod alone, with the fake clock never stepped.
func TestRunGateChangeIsEventDriven(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod, st := mgrGatedPod()
		srv := statustest.NewServer()
		stored := mgrCreate(t, srv, pod)
		ev := newMgrEvents()
		m, _ := mgrWithServer(t, srv, Options{Observer: ev.observer()})
		m.ObservePod(context.Background(), stored)
		mgrSet(t, m, stored, st)
		mgrRun(t, m)
		mgrAwait(t, ev.synced, "first sync")
		p, err := srv.SetCondition("new", "foo", mgrCond("example.com/gate", v1.ConditionTrue))
		if err != nil {
			t.Fatal(err)
		}
		m.ObservePod(context.Background(), p)
		mgrAwait(t, ev.synced, "sync after the gate change")
		if c := mgrGetCond(mgrServerPod(t, srv).Status, v1.PodReady); c.Status != v1.ConditionTrue {
			t.Fatalf("Ready = %+v", c)
		}
	})
}

// TestRunRetriesWithBackoff: a failed sync is retried when its backoff expires on the
// fake clock, and not before.
func TestRunRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := statustest.NewServer()
		ev := newMgrEvents()
		m, fc := mgrWithServer(t, srv, Options{Observer: ev.observer(), Retry: RetryOptions{Base: 2 * time.Second, Jitter: -1}})
		m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
		srv.FailNext(statustest.VerbPatch, 1, statustest.ServerTimeout(statustest.VerbPatch))
		mgrRun(t, m)
		mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "x"})
		if d := mgrAwait(t, ev.retried, "first failure"); d != 2*time.Second {
			t.Fatalf("delay %v", d)
		}
		// Wait until Run sleeps on its retry timer as well as its ticker, then fire the timer.
		mgrWaitForWaiters(t, fc, 2)
		if got := srv.Requests(statustest.VerbPatch); got != 1 {
			t.Fatalf("%d PATCHes before the backoff expired", got)
		}
		fc.Step(2 * time.Second)
		mgrAwait(t, ev.synced, "sync after backoff")
		if got := mgrServerPod(t, srv).Status.Message; got != "x" {
			t.Fatalf("server message %q", got)
		}
	})
}

// mgrHookClient is statustest's server with a hook run before every PATCH: the hook may
// block (a request stuck on the wire) or fail the request.
type mgrHookClient struct {
	*statustest.Server
	beforePatch func(name string) error
}

func (c *mgrHookClient) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	if err := c.beforePatch(name); err != nil {
		return nil, err
	}
	return c.Server.PatchPodStatus(ctx, namespace, name, patch)
}

// TestSyncWaitHonoursContext: a Sync waiting for another goroutine's sync of the same pod
// (stuck in a request with no timeout) returns when its context ends. With a sync.Cond
// the wait could not see the context, and the Sync hung as long as the other request.
func TestSyncWaitHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := statustest.NewServer()
		entered, release := make(chan struct{}, 1), make(chan struct{})
		c := &mgrHookClient{Server: srv, beforePatch: func(string) error {
			entered <- struct{}{}
			<-release
			return nil
		}}
		m := NewManager(c, Options{}) // the real clock: the bubble's fake time
		m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
		mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "x"})
		first := make(chan error, 1)
		go func() { first <- m.Sync(context.Background()) }()
		mgrAwait(t, entered, "the first Sync's PATCH")

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		if err := m.Sync(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Sync behind a stuck sync: %v, want a wrapped context.DeadlineExceeded", err)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Errorf("Sync returned after %v, want its 1s deadline", waited)
		}
		close(release)
		if err := mgrAwait(t, first, "the first Sync"); err != nil {
			t.Fatalf("first Sync: %v", err)
		}
		if got := mgrServerPod(t, srv).Status.Message; got != "x" {
			t.Fatalf("server message %q", got)
		}
	})
}

// TestForgottenPodIsNotPatched: a pod forgotten (its deletion seen by the watch) after
// Run's sync pass claimed it, but before its turn came, is not sent.
func TestForgottenPodIsNotPatched(t *testing.T) {
	srv := statustest.NewServer()
	var m *Manager
	names := map[string]types.UID{}
	var patched []string
	c := &mgrHookClient{Server: srv, beforePatch: func(name string) error {
		patched = append(patched, name)
		if len(patched) == 1 { // the other pod's deletion arrives during this PATCH
			for n, uid := range names {
				if n != name {
					m.ForgetPod(context.Background(), uid)
				}
			}
		}
		return nil
	}}
	m = NewManager(c, Options{Clock: clocktesting.NewFakeClock(mgrT0)}) // Workers 1: one pod after the other
	for _, name := range []string{"a", "b"} {
		p := mgrPod()
		p.Name, p.UID = name, types.UID("uid-"+name)
		names[name] = p.UID
		m.ObservePod(context.Background(), mgrCreate(t, srv, p))
		mgrSet(t, m, p, v1.PodStatus{Message: "x"})
	}
	if next := dispatchAndRun(m); !next.IsZero() {
		t.Fatalf("a retry is due at %v", next)
	}
	if len(patched) != 1 {
		t.Fatalf("PATCHes for %v: the forgotten pod was patched", patched)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.dirty) != 0 || len(m.pods) != 1 {
		t.Fatalf("%d dirty, %d cached, want 0 and 1", len(m.dirty), len(m.pods))
	}
}

// TestFailedSyncWakesRun: when a Sync fails, Run retries at the pod's backoff deadline (1s
// here), not at its next tick (10s). Run starts while the Sync holds the pod, so its own
// pass skips it and it sleeps with no retry timer armed.
func TestFailedSyncWakesRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := statustest.NewServer()
		entered, release := make(chan struct{}, 1), make(chan struct{})
		var calls atomic.Int32
		c := &mgrHookClient{Server: srv, beforePatch: func(string) error {
			if calls.Add(1) == 1 {
				entered <- struct{}{}
				<-release
				return statustest.InternalError()
			}
			return nil
		}}
		ev := newMgrEvents()
		m := NewManager(c, Options{Observer: ev.observer(), Retry: RetryOptions{Base: time.Second, Jitter: -1}})
		m.ObservePod(context.Background(), mgrCreate(t, srv, mgrPod()))
		mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "x"})
		failed := make(chan error, 1)
		go func() { failed <- m.Sync(context.Background()) }()
		mgrAwait(t, entered, "Sync's PATCH")
		mgrRun(t, m)
		synctest.Wait() // Run has passed over the pod Sync holds and sleeps
		close(release)
		if err := mgrAwait(t, failed, "Sync's failure"); err == nil {
			t.Fatal("Sync did not fail")
		}
		start := time.Now()
		mgrAwait(t, ev.synced, "Run's retry")
		if d := time.Since(start); d != time.Second {
			t.Fatalf("Run retried %v after the failed Sync, want at the 1s backoff deadline (its tick is every %v)", d, DefaultSyncPeriod)
		}
		if got := mgrServerPod(t, srv).Status.Message; got != "x" {
			t.Fatalf("server message %q", got)
		}
	})
}

// TestRunLifecycle: Run returns nil when its context ends, and a second Run of the same
// Manager while the first runs is an error, not a second loop.
func TestRunLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewManager(statustest.NewServer(), Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		synctest.Wait()
		if err := m.Run(context.Background()); err == nil || err.Error() != "status: Run: already running" {
			t.Errorf("second Run: %v, want status: Run: already running", err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel: %v, want nil", err)
		}
		// Stopped, it may run again.
		ctx2, cancel2 := context.WithCancel(context.Background())
		cancel2()
		if err := m.Run(ctx2); err != nil {
			t.Errorf("Run again: %v, want nil", err)
		}
	})
}

// dispatchAndRun does one pass of Run on the calling goroutine: it claims what is due
// (dispatch) and sends the claimed pods one after the other, as one worker would. It
// returns what dispatch returned as Run's next wake-up.
func dispatchAndRun(m *Manager) time.Time {
	q := &runQueue{wake: make(chan struct{}, 1)}
	next, probe := m.dispatch(q)
	for _, e := range q.jobs {
		m.runJob(context.Background(), e)
	}
	if probe != nil {
		m.runJob(context.Background(), probe)
		m.mu.Lock()
		m.probes--
		m.mu.Unlock()
	}
	return next
}
