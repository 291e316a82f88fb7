package status_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/sandbox"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

// syncWorld is a node agent's view of one pod: a Manager with a Deleter, an in-memory API
// server, and the runtime's facts the test changes.
type syncWorld struct {
	t     *testing.T
	srv   *statustest.Server
	clock *clocktesting.FakeClock
	m     *status.Manager
}

func newSyncWorld(t *testing.T, deleter bool, pods ...*v1.Pod) *syncWorld {
	t.Helper()
	w := &syncWorld{t: t, srv: statustest.NewServer(pods...), clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	seed := uint64(1)
	opts := status.Options{Clock: w.clock, Retry: status.RetryOptions{Seed: &seed}}
	if deleter {
		opts.Deleter = w.srv
	}
	w.m = status.NewManager(w.srv, opts)
	return w
}

// server returns the server's copy of the pod.
func (w *syncWorld) server(name string) *v1.Pod {
	w.t.Helper()
	p, err := w.srv.Peek("ns", name)
	if err != nil {
		w.t.Fatalf("server copy of %s: %v", name, err)
	}
	return p
}

// step is one SyncPod and one Sync, as an agent's worker and the Manager's Run do them.
func (w *syncWorld) step(pod *v1.Pod, facts podstate.Input, stopped bool) v1.PodStatus {
	w.t.Helper()
	s, err := w.m.SyncPod(context.Background(), status.SyncPodInput{Pod: pod, Runtime: facts.Runtime, Stopped: stopped, CouldHaveRunningContainers: !stopped})
	if err != nil {
		w.t.Fatalf("SyncPod: %v", err)
	}
	if err := w.m.Sync(context.Background()); err != nil {
		w.t.Fatalf("Sync: %v", err)
	}
	w.clock.Step(time.Second)
	return s
}

func syncPodSpec(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{NodeName: "node", Containers: []v1.Container{{Name: "app", Image: "app:1"}}},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}
}

var (
	readySandbox = []sandbox.Status{{ID: "sb1", Ready: true, IP: "10.0.0.7"}}
	running      = podstate.Container{Name: "app", ContainerID: "containerd://a1", State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}}}
	exited       = podstate.Container{Name: "app", ContainerID: "containerd://a1", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}
)

func condStatus(s v1.PodStatus, t v1.PodConditionType) v1.ConditionStatus {
	if c := conditions.Get(s.Conditions, t); c != nil {
		return c.Status
	}
	return ""
}

func TestSyncPodRunsAPodToReady(t *testing.T) {
	w := newSyncWorld(t, true, syncPodSpec("p1"))
	s := w.step(w.server("p1"), podstate.Input{Runtime: podstate.Runtime{Sandboxes: readySandbox, Containers: []podstate.Container{running}}}, false)
	if s.Phase != v1.PodRunning || condStatus(s, v1.PodReady) != v1.ConditionTrue {
		t.Fatalf("generated status: phase %s, Ready %s; want Running, True", s.Phase, condStatus(s, v1.PodReady))
	}
	got := w.server("p1").Status
	if got.Phase != v1.PodRunning || condStatus(got, v1.PodReady) != v1.ConditionTrue || got.PodIP != "10.0.0.7" {
		t.Fatalf("server status: phase %s, Ready %s, IP %q; want Running, True, 10.0.0.7", got.Phase, condStatus(got, v1.PodReady), got.PodIP)
	}
	// The same facts again: nothing new to send.
	before := w.srv.Requests(statustest.VerbPatch)
	w.step(w.server("p1"), podstate.Input{Runtime: podstate.Runtime{Sandboxes: readySandbox, Containers: []podstate.Container{running}}}, false)
	if n := w.srv.Requests(statustest.VerbPatch) - before; n != 0 {
		t.Errorf("unchanged facts sent %d PATCHes, want 0", n)
	}
	if n := w.srv.Requests(statustest.VerbGet); n != 0 {
		t.Errorf("%d GETs, want 0 (SyncPod observes the pod it is given)", n)
	}
}

