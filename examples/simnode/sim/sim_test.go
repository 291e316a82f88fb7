package sim

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/status/statustest"
)

func runJSON(t *testing.T, cfg Config) []byte {
	t.Helper()
	rep, err := Run(context.Background(), NewMemory(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRunIsDeterministicForASeed(t *testing.T) {
	a := runJSON(t, Config{Seed: 3, Pods: 14})
	b := runJSON(t, Config{Seed: 3, Pods: 14})
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
	if c := runJSON(t, Config{Seed: 4, Pods: 14}); bytes.Equal(a, c) {
		t.Fatal("seeds 3 and 4 gave the same run: the seed is not used")
	}
}

// TestRunOutcomes checks each lifecycle ends where it should and the request budget.
func TestRunOutcomes(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rep, err := Run(context.Background(), NewMemory(), Config{Seed: seed, Pods: 14})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			s := rep.Summary
			if s.RequestsPerChange > 1.05 || s.StatusChanges == 0 {
				t.Errorf("requests per change %.2f over %d changes, want ≤ 1.05", s.RequestsPerChange, s.StatusChanges)
			}
			for _, p := range s.PerPod {
				want := map[Kind]struct{ phase, ready string }{
					KindWeb: {"Running", "True"}, KindSlowSandbox: {"Running", "True"}, KindSandboxRetry: {"Running", "True"},
					KindSandboxCrash: {"Running", "True"}, KindBatch: {"Succeeded", "False"}, KindTerminating: {"Succeeded", "False"},
				}
				if w, ok := want[p.Kind]; ok && (p.Phase != w.phase || p.Ready != w.ready) {
					t.Errorf("%s: phase %s ready %s, want %s %s", p.Name, p.Phase, p.Ready, w.phase, w.ready)
				}
				switch {
				case p.Kind == KindSlowSandbox && p.SandboxLatencySeconds < 12:
					t.Errorf("%s: sandbox latency %ds, want ≥ 12s", p.Name, p.SandboxLatencySeconds)
				case p.Kind == KindSandboxRetry && p.SandboxLatencySeconds < 8:
					t.Errorf("%s: sandbox latency %ds, want ≥ 8s (two failed attempts)", p.Name, p.SandboxLatencySeconds)
				case p.SandboxLatencySeconds < 0 || p.SandboxLatencySeconds > 20:
					t.Errorf("%s: sandbox latency %ds, want 0..20s", p.Name, p.SandboxLatencySeconds)
				}
			}
		})
	}
}

// TestServerInvariantsHoldAtEveryWrite watches every write to the in-memory server: a
// terminal phase is never left and never reported Ready, and the load balancer's gate
// condition is never changed by anyone but the load balancer.
func TestServerInvariantsHoldAtEveryWrite(t *testing.T) {
	mem := NewMemory()
	var mu sync.Mutex
	var problems []string
	terminal := map[string]v1.PodPhase{}
	gates := map[string]v1.PodCondition{}
	writes := 0
	mem.OnWrite(func(e statustest.Event) {
		mu.Lock()
		defer mu.Unlock()
		writes++
		p := e.Pod
		if ph, ok := terminal[p.Name]; ok && p.Status.Phase != ph {
			problems = append(problems, fmt.Sprintf("%s left terminal phase %s for %s", p.Name, ph, p.Status.Phase))
		}
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			terminal[p.Name] = p.Status.Phase
			for _, t := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
				if c := conditions.Get(p.Status.Conditions, t); c != nil && c.Status == v1.ConditionTrue {
					problems = append(problems, fmt.Sprintf("%s is %s with %s True", p.Name, p.Status.Phase, t))
				}
			}
		}
		if g := conditions.Get(p.Status.Conditions, GateType); g != nil {
			gates[p.Name+"/"+p.ResourceVersion] = *g
		}
	})
	// The load balancer's own writes, to tell them from anyone else's.
	lb := map[string]v1.PodCondition{}
	cluster := gateRecorder{Memory: mem, lb: lb, mu: &mu}
	if _, err := Run(context.Background(), cluster, Config{Seed: 9, Pods: 14}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if writes == 0 {
		t.Fatal("no writes observed")
	}
	for _, p := range problems {
		t.Error(p)
	}
	for key, g := range gates {
		name := key[:bytes.IndexByte([]byte(key), '/')]
		w, ok := lb[name+"/"+g.LastTransitionTime.String()+string(g.Status)]
		if !ok || w.Reason != g.Reason {
			t.Errorf("%s: gate %+v on the server was not written by the load balancer", key, g)
		}
	}
}

