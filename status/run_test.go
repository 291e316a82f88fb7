package status

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/status/statustest"
)

// mgrEvents is an Observer that reports events on channels, so tests of Run wait for
// events instead of sleeping.
type mgrEvents struct {
	NopObserver
	synced    chan PodRef
	retried   chan time.Duration
	conflicts []PodRef
}

func newMgrEvents() *mgrEvents {
	return &mgrEvents{synced: make(chan PodRef, 100), retried: make(chan time.Duration, 100)}
}

func (o *mgrEvents) OnConflict(p PodRef) { o.conflicts = append(o.conflicts, p) }

func (o *mgrEvents) OnSynced(p PodRef, _ time.Duration) { o.synced <- p }

func (o *mgrEvents) OnRetry(_ PodRef, _ int, d time.Duration, _ error) { o.retried <- d }

// mgrAwait waits for an event. There is no wall-clock limit: a hang is reported by the
// test binary's -timeout, with every goroutine's stack.
func mgrAwait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	t.Logf("waiting for %s", what)
	return <-ch
}

// mgrWaitForWaiters yields until Run sleeps on n fake-clock waiters (its ticker, plus its
// retry timer when one is armed).
func mgrWaitForWaiters(fc interface{ Waiters() int }, n int) {
	for fc.Waiters() < n {
		runtime.Gosched()
	}
}

func mgrRun(t *testing.T, m *Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := m.Run(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// TestRunIsEventDriven: a change is sent without the clock moving (no 10 s resync).
func TestRunIsEventDriven(t *testing.T) {
	srv := statustest.NewServer()
	ev := newMgrEvents()
	m, _ := mgrWithServer(t, srv, Options{Observer: ev})
	m.ObservePod(mgrCreate(t, srv, mgrPod()))
	mgrRun(t, m)
	mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "hello"})
	mgrAwait(t, ev.synced, "sync")
	if got := mgrServerPod(t, srv).Status.Message; got != "hello" {
		t.Fatalf("server message %q", got)
	}
}

// TestRunGateChangeIsEventDriven: a readiness gate flipped by another controller reaches
// Ready through ObservePod alone, with the fake clock never stepped.
func TestRunGateChangeIsEventDriven(t *testing.T) {
	pod, st := mgrGatedPod()
	srv := statustest.NewServer()
	stored := mgrCreate(t, srv, pod)
	ev := newMgrEvents()
	m, _ := mgrWithServer(t, srv, Options{Observer: ev})
	m.ObservePod(stored)
	mgrSet(t, m, stored, st)
	mgrRun(t, m)
	mgrAwait(t, ev.synced, "first sync")
	p, err := srv.SetCondition("new", "foo", mgrCond("example.com/gate", v1.ConditionTrue))
	if err != nil {
		t.Fatal(err)
	}
	m.ObservePod(p)
	mgrAwait(t, ev.synced, "sync after the gate change")
	if c := mgrGetCond(mgrServerPod(t, srv).Status, v1.PodReady); c.Status != v1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}
}

// TestRunRetriesWithBackoff: a failed sync is retried when its backoff expires on the
// fake clock, and not before.
func TestRunRetriesWithBackoff(t *testing.T) {
	srv := statustest.NewServer()
	ev := newMgrEvents()
	m, fc := mgrWithServer(t, srv, Options{Observer: ev, Retry: RetryOptions{Base: 2 * time.Second, Jitter: -1}})
	m.ObservePod(mgrCreate(t, srv, mgrPod()))
	srv.FailNext(statustest.VerbPatch, 1, statustest.ServerTimeout(statustest.VerbPatch))
	mgrRun(t, m)
	mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "x"})
	if d := mgrAwait(t, ev.retried, "first failure"); d != 2*time.Second {
		t.Fatalf("delay %v", d)
	}
	// Wait until Run sleeps on its retry timer as well as its ticker, then fire the timer.
	mgrWaitForWaiters(fc, 2)
	if got := srv.Requests(statustest.VerbPatch); got != 1 {
		t.Fatalf("%d PATCHes before the backoff expired", got)
	}
	fc.Step(2 * time.Second)
	mgrAwait(t, ev.synced, "sync after backoff")
	if got := mgrServerPod(t, srv).Status.Message; got != "x" {
		t.Fatalf("server message %q", got)
	}
}
