package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// Pod Ready++ (readiness gates) against the real server: a load-balancer controller with
// its own clientset owns two gate conditions and writes them while the kubelet (the
// Manager) changes container readiness.

var gates = [2]v1.PodConditionType{"www.example.com/lb-1", "www.example.com/lb-2"}

const (
	// sequentialInterleavings run step by step in an order drawn from the seed, so a
	// failing seed replays exactly.
	sequentialInterleavings = 30
	// concurrentInterleavings run the controller and the kubelet on their own goroutines,
	// with the Manager's Run loop and a watch feeding ObservePod.
	concurrentInterleavings = 10
)

// gateWrite is one write of the load-balancer controller and the resourceVersion the
// server gave it.
type gateWrite struct {
	cond v1.PodCondition
	rv   uint64
}

// lbController writes gate conditions with distinct times, reasons and messages, so
// that any rewrite by the kubelet would show.
type lbController struct {
	e    *env
	name string
	rng  *rand.Rand
	mu   sync.Mutex
	// writes in the order the server accepted them (increasing rv).
	writes []gateWrite
	n      int
	clock  time.Time
}

func (lb *lbController) write() {
	g := gates[lb.rng.IntN(len(gates))]
	st := v1.ConditionFalse
	if lb.rng.IntN(3) > 0 { // True more often than not, so that Ready is often reachable
		st = v1.ConditionTrue
	}
	lb.n++
	lb.clock = lb.clock.Add(time.Duration(1+lb.rng.IntN(5)) * time.Second)
	c := v1.PodCondition{
		Type: g, Status: st, LastTransitionTime: metav1.NewTime(lb.clock),
		Reason:  fmt.Sprintf("LoadBalancer%s", st),
		Message: fmt.Sprintf("write %d of the load-balancer controller: target %s", lb.n, st),
	}
	// No Fatal here: write may run on its own goroutine.
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []v1.PodCondition{c}}})
	if err != nil {
		lb.e.t.Errorf("marshal: %v", err)
		return
	}
	got, err := lb.e.other.CoreV1().Pods(lb.e.ns).Patch(lb.e.ctx, lb.name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
	if err != nil {
		lb.e.t.Errorf("load-balancer controller PATCH %s: %v", body, err)
		return
	}
	rv, err := strconv.ParseUint(got.ResourceVersion, 10, 64)
	if err != nil {
		lb.e.t.Errorf("resourceVersion %q: %v", got.ResourceVersion, err)
		return
	}
	lb.mu.Lock()
	lb.writes = append(lb.writes, gateWrite{cond: c, rv: rv})
	lb.mu.Unlock()
}

// expectedAt returns, for each gate, the controller's last write the server had applied
// at resourceVersion rv (nil if none).
func (lb *lbController) expectedAt(rv uint64) map[v1.PodConditionType]*v1.PodCondition {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	out := map[v1.PodConditionType]*v1.PodCondition{}
	for i := range lb.writes {
		if lb.writes[i].rv <= rv {
			out[lb.writes[i].cond.Type] = &lb.writes[i].cond
		}
	}
	return out
}

// checkGates reports how pod's gate conditions differ from what the controller had
// written at the pod's resourceVersion: each must be exactly the controller's last write
// (status, reason, message, lastTransitionTime, lastProbeTime, observedGeneration), or
// absent if it never wrote that gate.
func (lb *lbController) checkGates(t *testing.T, pod *v1.Pod) []string {
	t.Helper()
	want := lb.expectedAt(rvOf(t, pod.ResourceVersion))
	var diffs []string
	for _, g := range gates {
		got, w := cond(pod, g), want[g]
		switch {
		case w == nil && got != nil:
			diffs = append(diffs, fmt.Sprintf("%s present (%+v) though the controller never wrote it", g, *got))
		case w != nil && got == nil:
			diffs = append(diffs, fmt.Sprintf("%s lost (the controller wrote %+v)", g, *w))
		case w != nil && (got.Status != w.Status || got.Reason != w.Reason || got.Message != w.Message ||
			!got.LastTransitionTime.Equal(&w.LastTransitionTime) || !got.LastProbeTime.Equal(&w.LastProbeTime) ||
			got.ObservedGeneration != w.ObservedGeneration):
			diffs = append(diffs, fmt.Sprintf("%s rewritten: server %+v, controller wrote %+v", g, *got, *w))
		}
	}
	return diffs
}

