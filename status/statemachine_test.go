package status

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/status/statustest"
)

const mgrGate = v1.PodConditionType("example.com/gate")

// mgrMachine drives a Manager and a statustest server with random operations: status
// changes, container readiness flips, gate writes by another controller, faults,
// deletions, recreations, watch events and syncs.
type mgrMachine struct {
	srv   *statustest.Server
	m     *Manager
	fc    *clocktesting.FakeClock
	names []string
	// terminalSeen records, per UID, the first terminal phase seen on the server.
	terminalSeen map[types.UID]v1.PodPhase
	// gate is the last gate status the other controller wrote, per UID.
	gate map[types.UID]v1.ConditionStatus
	// seen is the server's conditions at the last check, per UID.
	seen map[types.UID][]v1.PodCondition
	n    int
	// running is what CouldHaveRunningContainers answers.
	running bool
}

func newMgrMachine(t *rapid.T) *mgrMachine {
	fc := clocktesting.NewFakeClock(mgrT0)
	srv := statustest.NewServer()
	mm := &mgrMachine{
		srv: srv, fc: fc, names: []string{"a", "b", "c"},
		terminalSeen: map[types.UID]v1.PodPhase{},
		gate:         map[types.UID]v1.ConditionStatus{}, seen: map[types.UID][]v1.PodCondition{},
	}
	mm.m = NewManager(srv, Options{Clock: fc, Retry: RetryOptions{Seed: ptr.To[uint64](1)},
		CouldHaveRunningContainers: func(*v1.Pod) bool { return mm.running }})
	for _, n := range mm.names {
		if _, err := srv.Create(mgrMachinePod(n)); err != nil {
			t.Fatal(err)
		}
	}
	return mm
}

func mgrMachinePod(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: v1.PodSpec{
			RestartPolicy:  v1.RestartPolicyAlways,
			Containers:     []v1.Container{{Name: "c1"}, {Name: "c2"}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: mgrGate}},
		},
	}
}

func (mm *mgrMachine) pod(t *rapid.T) (*v1.Pod, bool) {
	name := rapid.SampledFrom(mm.names).Draw(t, "pod")
	p, err := mm.srv.Peek("ns", name)
	return p, err == nil
}

// expectKnown fails on an error of SetContainerReadiness/SetContainerStartup other than
// the two a random sequence provokes: a pod the Manager has forgotten (orphaned, dropped)
// and a container ID no status carries yet.
func (mm *mgrMachine) expectKnown(t *rapid.T, err error) {
	if err != nil && !errors.Is(err, ErrPodNotFound) && !errors.Is(err, ErrContainerNotFound) {
		t.Fatalf("unexpected error: %v", err)
	}
}

func (mm *mgrMachine) now() metav1.Time { return metav1.NewTime(mm.fc.Now()) }

// set sends a status the kubelet could generate: conditions from the readiness engine
// against the server's gate, a message naming the pod's UID.
func (mm *mgrMachine) set(t *rapid.T) {
	p, ok := mm.pod(t)
	if !ok {
		return
	}
	// Any phase, even after a terminal one: the Manager must keep a terminal phase final.
	phase := rapid.SampledFrom([]v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodRunning, v1.PodSucceeded, v1.PodFailed}).Draw(t, "phase")
	var statuses []v1.ContainerStatus
	for _, c := range []string{"c1", "c2"} {
		cs := v1.ContainerStatus{Name: c, ContainerID: "test://" + c, Ready: rapid.Bool().Draw(t, "ready")}
		if terminal(phase) {
			cs.Ready = false
			cs.State = mgrTerminated(int32(rapid.IntRange(0, 1).Draw(t, "exit")))
		} else {
			cs.State = mgrRunning()
		}
		statuses = append(statuses, cs)
	}
	cur, _ := mm.m.GetPodStatus(p.UID)
	if old := cur.ContainerStatuses; terminal(phase) && len(old) == 2 {
		// Keep terminated containers as they were: the kubelet never rewrites them.
		for i := range old {
			if old[i].State.Terminated != nil {
				statuses[i] = old[i]
			}
		}
	}
	r, err := readiness.Evaluate(readiness.Input{Pod: p, Phase: phase, ContainerStatuses: statuses, Conditions: p.Status.Conditions})
	if err != nil {
		t.Fatal(err)
	}
	mm.n++
	s := v1.PodStatus{
		Phase:             phase,
		Message:           fmt.Sprintf("uid:%s:%d", p.UID, mm.n),
		ContainerStatuses: statuses,
		Conditions:        append([]v1.PodCondition{mgrCond(v1.PodScheduled, v1.ConditionTrue)}, r.Conditions()...),
	}
	if err := mm.m.SetPodStatus(context.Background(), p, s); err != nil {
		t.Fatalf("SetPodStatus: %v", err)
	}
}