// gateRecorder records the conditions the load balancer writes.
type gateRecorder struct {
	Memory
	lb map[string]v1.PodCondition
	mu *sync.Mutex
}

func (g gateRecorder) WriteCondition(ctx context.Context, ns, name string, c v1.PodCondition) (*v1.Pod, error) {
	if c.Type == GateType {
		g.mu.Lock()
		g.lb[name+"/"+c.LastTransitionTime.String()+string(c.Status)] = c
		g.mu.Unlock()
	}
	return g.Memory.WriteCondition(ctx, ns, name, c)
}

func TestDigest(t *testing.T) {
	patch := []byte(`{"metadata":{"uid":"u"},"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"conditions":[{"status":"True","type":"Ready"},{"message":null,"type":"ContainersReady"}],"phase":"Running"}}`)
	got := digest(patch)
	want := fmt.Sprintf("%d bytes: conditions,phase [Ready=True ContainersReady=~] phase=Running", len(patch))
	if got != want {
		t.Fatalf("digest = %q, want %q", got, want)
	}
}

// The pods run on podsim: a crash-looping container waits with the kubelet's back-off
// message, and a deleted pod is deleted by the node agent once it terminated.
func TestRunsOnPodsim(t *testing.T) {
	mem := NewMemory()
	var mu sync.Mutex
	backOff := false
	mem.OnWrite(func(e statustest.Event) {
		for _, c := range e.Pod.Status.ContainerStatuses {
			if w := c.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" &&
				strings.HasPrefix(w.Message, "back-off 10s restarting failed container=worker pod=crashloop-2_default(") {
				mu.Lock()
				backOff = true
				mu.Unlock()
			}
		}
	})
	rep, err := Run(context.Background(), mem, Config{Seed: 1, Pods: 14})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !backOff {
		t.Error("no CrashLoopBackOff with podsim's message on the server")
	}
	if rep.Summary.Deletes != 2 {
		t.Errorf("%d pods deleted, want the 2 terminating ones", rep.Summary.Deletes)
	}
	for _, name := range []string{"terminating-6", "terminating-13"} {
		if _, err := mem.Server.Peek("default", name); err == nil {
			t.Errorf("%s is still on the server", name)
		}
	}
}

// A run that ends before every pod was created reports the missing ones without a phase.
func TestShortRuns(t *testing.T) {
	for seconds := 1; seconds <= 9; seconds++ {
		rep, err := Run(context.Background(), NewMemory(), Config{Seed: 1, Seconds: seconds})
		if err != nil {
			t.Fatalf("-seconds %d: %v", seconds, err)
		}
		for _, p := range rep.Summary.PerPod {
			if created := p.Phase != ""; created != (seconds >= int(p.Name[len(p.Name)-1]-'0')*2%10) {
				t.Errorf("-seconds %d: %s has phase %q", seconds, p.Name, p.Phase)
			}
		}
	}
}

// A pod the agent deletes ends its timeline with the conditions of the last status the
// agent wrote and then its DELETE, once, after which nothing of it follows; every
// deleted pod (Summary.Deletes) has one.
func TestDeletedPodsTimelineEndsWithItsDelete(t *testing.T) {
	rep, err := Run(context.Background(), NewMemory(), Config{Seed: 1, Pods: 14, Seconds: 90})
	if err != nil {
		t.Fatal(err)
	}
	deletes := map[string]int{} // pod: index of its delete event
	for i, e := range rep.Timeline {
		if j, ok := deletes[e.Pod]; ok {
			t.Errorf("event %+v after the DELETE of %s (event %d)", e, e.Pod, j)
		}
		if e.What == "delete" {
			deletes[e.Pod] = i
		}
	}
	if len(deletes) != rep.Summary.Deletes || len(deletes) == 0 {
		t.Fatalf("%d delete events, %d DELETEs in the summary; want as many, and some", len(deletes), rep.Summary.Deletes)
	}
	for pod, i := range deletes {
		// The agent's last PATCH made the pod terminal: Ready False before the DELETE, at
		// the same second.
		var ready *Event
		for j := i - 1; j >= 0 && rep.Timeline[j].At == rep.Timeline[i].At; j-- {
			if e := rep.Timeline[j]; e.Pod == pod && e.Condition == string(v1.PodReady) {
				ready = &rep.Timeline[j]
				break
			}
		}
		if ready == nil || ready.Status != string(v1.ConditionFalse) {
			t.Errorf("%s: Ready before its DELETE: %+v, want False at the same second", pod, ready)
		}
	}
	if rep.Summary.InformerGets == 0 {
		t.Error("Summary.InformerGets 0: the reads standing in for the informer are not counted")
	}
}