// TestSyncPodDeletesAfterTerminalStatus is the kubelet's order for a graceful deletion:
// containers stopped, terminal phase and Ready False on the server, then one
// UID-preconditioned DELETE.
func TestSyncPodDeletesAfterTerminalStatus(t *testing.T) {
	for _, withDeleter := range []bool{true, false} {
		name := map[bool]string{true: "deleter", false: "no deleter"}[withDeleter]
		t.Run(name, func(t *testing.T) {
			w := newSyncWorld(t, withDeleter, syncPodSpec("p1"))
			facts := podstate.Input{Runtime: podstate.Runtime{Sandboxes: readySandbox, Containers: []podstate.Container{running}}}
			w.step(w.server("p1"), facts, false)

			deleting, err := w.srv.Update("ns", "p1", func(p *v1.Pod) {
				ts := metav1.NewTime(w.clock.Now())
				p.DeletionTimestamp = &ts
			})
			if err != nil {
				t.Fatal(err)
			}
			// The runtime kills the container; the pod worker is done with the pod.
			stopped := podstate.Input{Runtime: podstate.Runtime{Sandboxes: []sandbox.Status{{ID: "sb1"}}, Containers: []podstate.Container{exited}, Terminal: true}}
			var onServer []v1.PodStatus
			w.srv.OnWrite(func(ev statustest.Event) {
				if ev.Pod != nil {
					onServer = append(onServer, ev.Pod.Status)
				}
			})
			w.step(deleting, stopped, true)

			if len(onServer) == 0 {
				t.Fatal("no write reached the server")
			}
			last := onServer[len(onServer)-1]
			if last.Phase != v1.PodSucceeded || condStatus(last, v1.PodReady) != v1.ConditionFalse {
				t.Errorf("last status on the server: phase %s, Ready %s; want Succeeded, False", last.Phase, condStatus(last, v1.PodReady))
			}
			_, err = w.srv.Peek("ns", "p1")
			if withDeleter {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("pod still on the server after its terminal status: %v", err)
				}
				if n := w.srv.Requests(statustest.VerbDelete); n != 1 {
					t.Errorf("%d DELETEs, want 1", n)
				}
				// A late watch event of the deleted pod changes nothing and sends nothing.
				s, err := w.m.SyncPod(context.Background(), status.SyncPodInput{Pod: deleting, Runtime: podstate.Runtime{Containers: []podstate.Container{exited}, Terminal: true}, Stopped: true})
				if err != nil || s.Phase != v1.PodSucceeded {
					t.Errorf("SyncPod after the DELETE: %s, %v; want the last status", s.Phase, err)
				}
				if err := w.m.Sync(context.Background()); err != nil {
					t.Fatal(err)
				}
				if n := w.srv.Requests(statustest.VerbDelete); n != 1 {
					t.Errorf("%d DELETEs after a late event, want still 1", n)
				}
			} else {
				if err != nil {
					t.Errorf("pod deleted without a Deleter: %v", err)
				}
				if n := w.srv.Requests(statustest.VerbDelete); n != 0 {
					t.Errorf("%d DELETEs without a Deleter", n)
				}
			}
		})
	}
}

// A pod that finished before it was deleted (a Job's pod) has its terminal status on the
// server already: the deletionTimestamp alone, seen in a watch event, leads to the DELETE.
func TestSyncPodDeletesAFinishedPodOnceDeleted(t *testing.T) {
	w := newSyncWorld(t, true, syncPodSpec("p1"))
	w.step(w.server("p1"), podstate.Input{Runtime: podstate.Runtime{Sandboxes: readySandbox, Containers: []podstate.Container{running}}}, false)
	done := podstate.Input{Runtime: podstate.Runtime{Sandboxes: []sandbox.Status{{ID: "sb1"}}, Containers: []podstate.Container{exited}, Terminal: true}}
	w.step(w.server("p1"), done, true)
	if p := w.server("p1"); p.Status.Phase != v1.PodSucceeded {
		t.Fatalf("phase %s on the server, want Succeeded", p.Status.Phase)
	}
	if n := w.srv.Requests(statustest.VerbDelete); n != 0 {
		t.Fatalf("%d DELETEs of a pod nobody deleted", n)
	}
	deleting, err := w.srv.Update("ns", "p1", func(p *v1.Pod) {
		ts := metav1.NewTime(w.clock.Now())
		p.DeletionTimestamp = &ts
	})
	if err != nil {
		t.Fatal(err)
	}
	w.m.ObservePod(context.Background(), deleting) // the watch event, without new facts
	if err := w.m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.srv.Peek("ns", "p1"); !apierrors.IsNotFound(err) {
		t.Fatalf("pod not deleted: %v", err)
	}
	if n := w.srv.Requests(statustest.VerbPatch); n != 2 {
		t.Errorf("%d PATCHes, want 2 (Running, Succeeded): the deletion needs none", n)
	}
}

