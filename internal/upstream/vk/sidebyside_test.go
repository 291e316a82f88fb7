package vk

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/internal/upstream/kubeletcheck"
	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/vkstatus/examples/vkpodsim/provider"
)

const gate v1.PodConditionType = "lb.example.com/registered"

// counter counts the node agent's requests on single pods (GET, PUT, PATCH, DELETE),
// not LIST or WATCH.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		p := r.URL.Path
		if i := strings.Index(p, "/pods/"); i >= 0 && r.URL.Query().Get("watch") == "" {
			c.mu.Lock()
			c.n[r.Method]++
			c.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

func (c *counter) get() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// figures is what one write path did.
type figures struct {
	mode                 string
	requests             map[string]int
	agentWrites          int // pod versions whose status the agent changed
	gateFollowed         bool
	gatesLost            int
	readyRepair          time.Duration // -1: not repaired
	foreignKept          bool
	terminalBeforeDelete bool
	// pendingTerminalBeforeDelete: the same for a pod deleted before its containers started.
	pendingTerminalBeforeDelete bool
	// checked counts the watched versions with a status that the other client did not
	// write; mismatches, those whose kubelet-owned conditions differ from kubelet
	// v1.37.0's generators run on the version (kubeletcheck.Diff), or that lack
	// PodReadyToStartContainers; firstMismatch describes the first.
	checked, mismatches int
	firstMismatch       string
}

// deleteAndWait waits up to 30 s for the DELETED event of the pod and reports whether
// the pod's final state (the event's object) had a terminal phase.
func deleteAndWait(t *testing.T, mode, name string, next func(time.Duration, func(*v1.Pod) bool) (*v1.Pod, bool), deleted func() bool) bool {
	p, ok := next(30*time.Second, func(p *v1.Pod) bool { return p.Name == name && deleted() })
	if !ok {
		t.Errorf("%s: pod %s not deleted within 30s", mode, name)
		return false
	}
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

func findCond(p *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func condIs(p *v1.Pod, t v1.PodConditionType, s v1.ConditionStatus) bool {
	c := findCond(p, t)
	return c != nil && c.Status == s
}

// TestStockVsVKStatus runs the podsim provider on two virtual-kubelet nodes of one
// kube-apiserver v1.37.0, one writing statuses with virtual-kubelet's PUT, one through
// vkstatus, and plays the same workload on each: a gated pod whose gate another client
// flips, a Ready=False written by another client (as the node lifecycle controller does),
// a foreign DisruptionTarget and label, and a graceful deletion. It asserts vkstatus's
// behaviour and logs both write paths' figures.
func TestStockVsVKStatus(t *testing.T) {
	srv := apiserver.Start(t)
	results := make([]figures, 2)
	for i, mode := range []string{"stock", "vkstatus"} {
		t.Run(mode, func(t *testing.T) { results[i] = runMode(t, srv, mode) })
	}
	t.Logf("| write path | GET/PUT/PATCH/DELETE | status writes | requests per write | Ready follows gate | gates lost | Ready=False repaired | foreign condition, labels kept | terminal before delete (running / pending pod) | versions unlike kubelet v1.37.0's generators |")
	for _, f := range results {
		r := f.requests
		repair := "never (5 s)"
		if f.readyRepair >= 0 {
			repair = "after " + f.readyRepair.Round(10*time.Millisecond).String()
		}
		perWrite := 0.0
		if f.agentWrites > 0 {
			perWrite = float64(r["GET"]+r["PUT"]+r["PATCH"]) / float64(f.agentWrites)
		}
		t.Logf("| %s | %d/%d/%d/%d | %d | %.2f | %v | %d | %s | %v | %v / %v | %d of %d |", f.mode,
			r["GET"], r["PUT"], r["PATCH"], r["DELETE"], f.agentWrites, perWrite, f.gateFollowed, f.gatesLost, repair, f.foreignKept,
			f.terminalBeforeDelete, f.pendingTerminalBeforeDelete, f.mismatches, f.checked)
		if f.firstMismatch != "" {
			t.Logf("%s: first version unlike the generators: %s", f.mode, f.firstMismatch)
		}
	}
	vs := results[1]
	if !vs.gateFollowed || vs.gatesLost != 0 || vs.readyRepair < 0 || !vs.foreignKept || !vs.terminalBeforeDelete || !vs.pendingTerminalBeforeDelete {
		t.Errorf("vkstatus: %+v", vs)
	}
	if vs.checked == 0 || vs.mismatches != 0 {
		t.Errorf("vkstatus: %d of %d watched versions unlike kubelet v1.37.0's generators; first: %s", vs.mismatches, vs.checked, vs.firstMismatch)
	}
	if vs.requests["PUT"] != 0 || vs.requests["GET"] != 0 {
		t.Errorf("vkstatus sent %v; want PATCHes and one DELETE only", vs.requests)
	}
}

func runMode(t *testing.T, srv *apiserver.Server, mode string) figures {
	f := figures{mode: mode, readyRepair: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	nodeName := "vk-" + mode
	cnt := &counter{n: map[string]int{}}
	cfg := rest.CopyConfig(srv.Config)
	cfg.UserAgent = nodeName
	cfg.RateLimiter = nil
	cfg.WrapTransport = cnt.wrap
	agentClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Error(err)
		return f
	}
	other := srv.NewClient(t, "other-controller")
	n, err := provider.NewNode(provider.NodeConfig{Client: agentClient, Name: nodeName, PodCIDR: "10.244.1.0/24",
		NodeIP: "10.0.0.1", Profile: podsim.Fast(), Seed: 1, Stock: mode == "stock", FieldManager: nodeName})
	if err != nil {
		t.Error(err)
		return f
	}
	runDone := make(chan struct{})
	go func() { defer close(runDone); _ = n.Run(ctx) }()
	defer func() { cancel(); <-runDone }()
	if err := n.VK.WaitReady(ctx, 30*time.Second); err != nil {
		t.Errorf("%s: node not ready: %v", mode, err)
		return f
	}
	ns := srv.CreateNamespace(t, mode+"-").Name
	pod := apiserver.NewPod(ns, "web", nodeName)
	pod.Labels = map[string]string{"app": "web"}
	pod.Annotations = map[string]string{"team": "a"}
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
	grace := int64(5)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	w, err := other.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Error(err)
		return f
	}
	defer w.Stop()
	created := srv.CreatePod(t, pod)

	// Every version the watch delivers, and the agent's writes among them.
	var versions []*v1.Pod
	otherRVs := map[string]bool{} // versions the other client wrote
	var otherMu sync.Mutex
	var deletedSeen bool
	lastStatus := map[string]v1.PodStatus{created.Name: created.Status}
	next := func(timeout time.Duration, until func(*v1.Pod) bool) (*v1.Pod, bool) {
		deadline := time.After(timeout)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return nil, false
				}
				p, ok := ev.Object.(*v1.Pod)
				if !ok {
					continue
				}
				if ev.Type == watch.Deleted {
					deletedSeen = true
					if until(p) {
						return p, true
					}
					continue
				}
				deletedSeen = false
				versions = append(versions, p)
				otherMu.Lock()
				byOther := otherRVs[p.ResourceVersion]
				otherMu.Unlock()
				if prev, ok := lastStatus[p.Name]; ok && !equalStatus(prev, p.Status) && !byOther {
					f.agentWrites++
				}
				lastStatus[p.Name] = p.Status
				if until(p) {
					return p, true
				}
			case <-deadline:
				return nil, false
			}
		}
	}
	patchOther := func(body string) {
		got, err := other.CoreV1().Pods(ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{}, "status")
		if err != nil {
			t.Errorf("%s: other controller: %v", mode, err)
			return
		}
		otherMu.Lock()
		otherRVs[got.ResourceVersion] = true
		otherMu.Unlock()
	}
	web := func(until func(*v1.Pod) bool) func(*v1.Pod) bool {
		return func(p *v1.Pod) bool { return p.Name == "web" && until(p) }
	}
	condPatch := func(ct v1.PodConditionType, s v1.ConditionStatus, reason string) string {
		return fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q,"reason":%q,"lastTransitionTime":%q}]}}`,
			ct, s, reason, time.Now().UTC().Format(time.RFC3339))
	}
	if _, ok := next(20*time.Second, web(func(p *v1.Pod) bool { return condIs(p, v1.ContainersReady, v1.ConditionTrue) })); !ok {
		t.Errorf("%s: the pod never became ContainersReady", mode)
		return f
	}

	// (a) The gate flips True: Ready follows?
	patchOther(condPatch(gate, v1.ConditionTrue, "Registered"))
	_, f.gateFollowed = next(5*time.Second, web(func(p *v1.Pod) bool { return condIs(p, v1.PodReady, v1.ConditionTrue) }))

	// (b) Ready set False by another client: repaired, and how fast?
	start := time.Now()
	patchOther(condPatch(v1.PodReady, v1.ConditionFalse, "NodeNotReady"))
	if _, ok := next(5*time.Second, web(func(p *v1.Pod) bool {
		return condIs(p, v1.PodReady, v1.ConditionTrue) && condIs(p, gate, v1.ConditionTrue)
	})); ok {
		f.readyRepair = time.Since(start)
	}

	// (c) A foreign DisruptionTarget and a label another client adds.
	patchOther(condPatch(v1.DisruptionTarget, v1.ConditionTrue, "EvictionByEvictionAPI"))
	if _, err := other.CoreV1().Pods(ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"tier":"gold"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("%s: label: %v", mode, err)
	}
	time.Sleep(2 * time.Second)
	cur, err := other.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
	if err == nil {
		f.foreignKept = findCond(cur, v1.DisruptionTarget) != nil && cur.Labels["tier"] == "gold" && cur.Annotations["team"] == "a"
	}

	// (f) Graceful deletion.
	if err := other.CoreV1().Pods(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Errorf("%s: delete: %v", mode, err)
	}
	f.terminalBeforeDelete = deleteAndWait(t, mode, "web", next, func() bool { return deletedSeen })

	// (f) A pod deleted before its containers started (its sandbox takes an hour):
	// virtual-kubelet force-deletes it at once, since no container runs.
	slow := apiserver.NewPod(ns, "slow", nodeName)
	slow.Annotations = map[string]string{podsim.AnnotationPrefix + "sandbox-delay": "1h"}
	slow.Spec.TerminationGracePeriodSeconds = &grace
	srv.CreatePod(t, slow)
	if _, ok := next(20*time.Second, func(p *v1.Pod) bool {
		return p.Name == "slow" && condIs(p, v1.PodReadyToStartContainers, v1.ConditionFalse)
	}); !ok {
		t.Errorf("%s: no status for the slow pod", mode)
	}
	if err := other.CoreV1().Pods(ns).Delete(ctx, "slow", metav1.DeleteOptions{}); err != nil {
		t.Errorf("%s: delete: %v", mode, err)
	}
	f.pendingTerminalBeforeDelete = deleteAndWait(t, mode, "slow", next, func() bool { return deletedSeen })

	// Gates lost: a version after the gate was first set that has no gate condition.
	seenGate := false
	for _, p := range versions {
		if p.Name != "web" {
			continue
		}
		if findCond(p, gate) != nil {
			seenGate = true
		} else if seenGate {
			f.gatesLost++
		}
	}
	// (e) Every version with a status the other client did not write has the conditions
	// kubelet v1.37.0's generators compute from it.
	foreign := func(t v1.PodConditionType) bool { return t == gate }
	for _, p := range versions {
		otherMu.Lock()
		byOther := otherRVs[p.ResourceVersion]
		otherMu.Unlock()
		if byOther || kubeletcheck.Find(p.Status.Conditions, v1.PodReady) == nil {
			continue
		}
		f.checked++
		diffs, _ := kubeletcheck.Diff(p, foreign)
		if kubeletcheck.Find(p.Status.Conditions, v1.PodReadyToStartContainers) == nil {
			diffs = append(diffs, "PodReadyToStartContainers missing")
		}
		if len(diffs) > 0 {
			f.mismatches++
			if f.firstMismatch == "" {
				f.firstMismatch = fmt.Sprintf("%s rv %s: %v", p.Name, p.ResourceVersion, diffs)
			}
		}
	}
	f.requests = cnt.get()
	return f
}

func equalStatus(a, b v1.PodStatus) bool { return equality.Semantic.DeepEqual(a, b) }