func (mm *mgrMachine) check(t *rapid.T) {
	for _, name := range mm.names {
		p, err := mm.srv.Peek("ns", name)
		if err != nil {
			continue
		}
		s := p.Status
		if terminal(s.Phase) {
			if isTrue(s.Conditions, v1.PodReady) || isTrue(s.Conditions, v1.ContainersReady) {
				t.Fatalf("pod %s: Ready or ContainersReady True in phase %s", name, s.Phase)
			}
			if _, ok := mm.terminalSeen[p.UID]; !ok {
				mm.terminalSeen[p.UID] = s.Phase
			}
		}
		if first, ok := mm.terminalSeen[p.UID]; ok && s.Phase != first {
			t.Fatalf("pod %s went from %s to %s", name, first, s.Phase)
		}
		if s.Message != "" && !strings.HasPrefix(s.Message, "uid:"+string(p.UID)+":") {
			t.Fatalf("pod %s (uid %s) carries a status meant for another pod: %q", name, p.UID, s.Message)
		}
		if want, ok := mm.gate[p.UID]; ok {
			if g := mgrGetCond(s, mgrGate); g == nil || g.Status != want {
				t.Fatalf("pod %s: foreign gate condition %+v, want status %s", name, g, want)
			}
		}
		for _, old := range mm.seen[p.UID] {
			c := mgrGetCond(s, old.Type)
			if c == nil {
				continue
			}
			statusChanged := c.Status != old.Status
			timeChanged := !c.LastTransitionTime.Equal(&old.LastTransitionTime)
			if statusChanged && c.LastTransitionTime.Before(&old.LastTransitionTime) {
				t.Fatalf("pod %s %s: lastTransitionTime went back from %v to %v", name, c.Type, old.LastTransitionTime, c.LastTransitionTime)
			}
			if statusChanged != timeChanged {
				t.Fatalf("pod %s %s: status %s→%s but lastTransitionTime %v→%v", name, c.Type, old.Status, c.Status,
					old.LastTransitionTime, c.LastTransitionTime)
			}
		}
		mm.seen[p.UID] = s.Conditions
	}
}

// quiesce stops the faults, delivers the watch, syncs, and checks that the server holds
// exactly the status the Manager wants for every pod it caches.
func (mm *mgrMachine) quiesce(t *rapid.T) {
	mm.srv.ClearFaults()
	for _, name := range mm.names {
		if p, err := mm.srv.Peek("ns", name); err == nil {
			mm.m.ObservePod(context.Background(), p)
		}
	}
	if err := mm.m.Sync(context.Background()); err != nil {
		t.Fatalf("Sync after faults stopped: %v", err)
	}
	now := mm.now()
	for _, name := range mm.names {
		p, err := mm.srv.Peek("ns", name)
		if err != nil {
			continue
		}
		cached, ok := mm.m.GetPodStatus(p.UID)
		if !ok {
			continue
		}
		merged, err := Merge(MergeInput{Server: p, Status: cached, Now: now, CouldHaveRunningContainers: mm.running})
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		// Condition order is not compared: like the kubelet, the Manager does not send a
		// pure reorder (it sorts foreign conditions first only when it writes anyway).
		server := *p.Status.DeepCopy()
		sortConds(server.Conditions)
		sortConds(merged.Conditions)
		if patch, unchanged := PatchBytes(p.UID, server, merged); !unchanged {
			t.Fatalf("pod %s: server differs from the desired status: %s", name, patch)
		}
		if terminal(p.Status.Phase) || terminal(cached.Phase) || mgrGetCond(cached, v1.PodReady) == nil {
			continue // Ready is forced False, held back with the phase, or not reported
		}
		r, err := readiness.Evaluate(readiness.Input{Pod: p, Phase: p.Status.Phase, ContainerStatuses: p.Status.ContainerStatuses, Conditions: p.Status.Conditions})
		if err != nil {
			t.Fatal(err)
		}
		if got := mgrGetCond(p.Status, v1.PodReady); got == nil || got.Status != r.Ready.Status || got.Message != r.Ready.Message {
			t.Fatalf("pod %s: Ready %+v, engine says %+v", name, got, r.Ready)
		}
	}
}

func TestManagerStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mm := newMgrMachine(t)
		step := func(f func(*rapid.T)) func(*rapid.T) {
			return func(t *rapid.T) {
				mm.fc.Step(time.Second) // whole seconds: every transition gets a new time
				f(t)
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"":    mm.check,
			"set": step(mm.set),
			"readiness": step(func(t *rapid.T) {
				if p, ok := mm.pod(t); ok {
					c := rapid.SampledFrom([]string{"c1", "c2"}).Draw(t, "container")
					mm.expectKnown(t, mm.m.SetContainerReadiness(context.Background(), p.UID, "test://"+c, rapid.Bool().Draw(t, "ready")))
				}
			}),
			"gate": step(func(t *rapid.T) {
				p, ok := mm.pod(t)
				if !ok {
					return
				}
				st := rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}).Draw(t, "gate")
				c := v1.PodCondition{Type: mgrGate, Status: st, LastTransitionTime: mm.now()}
				if old := mgrGetCond(p.Status, mgrGate); old != nil && old.Status == st {
					c.LastTransitionTime = old.LastTransitionTime
				}
				got, err := mm.srv.SetCondition("ns", p.Name, c)
				if err != nil {
					t.Fatal(err)
				}
				mm.gate[p.UID] = st
				if rapid.Bool().Draw(t, "watch delivers") {
					mm.m.ObservePod(context.Background(), got)
				}
			}),
			// The node lifecycle controller marks a ready pod not ready (kubernetes#119514).
			"node controller": step(func(t *rapid.T) {
				p, ok := mm.pod(t)
				if !ok || !isTrue(p.Status.Conditions, v1.PodReady) {
					return
				}
				got, err := mm.srv.SetCondition("ns", p.Name, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse,
					Reason: "NodeNotReady", LastTransitionTime: mm.now()})
				if err != nil {
					t.Fatal(err)
				}
				if rapid.Bool().Draw(t, "watch delivers") {
					mm.m.ObservePod(context.Background(), got)
				}
			}),
			"startup": step(func(t *rapid.T) {
				if p, ok := mm.pod(t); ok {
					c := rapid.SampledFrom([]string{"c1", "c2"}).Draw(t, "container")
					mm.expectKnown(t, mm.m.SetContainerStartup(context.Background(), p.UID, "test://"+c, rapid.Bool().Draw(t, "started")))
				}
			}),
			"containers may run": step(func(t *rapid.T) { mm.running = rapid.Bool().Draw(t, "running") }),
			"orphans": step(func(t *rapid.T) {
				keep := map[types.UID]bool{}
				for _, n := range mm.names {
					if p, err := mm.srv.Peek("ns", n); err == nil {
						keep[p.UID] = true
					}
				}
				mm.m.RemoveOrphanedStatuses(context.Background(), keep)
			}),
			"observe": step(func(t *rapid.T) {
				if p, ok := mm.pod(t); ok {
					mm.m.ObservePod(context.Background(), p)
				}
			}),
			"fault": step(func(t *rapid.T) {
				verb := rapid.SampledFrom([]statustest.Verb{statustest.VerbGet, statustest.VerbPatch}).Draw(t, "verb")
				errs := []error{statustest.Conflict("x"), statustest.TooManyRequests(2), statustest.InternalError(),
					statustest.Timeout(), statustest.ServiceUnavailable()}
				err := rapid.SampledFrom(errs).Draw(t, "err")
				after := verb == statustest.VerbPatch && rapid.Bool().Draw(t, "after write")
				for i := rapid.IntRange(1, 3).Draw(t, "n"); i > 0; i-- {
					mm.srv.Script(verb, statustest.Fault{Err: err, AfterWrite: after})
				}
			}),
			"delete": step(func(t *rapid.T) {
				if p, ok := mm.pod(t); ok {
					_ = mm.srv.Delete("ns", p.Name)
				}
			}),
			"recreate": step(func(t *rapid.T) {
				name := rapid.SampledFrom(mm.names).Draw(t, "pod")
				if _, err := mm.srv.Recreate("ns", name); err != nil {
					if _, err := mm.srv.Create(mgrMachinePod(name)); err != nil {
						t.Fatal(err)
					}
				}
			}),
			"terminate": step(func(t *rapid.T) {
				if p, ok := mm.pod(t); ok {
					if err := mm.m.TerminatePod(context.Background(), p); err != nil {
						t.Fatalf("TerminatePod: %v", err)
					}
				}
			}),
			"sync":    step(func(*rapid.T) { _ = mm.m.Sync(context.Background()) }),
			"quiesce": step(mm.quiesce),
		})
		mm.fc.Step(time.Second)
		mm.quiesce(t)
		mm.check(t)
	})
}

func sortConds(c []v1.PodCondition) {
	sort.SliceStable(c, func(i, j int) bool { return c[i].Type < c[j].Type })
}