// patchTouchesGates reports whether a PATCH the Manager sent writes a gate condition
// (naming it in $setElementOrder, which only orders, is allowed).
func patchTouchesGates(t *testing.T, patch []byte) bool {
	t.Helper()
	var p struct {
		Status struct {
			Conditions []struct {
				Type v1.PodConditionType `json:"type"`
			} `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Errorf("patch %s: %v", patch, err)
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == gates[0] || c.Type == gates[1] {
			return true
		}
	}
	return false
}

// TestReadyPlusPlusInterleavings: a pod with two readiness gates. For each seed a
// load-balancer controller (a second clientset) writes the gate conditions while the
// kubelet flips the readiness of the pod's two containers, syncs, and sees the server's
// copy as a watch would (ObservePod), in an interleaving drawn from the seed. After
// everything settles (the kubelet observes the final server copy and syncs):
//
//   - Ready on the server is True exactly when both containers are ready and both gates
//     are True (a missing gate counts as False), and ContainersReady follows the
//     containers;
//   - each gate condition is exactly what the controller last wrote, and so is every
//     copy the server returned to any PATCH of the Manager (never lost, never
//     rewritten), and no PATCH of the Manager writes a gate condition.
func TestReadyPlusPlusInterleavings(t *testing.T) {
	e := newEnv(t, "readyplusplus-", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	begin := time.Now()
	var readyTrue, interleavings int
	for i := range sequentialInterleavings + concurrentInterleavings {
		seed := uint64(i + 1)
		concurrent := i >= sequentialInterleavings
		ok := t.Run(fmt.Sprintf("seed=%d/concurrent=%t", seed, concurrent), func(t *testing.T) {
			if readyPlusPlus(t, e, seed, concurrent) {
				readyTrue++
			}
		})
		interleavings++
		if !ok {
			break
		}
	}
	gets, patches, _ := e.client.counts()
	report(t, "Pod Ready++: %d interleavings (%d sequential, %d concurrent) in %v, Ready True at the end of %d; %d status updates, %d requests (%d GET, %d PATCH): %.2f requests per update",
		interleavings, min(interleavings, sequentialInterleavings), max(interleavings-sequentialInterleavings, 0),
		time.Since(begin).Round(time.Millisecond), readyTrue, e.updates, gets+patches, gets, patches,
		float64(gets+patches)/float64(max(e.updates, 1)))
	if readyTrue == 0 || readyTrue == interleavings {
		t.Errorf("Ready ended True in %d of %d interleavings: the seeds do not exercise both outcomes", readyTrue, interleavings)
	}
}

// readyPlusPlus runs one interleaving on a fresh pod with a fresh Manager (on e's
// client) and reports whether Ready ended True.
func readyPlusPlus(t *testing.T, e *env, seed uint64, concurrent bool) bool {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	name := fmt.Sprintf("lb-%d", seed)
	start := e.now()
	te := *e
	te.t = t
	te.mgr = e.newManager()
	me := &te

	pod := me.newPod(name, "a", "b")
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gates[0]}, {ConditionType: gates[1]}}
	me.schedule(pod, start)
	lb := &lbController{e: me, name: name, rng: rand.New(rand.NewPCG(seed, 0x1b)), clock: start.Add(time.Hour)}

	// Every PATCH of the Manager is checked against the controller's writes, once they
	// are all recorded (a concurrent write may be on the server before the controller
	// has recorded its resourceVersion).
	type sent struct {
		patch []byte
		resp  *v1.Pod
	}
	var hookMu sync.Mutex
	var sentPatches []sent
	e.client.setOnPatch(func(patch []byte, resp *v1.Pod) {
		if resp.Name != name {
			return
		}
		hookMu.Lock()
		sentPatches = append(sentPatches, sent{patch, resp})
		hookMu.Unlock()
	})
	defer e.client.setOnPatch(nil)

	// The kubelet starts the pod: sandbox ready, both containers running, not yet ready.
	sb := []sandbox.Status{readySandbox(0, "10.244.4.5", start)}
	me.at(start.Add(time.Second))
	ids := map[string]string{"a": containerID("a", 0), "b": containerID("b", 0)}
	ready := map[string]bool{"a": false, "b": false}
	me.kubelet(name, runtimeState{phase: v1.PodRunning, sandboxes: sb,
		containers: []v1.ContainerStatus{running("a", 0, start, false), running("b", 0, start, false)}})
	me.sync()
	uid := me.get(name).UID

	var mu sync.Mutex // guards me.updates and ready in the concurrent mode
	flip := func(r *rand.Rand) {
		c := []string{"a", "b"}[r.IntN(2)]
		v := r.IntN(3) > 0
		me.mgr.SetContainerReadiness(context.Background(), uid, ids[c], v)
		mu.Lock()
		ready[c] = v
		me.updates++
		mu.Unlock()
	}
	observe := func() { me.mgr.ObservePod(context.Background(), me.get(name)) }

	lbOps, kOps := 3+rng.IntN(6), 6+rng.IntN(10)
	if !concurrent {
		for lbOps+kOps > 0 {
			if rng.IntN(lbOps+kOps) < lbOps {
				lb.write()
				lbOps--
				continue
			}
			kOps--
			switch r := rng.IntN(10); {
			case r < 5:
				flip(rng)
			case r < 7:
				me.sync()
			case r < 9:
				observe()
			default:
				me.clock.Step(time.Second)
			}
		}
	} else {
		ctx, cancel := context.WithCancel(me.ctx)
		created := me.get(name)
		w := me.watchPod(created, func(p *v1.Pod) { me.mgr.ObservePod(me.ctx, p) })
		runDone := make(chan error, 1)
		go func() { runDone <- me.mgr.Run(ctx) }()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range lbOps {
				lb.write()
			}
		}()
		go func() {
			defer wg.Done()
			kr := rand.New(rand.NewPCG(seed, 0x6b))
			for range kOps {
				flip(kr)
				if kr.IntN(4) == 0 {
					me.clock.Step(time.Second)
				}
			}
		}()
		wg.Wait()
		// Let the watch catch up with the last write and stop it; flush what the loop
		// has not sent yet (Sync waits for a sync in flight), so that stopping the loop
		// cancels no request; then stop the loop.
		w.waitFor(t, me.get(name).ResourceVersion)
		w.stop()
		me.sync()
		cancel()
		if err := <-runDone; err != nil {
			t.Errorf("Run returned %v, want nil once its context is done", err)
		}
	}

	// Settle: the kubelet sees the final server copy (as its watch would) and syncs.
	observe()
	me.sync()
	got := me.get(name)

	containersReady := ready["a"] && ready["b"]
	gatesTrue := true
	final := lb.expectedAt(rvOf(t, got.ResourceVersion))
	for _, g := range gates {
		gatesTrue = gatesTrue && final[g] != nil && final[g].Status == v1.ConditionTrue
	}
	wantReady := v1.ConditionFalse
	if containersReady && gatesTrue {
		wantReady = v1.ConditionTrue
	}
	r, cr := cond(got, v1.PodReady), cond(got, v1.ContainersReady)
	if r == nil || cr == nil {
		t.Fatalf("Ready or ContainersReady missing on the server: %s", condString(got))
	}
	if r.Status != wantReady {
		t.Errorf("Ready on the server is %s (%s: %s), want %s: containers ready %v, gates %v", r.Status, r.Reason, r.Message, wantReady, ready, describeGates(final))
	}
	switch {
	case r.Status != wantReady:
	case wantReady == v1.ConditionTrue && r.Reason != "":
		t.Errorf("Ready True with reason %q", r.Reason)
	case !containersReady && r.Reason != readiness.ReasonContainersNotReady:
		t.Errorf("Ready reason %q, want %s", r.Reason, readiness.ReasonContainersNotReady)
	case containersReady && !gatesTrue && r.Reason != readiness.ReasonReadinessGatesNotReady:
		t.Errorf("Ready reason %q, want %s", r.Reason, readiness.ReasonReadinessGatesNotReady)
	}
	if (cr.Status == v1.ConditionTrue) != containersReady {
		t.Errorf("ContainersReady on the server is %s, containers ready %v", cr.Status, ready)
	}
	if r.LastTransitionTime.Time.After(me.now()) || r.LastTransitionTime.Time.Before(start) {
		t.Errorf("Ready lastTransitionTime %s outside the test's clock [%s, %s]", ts(r.LastTransitionTime.Time), ts(start), ts(me.now()))
	}
	for _, d := range lb.checkGates(t, got) {
		t.Errorf("final server copy: %s", d)
	}
	hookMu.Lock()
	for _, p := range sentPatches {
		for _, d := range lb.checkGates(t, p.resp) {
			t.Errorf("the response to a PATCH of the Manager (resourceVersion %s): %s", p.resp.ResourceVersion, d)
		}
		if patchTouchesGates(t, p.patch) {
			t.Errorf("a PATCH of the Manager writes a gate condition: %s", p.patch)
		}
	}
	n := len(sentPatches)
	hookMu.Unlock()
	if n == 0 {
		t.Errorf("the Manager sent no PATCH for the pod")
	}
	if t.Failed() {
		t.Logf("seed %d: final conditions %s", seed, condString(got))
	}
	// The next interleaving starts later on the shared clock.
	me.at(me.now().Add(time.Minute))
	e.updates = me.updates
	return wantReady == v1.ConditionTrue
}

func describeGates(m map[v1.PodConditionType]*v1.PodCondition) string {
	s := ""
	for _, g := range gates {
		if c := m[g]; c != nil {
			s += fmt.Sprintf("%s=%s ", g, c.Status)
		} else {
			s += fmt.Sprintf("%s=missing ", g)
		}
	}
	return s
}
