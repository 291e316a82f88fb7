package status

import (
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// mgrEvents is an Observer that reports events on channels, so tests of Run wait for
// events instead of sleeping.
type mgrEvents struct {
	NopObserver
	synced  chan PodRef
	retried chan time.Duration
}

func newMgrEvents() *mgrEvents {
	return &mgrEvents{synced: make(chan PodRef, 100), retried: make(chan time.Duration, 100)}
}

func (o *mgrEvents) OnSynced(p PodRef, _ time.Duration) { o.synced <- p }

func (o *mgrEvents) OnRetry(_ PodRef, _ int, d time.Duration, _ error) { o.retried <- d }

// mgrAwait waits for an event; the wall-clock limit only turns a hang into a failure.
func mgrAwait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
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
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// TestRunIsEventDriven: a change is sent without the clock moving (no 10 s resync).
func TestRunIsEventDriven(t *testing.T) {
	f := newMgrFake()
	ev := newMgrEvents()
	m, _ := mgrWithFake(t, f, Options{Observer: ev})
	m.ObservePod(f.put(mgrPod()))
	mgrRun(t, m)
	mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "hello"})
	mgrAwait(t, ev.synced, "sync")
	if got := f.get("new", "foo").Status.Message; got != "hello" {
		t.Fatalf("server message %q", got)
	}
}

// TestRunGateChangeIsEventDriven: a readiness gate flipped by another controller reaches
// Ready through ObservePod alone, with the fake clock never stepped.
func TestRunGateChangeIsEventDriven(t *testing.T) {
	gate := v1.PodConditionType("example.com/gate")
	pod := mgrPod()
	pod.Spec.Containers = []v1.Container{{Name: "c"}}
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
	pod.Status.Conditions = []v1.PodCondition{mgrCond(gate, v1.ConditionFalse)}
	f := newMgrFake()
	stored := f.put(pod)
	ev := newMgrEvents()
	m, _ := mgrWithFake(t, f, Options{Observer: ev})
	m.ObservePod(stored)
	mgrSet(t, m, stored, v1.PodStatus{
		Phase:             v1.PodRunning,
		ContainerStatuses: []v1.ContainerStatus{{Name: "c", Ready: true, State: mgrRunning()}},
		Conditions: []v1.PodCondition{mgrCond(v1.ContainersReady, v1.ConditionTrue),
			{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ReadinessGatesNotReady"}},
	})
	mgrRun(t, m)
	mgrAwait(t, ev.synced, "first sync")
	p := f.get("new", "foo")
	p.Status.Conditions[0].Status = v1.ConditionTrue
	m.ObservePod(f.put(p))
	mgrAwait(t, ev.synced, "sync after the gate change")
	if c := mgrGetCond(f.get("new", "foo").Status, v1.PodReady); c.Status != v1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}
}

// TestRunRetriesWithBackoff: a failed sync is retried when its backoff expires on the
// fake clock, and not before.
func TestRunRetriesWithBackoff(t *testing.T) {
	f := newMgrFake()
	ev := newMgrEvents()
	m, fc := mgrWithFake(t, f, Options{Observer: ev, Retry: RetryOptions{Base: 2 * time.Second, Jitter: -1}})
	m.ObservePod(f.put(mgrPod()))
	failing := true
	var mu sync.Mutex
	f.fail = func(verb string) error {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return apierrors.NewInternalError(context.DeadlineExceeded)
		}
		return nil
	}
	mgrRun(t, m)
	mgrSet(t, m, mgrPod(), v1.PodStatus{Message: "x"})
	if d := mgrAwait(t, ev.retried, "first failure"); d != 2*time.Second {
		t.Fatalf("delay %v", d)
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	// Wait until Run sleeps on its retry timer as well as its ticker, then fire the timer.
	for fc.Waiters() < 2 {
		time.Sleep(time.Millisecond) // yield to Run; not a timing assertion
	}
	fc.Step(2 * time.Second)
	mgrAwait(t, ev.synced, "sync after backoff")
	if got := f.get("new", "foo").Status.Message; got != "x" {
		t.Fatalf("server message %q", got)
	}
}