func TestSyncPodDeleteErrors(t *testing.T) {
	t.Run("5xx is retried", func(t *testing.T) {
		w := newSyncWorld(t, true, syncPodSpec("p1"))
		deleting, _ := w.srv.Update("ns", "p1", func(p *v1.Pod) { ts := metav1.NewTime(w.clock.Now()); p.DeletionTimestamp = &ts })
		w.srv.FailNext(statustest.VerbDelete, 1, statustest.InternalError())
		_, err := w.m.SyncPod(context.Background(), status.SyncPodInput{Pod: deleting, Runtime: podstate.Runtime{Terminal: true}, Stopped: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.m.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "delete pod") {
			t.Fatalf("Sync = %v, want the DELETE's error", err)
		}
		if err := w.m.Sync(context.Background()); err != nil {
			t.Fatalf("second Sync: %v", err)
		}
		if _, err := w.srv.Peek("ns", "p1"); !apierrors.IsNotFound(err) {
			t.Fatalf("pod not deleted after the retry: %v", err)
		}
		if n := w.srv.Requests(statustest.VerbDelete); n != 2 {
			t.Errorf("%d DELETEs, want 2", n)
		}
	})
	t.Run("recreated pod is never deleted", func(t *testing.T) {
		w := newSyncWorld(t, true, syncPodSpec("p1"))
		deleting, _ := w.srv.Update("ns", "p1", func(p *v1.Pod) { ts := metav1.NewTime(w.clock.Now()); p.DeletionTimestamp = &ts })
		_, err := w.m.SyncPod(context.Background(), status.SyncPodInput{Pod: deleting, Runtime: podstate.Runtime{Terminal: true}, Stopped: true})
		if err != nil {
			t.Fatal(err)
		}
		// The terminal PATCH lands, then the name is taken by a new pod before the DELETE:
		// the UID precondition answers 409.
		w.srv.FailNext(statustest.VerbDelete, 1, apierrors.NewConflict(v1.Resource("pods"), "p1", nil))
		if err := w.m.Sync(context.Background()); err != nil {
			t.Fatalf("Sync: %v (a 409 on the DELETE ends the work on the pod)", err)
		}
		if err := w.m.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := w.srv.Requests(statustest.VerbDelete); n != 1 {
			t.Errorf("%d DELETEs, want 1: a 409 is final", n)
		}
	})
}

func TestSyncPodInputErrors(t *testing.T) {
	w := newSyncWorld(t, true)
	if _, err := w.m.SyncPod(context.Background(), status.SyncPodInput{}); err == nil || !strings.HasPrefix(err.Error(), "status: SyncPod: ") {
		t.Errorf("nil pod: %v, want an error starting with status: SyncPod:", err)
	}
	pod := syncPodSpec("p1")
	in := status.SyncPodInput{Pod: pod, Runtime: podstate.Runtime{Containers: []podstate.Container{running, running}}}
	if _, err := w.m.SyncPod(context.Background(), in); err == nil || !strings.HasPrefix(err.Error(), "status: SyncPod: ") {
		t.Errorf("two facts for one container: %v, want an error", err)
	}
	if _, ok := w.m.GetPodStatus(pod.UID); ok {
		t.Errorf("a status was cached from facts that were rejected")
	}
}

func TestSyncPodInputErrorsMatchErrInvalidInput(t *testing.T) {
	w := newSyncWorld(t, false)
	_, err := w.m.SyncPod(context.Background(), status.SyncPodInput{})
	if !errors.Is(err, podstatus.ErrInvalidInput) {
		t.Errorf("nil pod: %v does not match podstatus.ErrInvalidInput", err)
	}
	in := status.SyncPodInput{Pod: syncPodSpec("p1"), Runtime: podstate.Runtime{Containers: []podstate.Container{running, running}}}
	if _, err := w.m.SyncPod(context.Background(), in); !errors.Is(err, podstatus.ErrInvalidInput) {
		t.Errorf("two facts for one container: %v does not match podstatus.ErrInvalidInput", err)
	}
}
