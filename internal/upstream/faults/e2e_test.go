package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/sandbox"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/kubeclient"
)

// The fault schedule of TestStatisticalManagersUnderWireFaults. Each phase applies to every node's
// proxy at once; the Managers, the readiness-gate controller and the node-lifecycle
// writer run throughout (the last two talk to the API server directly: the faults are the
// node agents' network).
const (
	nodes       = 10
	podsPerNode = 50
	// gate is the readiness gate of every pod, written by the load-balancer controller.
	gate = v1.PodConditionType("example.com/lb")

	warmUp   = 4 * time.Second  // no faults
	outage   = 20 * time.Second // every connection reset, then refused
	resets   = 8 * time.Second  // 10% of client bursts cut by a TCP reset
	latency  = 8 * time.Second  // 20% of client bursts held 1.5 s
	holes    = 6 * time.Second  // 5% of client bursts black-holed
	converge = 30 * time.Second // bound on convergence after healing

	requestTimeout = 2 * time.Second
	// herdPause is how long every writer pauses around the outage's start, so that each
	// Manager's first failure is the one change handed to it at that instant and its first
	// retry is the one its backoff draws (Retry.Base 1 s, Jitter 0.5: in [1 s, 1.5 s)).
	herdPause = 2500 * time.Millisecond
)

// retryOptions are the Managers' backoff: 1 s doubling to 4 s (so convergence after
// healing is bounded by a few seconds) with the jitter stretched to 50%; the seed is left
// to its default (random per Manager), which is what the herd measurement checks.
var retryOptions = status.RetryOptions{Base: time.Second, Max: 4 * time.Second, Jitter: 0.5}

// TestStatisticalManagersUnderWireFaults is a statistical end-to-end test on the real
// clock (its name says so: timings and fault counts vary from run to run, its assertions
// are invariants and bounds that hold for every run). It runs 10 Managers (10 nodes) × 50 pods against a real
// kube-apiserver through one fault proxy per node, with a readiness-gate controller and a
// node-lifecycle writer racing them, through a schedule of wire faults; then heals the
// network and checks that the server converges to what the Managers last set.
func TestStatisticalManagersUnderWireFaults(t *testing.T) {
	testStart := time.Now()
	srv := apiserver.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ns := srv.CreateNamespace(t, "faults-").Name
	w := newWorld(t, ctx, srv, ns, false)

	// The nodes and their Managers, the watch every check reads (started before the pods
	// exist, so it sees every version of every pod), the pods, and a first status for each.
	w.startNodes(retryOptions)
	w.start()
	stopWriters := w.startWriters()

	phase := func(name string, d time.Duration, f Faults) {
		t.Logf("phase %-9s %v: %+v", name, d, f)
		for _, n := range w.nodes {
			n.proxy.Set(f)
		}
		time.Sleep(d)
	}
	phase("warm-up", warmUp, Faults{})
	healthy := w.tally()

	// The outage. Every writer pauses; every proxy goes down (open connections reset,
	// new ones refused); at that instant every node has one change to send, as after any
	// cluster-wide event; the writers resume once the first retries are due.
	w.paused.Store(true)
	time.Sleep(300 * time.Millisecond) // let requests in flight finish
	t0 := time.Now()
	for _, n := range w.nodes {
		n.proxy.Down()
	}
	w.outageStart.Store(t0.UnixNano())
	for _, n := range w.nodes {
		n.change(n.probePod())
	}
	time.Sleep(herdPause)
	w.paused.Store(false)
	time.Sleep(outage - herdPause)
	for _, n := range w.nodes {
		if err := n.proxy.Up(); err != nil {
			t.Fatal(err)
		}
	}
	w.outageEnd = time.Now()
	t.Logf("phase outage    %v: every connection reset at %v, refused until %v", outage, t0.Format("15:04:05.000"), time.Now().Format("15:04:05.000"))

	phase("resets", resets, Faults{Reset: 0.10})
	phase("latency", latency, Faults{Delay: 0.20, Latency: 1500 * time.Millisecond})
	phase("holes", holes, Faults{BlackHole: 0.05})

	// Heal: stop every writer first, so "converged" has a fixed target.
	stopWriters()
	for _, n := range w.nodes {
		if err := n.proxy.Heal(); err != nil {
			t.Fatal(err)
		}
	}
	took, ok := w.awaitConvergence(converge)
	if !ok {
		t.Errorf("not converged %v after healing: %s", converge, w.firstMismatch())
	}

	w.checkFinal()
	w.reportHerd(t0)
	w.report(healthy, took, time.Since(testStart))
}

// start starts the watch every check reads (before the pods exist, so it sees every
// version of every pod), creates the pods and hands each node's Manager a first status
// for each.
func (w *world) start() {
	w.startWatch()
	w.createPods()
	w.waitForWatch(nodes * podsPerNode)
	for _, n := range w.nodes {
		for _, p := range n.pods {
			n.change(p)
		}
	}
}

// startWriters starts every node's kubelet, the readiness-gate controller and the
// node-lifecycle writer; the function it returns stops them and waits for them.
func (w *world) startWriters() (stop func()) {
	var writers sync.WaitGroup
	done := make(chan struct{})
	for i := range w.nodes {
		writers.Add(1)
		go func() { defer writers.Done(); w.nodes[i].kubelet(done) }()
	}
	writers.Add(2)
	go func() { defer writers.Done(); w.gateController(done) }()
	go func() { defer writers.Done(); w.nodeLifecycle(done) }()
	return func() {
		close(done)
		writers.Wait()
	}
}

// tally is the Managers' requests and their callers' changes so far.
type tally struct{ gets, patches, failed, conflicts, changes int }

func (w *world) tally() tally {
	var t tally
	for _, n := range w.nodes {
		g, p, f := n.cli.counts()
		t.gets, t.patches, t.failed = t.gets+g, t.patches+p, t.failed+f
		t.conflicts += int(n.obs.conflicts.Load())
		n.mu.Lock()
		t.changes += n.changes
		n.mu.Unlock()
	}
	return t
}

func (t tally) String() string {
	return fmt.Sprintf("%d (%d GET, %d PATCH; %d failed, %d of them 409) for %d changes: %.2f requests per change",
		t.gets+t.patches, t.gets, t.patches, t.failed, t.conflicts, t.changes, float64(t.gets+t.patches)/float64(t.changes))
}

// world is everything the test runs.
type world struct {
	t   *testing.T
	ctx context.Context
	srv *apiserver.Server
	ns  string
	// cfg is what every client of the world is built from: srv.Config, or for a world
	// that survives a restart of the API server srv.StableConfig, with front, an
	// unfaulted proxy whose target follows the server, as the host of the direct clients.
	cfg    *rest.Config
	front  *Proxy
	direct kubernetes.Interface // the watch and the checks, never faulted
	lb     kubernetes.Interface // the load-balancer controller (readiness gates)
	nlc    kubernetes.Interface // the node-lifecycle writer
	nodes  []*node

	// paused pauses every writer; apiPaused only those that write to the API server
	// (the gate controller and the node-lifecycle writer), not the node agents' kubelets.
	paused      atomic.Bool
	apiPaused   atomic.Bool
	outageStart atomic.Int64
	outageEnd   time.Time // set by the test goroutine before the herd is measured

	mu sync.Mutex
	// latest is the newest copy of every pod, from the watch; byUID maps to its node.
	latest map[types.UID]*v1.Pod
	byUID  map[types.UID]*node
	// byNode is set before the watch starts and never changes.
	byNode map[string]*node
	// watched counts watch events; violations are the invariant breaks the watch saw.
	watched    int
	violations []string
	// relists counts the watch's relists after it broke; while hold is not nil, a
	// broken watch waits for it to be closed before it relists.
	relists int
	hold    chan struct{}
	// gateWritten is the last gate condition the controller wrote to each pod.
	gateWritten map[types.UID]v1.PodCondition
	// counts of the other writers' successful writes.
	gateWrites, notReadyFlips, nlcConflicts int
}

// newWorld makes the world of one test. With restartable, every client of the world
// keeps working when the API server restarts (see restartAPIServer).
func newWorld(t *testing.T, ctx context.Context, srv *apiserver.Server, ns string, restartable bool) *world {
	w := &world{
		t: t, ctx: ctx, srv: srv, ns: ns, cfg: srv.Config,
		latest:      map[types.UID]*v1.Pod{},
		byUID:       map[types.UID]*node{},
		byNode:      map[string]*node{},
		gateWritten: map[types.UID]v1.PodCondition{},
	}
	if restartable {
		w.cfg = srv.StableConfig()
		front, err := New(w.serverAddr(), 99)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = front.Close() })
		w.front = front
	}
	w.direct, w.lb, w.nlc = w.newClient("faults-checker"), w.newClient("faults-lb-controller"), w.newClient("faults-node-lifecycle")
	return w
}

// serverAddr is the API server's host:port.
func (w *world) serverAddr() string {
	u, err := url.Parse(w.srv.Config.Host)
	if err != nil {
		w.t.Fatal(err)
	}
	return u.Host
}

// newClient is a clientset of w.cfg with its own rate limiter, through the front proxy
// if the world has one.
func (w *world) newClient(userAgent string) kubernetes.Interface {
	cfg := rest.CopyConfig(w.cfg)
	cfg.UserAgent = userAgent
	cfg.RateLimiter = nil
	if w.front != nil {
		cfg.Host = "https://" + w.front.Addr()
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// node is one node agent: its proxy, its Manager, and the runtime facts of its pods.
type node struct {
	w     *world
	name  string
	proxy *Proxy
	mgr   *status.Manager
	obs   *observer
	cli   *recordingClient

	mu      sync.Mutex
	rng     *rand.Rand
	pods    []*v1.Pod // as created
	step    map[types.UID]int
	changes int
}

// startNodes makes each node's proxy and Manager, with retry as its Options.Retry. The
// Manager's clientset reaches the API server through the node's proxy, over HTTP/1.1 so
// that a fault hits one request.
func (w *world) startNodes(retry status.RetryOptions) {
	for i := range nodes {
		p, err := New(w.serverAddr(), uint64(100+i))
		if err != nil {
			w.t.Fatal(err)
		}
		w.t.Cleanup(func() { _ = p.Close() })
		n := &node{w: w, name: fmt.Sprintf("node-%02d", i), proxy: p, rng: rand.New(rand.NewPCG(uint64(i), 7)), step: map[types.UID]int{}}
		cfg := rest.CopyConfig(w.cfg)
		cfg.Host = "https://" + p.Addr()
		cfg.TLSClientConfig.NextProtos = []string{"http/1.1"}
		cfg.UserAgent = "faults-" + n.name
		cfg.RateLimiter = nil
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			w.t.Fatal(err)
		}
		n.cli = &recordingClient{Client: kubeclient.New(cs.CoreV1(), cfg.UserAgent)}
		n.obs = &observer{}
		n.mgr = status.NewManager(n.cli, status.Options{
			Observer: n.obs.observer(), Workers: 4, RequestTimeout: requestTimeout, Retry: retry,
		})
		go func() { _ = n.mgr.Run(w.ctx) }()
		w.nodes = append(w.nodes, n)
		w.byNode[n.name] = n
	}
}

// createPods creates podsPerNode pods bound to each node, every fifth running to
// completion, each with a readiness probe and the readiness gate.
func (w *world) createPods() {
	var wg sync.WaitGroup
	for _, n := range w.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range podsPerNode {
				pod := apiserver.NewPod(w.ns, fmt.Sprintf("%s-p%02d", n.name, j), n.name)
				pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
				pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
				if j%5 == 4 {
					pod.Spec.RestartPolicy = v1.RestartPolicyNever // runs to completion
				}
				got, err := w.direct.CoreV1().Pods(w.ns).Create(w.ctx, pod, metav1.CreateOptions{})
				if err != nil {
					w.t.Errorf("create pod: %v", err)
					return
				}
				n.pods = append(n.pods, got)
				w.mu.Lock()
				w.byUID[got.UID] = n
				w.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if w.t.Failed() {
		w.t.FailNow()
	}
}

// startWatch watches every pod of the namespace, hands each version to its node's
// Manager (the node agent's informer, not faulted) and checks the invariants between
// consecutive versions. When the watch breaks (the API server restarted), it relists
// as an informer does, handling every listed copy the same way, and watches again.
func (w *world) startWatch() {
	list, err := w.direct.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	go func() {
		rv := list.ResourceVersion
		for {
			w.watchFrom(rv)
			if w.ctx.Err() != nil {
				return
			}
			w.mu.Lock()
			hold := w.hold
			w.mu.Unlock()
			if hold != nil {
				select {
				case <-hold:
				case <-w.ctx.Done():
					return
				}
			}
			if rv = w.relist(); rv == "" {
				return
			}
		}
	}()
}

// relist lists every pod (retrying until it can, or "" when the test ends), handles each
// copy, and returns the list's resourceVersion.
func (w *world) relist() string {
	for {
		l, err := w.direct.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			if w.ctx.Err() != nil {
				return ""
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for i := range l.Items {
			w.handle(&l.Items[i], false)
		}
		w.mu.Lock()
		w.relists++
		w.mu.Unlock()
		return l.ResourceVersion
	}
}

// watchFrom watches from rv until the watch ends. Without a front proxy (no restart)
// the watch must not fail: a failure is an invariant violation.
func (w *world) watchFrom(rv string) {
	wi, err := w.direct.CoreV1().Pods(w.ns).Watch(w.ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		if w.ctx.Err() == nil && w.front == nil {
			w.violate("watch: %v", err)
		}
		return
	}
	defer wi.Stop()
	for ev := range wi.ResultChan() {
		if ev.Type == watch.Error {
			if w.front == nil {
				w.violate("watch error: %v", apierrors.FromObject(ev.Object))
			}
			return
		}
		if p, ok := ev.Object.(*v1.Pod); ok {
			w.handle(p, true)
		}
	}
}

// handle records a server copy of a pod, checks it against the previous one and hands
// it to its node's Manager. consecutive says that no version can lie between the two (a
// watch event, not a relisted copy).
func (w *world) handle(p *v1.Pod, consecutive bool) {
	w.mu.Lock()
	prev := w.latest[p.UID]
	w.latest[p.UID] = p
	w.watched++
	w.checkVersionLocked(prev, p, consecutive)
	w.mu.Unlock()
	if n := w.byNode[p.Spec.NodeName]; n != nil {
		n.mgr.ObservePod(context.Background(), p)
	}
}

func (w *world) waitForWatch(pods int) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		ok := len(w.latest) >= pods
		w.mu.Unlock()
		if ok {
			// A Manager made before the watch saw a pod gets it from ObservePod later.
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.t.Fatalf("the watch did not see %d pods in 30s", pods)
}

// awaitWatch waits until the watch has delivered every pod's version as a fresh List
// shows it, so that convergence is judged on copies no older than the writes before.
func (w *world) awaitWatch() {
	list, err := w.direct.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < len(list.Items); {
		p := &list.Items[i]
		w.mu.Lock()
		seen := w.latest[p.UID]
		w.mu.Unlock()
		if seen != nil {
			if c, err := resourceversion.CompareResourceVersion(seen.ResourceVersion, p.ResourceVersion); err == nil && c >= 0 {
				i++
				continue
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the watch has not delivered pod %s at resourceVersion %s in 30s", p.Name, p.ResourceVersion)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (w *world) violate(format string, args ...any) {
	w.mu.Lock()
	w.violations = append(w.violations, fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

// checkVersionLocked compares two versions of a pod: a terminal phase never goes back,
// and a gate condition once written never disappears; and, when they are consecutive, a
// lastTransitionTime changes only with its condition's Status (between a copy relisted
// after the watch broke and the last one seen, the Status may have gone and come back).
func (w *world) checkVersionLocked(prev, cur *v1.Pod, consecutive bool) {
	if prev == nil {
		return
	}
	for _, c := range cur.Status.Conditions {
		if !consecutive {
			break
		}
		o := conditions.Get(prev.Status.Conditions, c.Type)
		if o != nil && o.Status == c.Status && !o.LastTransitionTime.Equal(&c.LastTransitionTime) {
			w.violations = append(w.violations, fmt.Sprintf("pod %s rv %s: %s lastTransitionTime %v -> %v with Status %s unchanged",
				cur.Name, cur.ResourceVersion, c.Type, o.LastTransitionTime.UTC(), c.LastTransitionTime.UTC(), c.Status))
		}
	}
	if terminal(prev.Status.Phase) && cur.Status.Phase != prev.Status.Phase {
		w.violations = append(w.violations, fmt.Sprintf("pod %s rv %s: phase %s -> %s", cur.Name, cur.ResourceVersion, prev.Status.Phase, cur.Status.Phase))
	}
	if conditions.Get(prev.Status.Conditions, gate) != nil && conditions.Get(cur.Status.Conditions, gate) == nil {
		w.violations = append(w.violations, fmt.Sprintf("pod %s rv %s: gate condition lost", cur.Name, cur.ResourceVersion))
	}
}

// probePod is a pod of n that has not finished, for the outage's change.
func (n *node) probePod() *v1.Pod {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.pods {
		if n.step[p.UID] < 5 {
			return p
		}
	}
	return n.pods[0]
}

// kubelet plays the node agent's pod workers: every ~150 ms one pod moves on (sandbox
// up, container started, readiness probe results flapping, completion for the pods that
// run to completion), and the whole status is generated with podstate and handed to the
// Manager.
func (n *node) kubelet(stop <-chan struct{}) {
	for {
		n.mu.Lock()
		d := time.Duration(100+n.rng.IntN(100)) * time.Millisecond
		p := n.pods[n.rng.IntN(len(n.pods))]
		n.mu.Unlock()
		select {
		case <-stop:
			return
		case <-time.After(d):
		}
		if n.w.paused.Load() {
			continue
		}
		n.change(p)
	}
}

// change moves p one step on and hands the Manager its new status.
func (n *node) change(p *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.step[p.UID]
	switch {
	case s >= 5 && p.Spec.RestartPolicy == v1.RestartPolicyNever:
		return // completed: nothing changes any more
	case s >= 5:
		n.step[p.UID] = 4 // readiness flaps between 4 and 5 for ever
	default:
		n.step[p.UID]++
	}
	s = n.step[p.UID]
	n.w.mu.Lock()
	server := n.w.latest[p.UID]
	n.w.mu.Unlock()
	if server == nil {
		server = p
	}
	in := status.SyncPodInput{
		Pod: server,
		Runtime: podstate.Runtime{
			Sandboxes: []sandbox.Status{{ID: "sb-" + string(p.UID), Ready: true, IP: "10.1.0.1"}},
			HostIPs:   []string{"10.0.0.1"},
		},
	}
	started := metav1.NewTime(time.Unix(1767225600, 0))
	c := podstate.Container{Name: "app", ContainerID: "containerd://" + string(p.UID)}
	switch {
	case s == 1:
		c.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
	case s == 2:
		c.State.Running = &v1.ContainerStateRunning{StartedAt: started}
	case s == 3 || s == 5:
		c.State.Running = &v1.ContainerStateRunning{StartedAt: started}
		c.Readiness = podstate.ProbeSuccess
	case s == 4:
		c.State.Running = &v1.ContainerStateRunning{StartedAt: started}
		c.Readiness = podstate.ProbeFailure
	}
	if s == 5 && p.Spec.RestartPolicy == v1.RestartPolicyNever {
		c.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: metav1.NewTime(started.Add(time.Minute))}}
		c.Readiness = podstate.ProbeUnknown
		in.Runtime.Terminal = true
	}
	in.Runtime.Containers = []podstate.Container{c}
	if _, err := n.mgr.SyncPod(context.Background(), in); err != nil {
		n.w.t.Errorf("SyncPod(%s): %v", p.Name, err)
		return
	}
	n.changes++
}

// gateController plays a load-balancer controller: every ~20 ms it flips the readiness
// gate of a random pod, with a fresh lastTransitionTime (the Status always changes).
func (w *world) gateController(stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(42, 1))
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(10+rng.IntN(20)) * time.Millisecond):
		}
		if w.paused.Load() || w.apiPaused.Load() {
			continue
		}
		n := w.nodes[rng.IntN(len(w.nodes))]
		w.flipGate(n.pods[rng.IntN(len(n.pods))])
	}
}

// flipGate flips the readiness gate of p, with a fresh lastTransitionTime. A PATCH that
// got no HTTP answer (its connection reset by a restarting server) may or may not have
// been applied: a GET tells which, and one that was not is sent again, so that
// gateWritten always holds what the server last accepted from the controller.
func (w *world) flipGate(p *v1.Pod) {
	w.mu.Lock()
	last, ok := w.gateWritten[p.UID]
	w.mu.Unlock()
	st := v1.ConditionTrue
	if ok && last.Status == v1.ConditionTrue {
		st = v1.ConditionFalse
	}
	c := v1.PodCondition{Type: gate, Status: st, LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second)),
		Reason: "Target" + string(st), Message: fmt.Sprintf("load balancer target %s", st)}
	body, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []v1.PodCondition{c}}})
	pods := w.lb.CoreV1().Pods(w.ns)
	for attempt := 1; ; attempt++ {
		_, err := pods.Patch(w.ctx, p.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
		if err == nil {
			break
		}
		if w.ctx.Err() != nil {
			return
		}
		if isAPIStatus(err) || attempt == 5 {
			w.t.Errorf("gate PATCH of %s (attempt %d): %v", p.Name, attempt, err)
			return
		}
		w.t.Logf("gate PATCH of %s got no answer (%v): asking the server whether it was applied", p.Name, err)
		cur, gerr := pods.Get(w.ctx, p.Name, metav1.GetOptions{})
		if gerr == nil {
			if g := conditions.Get(cur.Status.Conditions, gate); g != nil && g.Status == c.Status &&
				g.LastTransitionTime.Equal(&c.LastTransitionTime) && g.Message == c.Message {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.mu.Lock()
	w.gateWritten[p.UID] = c
	w.gateWrites++
	w.mu.Unlock()
}

// nodeLifecycle plays the node lifecycle controller's MarkPodsNotReady
// (pkg/controller/util/node/controller_utils.go): every ~2 s, for a random node, every
// pod whose Ready is True gets Ready False (Reason and Message kept, a new
// lastTransitionTime) through UpdateStatus of its copy, which fails with 409 when the copy
// is stale.
func (w *world) nodeLifecycle(stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(43, 1))
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(1500+rng.IntN(1000)) * time.Millisecond):
		}
		n := w.nodes[rng.IntN(len(w.nodes))]
		for _, p := range n.pods {
			if w.paused.Load() || w.apiPaused.Load() {
				break
			}
			w.mu.Lock()
			cur := w.latest[p.UID]
			w.mu.Unlock()
			w.markNotReady(cur)
		}
	}
}

// markNotReady sets Ready False on cur, a copy of a pod, if its Ready is True, through
// UpdateStatus of that copy, which fails with 409 when the copy is stale.
func (w *world) markNotReady(cur *v1.Pod) {
	r := conditions.Get(cur.Status.Conditions, v1.PodReady)
	if r == nil || r.Status != v1.ConditionTrue {
		return
	}
	cp := cur.DeepCopy()
	r = conditions.Get(cp.Status.Conditions, v1.PodReady)
	r.Status = v1.ConditionFalse
	r.LastTransitionTime = metav1.NewTime(time.Now().Truncate(time.Second))
	_, err := w.nlc.CoreV1().Pods(w.ns).UpdateStatus(w.ctx, cp, metav1.UpdateOptions{})
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err == nil:
		w.notReadyFlips++
	case apierrors.IsConflict(err):
		w.nlcConflicts++
	case w.ctx.Err() != nil:
	case !isAPIStatus(err):
		// No HTTP answer (a connection reset by a restarting server): applied or not,
		// the Managers must converge either way, and no check depends on it.
		w.t.Logf("node lifecycle UpdateStatus of %s got no answer: %v", cur.Name, err)
	default:
		w.t.Errorf("node lifecycle UpdateStatus of %s: %v", cur.Name, err)
	}
}

// mismatch says how the server's copy of p differs from what its Manager last set (""
// when it does not), on the fields the kubelet owns, and whether Ready is what the
// container statuses and the gate make it.
func (w *world) mismatch(p *v1.Pod) string {
	n := w.byUID[p.UID]
	want, ok := n.mgr.GetPodStatus(p.UID)
	if !ok {
		return fmt.Sprintf("pod %s: no status cached", p.Name)
	}
	got := p.Status
	if got.Phase != want.Phase {
		return fmt.Sprintf("pod %s: phase %s, Manager set %s", p.Name, got.Phase, want.Phase)
	}
	for _, t := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady} {
		g, m := conditions.Get(got.Conditions, t), conditions.Get(want.Conditions, t)
		if (g == nil) != (m == nil) || (g != nil && (g.Status != m.Status || g.Reason != m.Reason || g.Message != m.Message)) {
			return fmt.Sprintf("pod %s: %s %s, Manager set %s", p.Name, t, condString(g), condString(m))
		}
	}
	if len(got.ContainerStatuses) != 1 || len(want.ContainerStatuses) != 1 ||
		got.ContainerStatuses[0].Ready != want.ContainerStatuses[0].Ready ||
		stateName(got.ContainerStatuses[0].State) != stateName(want.ContainerStatuses[0].State) {
		return fmt.Sprintf("pod %s: container statuses %v, Manager set %v", p.Name, got.ContainerStatuses, want.ContainerStatuses)
	}
	// Ready re-derived from the container and the gate the server has.
	wantReady := v1.ConditionFalse
	if g := conditions.Get(got.Conditions, gate); !terminal(got.Phase) && g != nil && g.Status == v1.ConditionTrue &&
		got.ContainerStatuses[0].Ready {
		wantReady = v1.ConditionTrue
	}
	if r := conditions.Get(got.Conditions, v1.PodReady); r == nil || r.Status != wantReady {
		return fmt.Sprintf("pod %s: Ready %s, but the container (ready %t) and gate %s make it %s", p.Name, condString(r),
			got.ContainerStatuses[0].Ready, condString(conditions.Get(got.Conditions, gate)), wantReady)
	}
	return ""
}

// awaitConvergence polls the watch's copies until every pod matches (no requests).
func (w *world) awaitConvergence(limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < limit {
		if w.firstMismatch() == "" {
			return time.Since(start), true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start), false
}

func (w *world) firstMismatch() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.latest {
		if m := w.mismatch(p); m != "" {
			return m
		}
	}
	return ""
}

// checkFinal reads every pod afresh and checks it, the gates and the watch's invariants.
func (w *world) checkFinal() {
	list, err := w.direct.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	lostGates := 0
	for i := range list.Items {
		p := &list.Items[i]
		if m := w.mismatch(p); m != "" {
			w.t.Errorf("final state: %s", m)
		}
		if want, ok := w.gateWritten[p.UID]; ok {
			g := conditions.Get(p.Status.Conditions, gate)
			if g == nil || g.Status != want.Status || g.Reason != want.Reason || g.Message != want.Message || !g.LastTransitionTime.Equal(&want.LastTransitionTime) {
				lostGates++
				w.t.Errorf("pod %s: gate %s, the controller last wrote %s", p.Name, condString(g), condString(&want))
			}
		}
	}
	for _, v := range w.violations {
		w.t.Errorf("watch: %s", v)
	}
	w.t.Logf("checked %d pods, %d watch events: %d gate conditions lost, %d invariant violations (lastTransitionTime without Status change, terminal phase left, gate removed)",
		len(list.Items), w.watched, lostGates, len(w.violations))
}

// reportHerd measures how the Managers' first retries after the outage's start spread,
// and fails the test if they bunch up as Managers that draw the same jitter would.
func (w *world) reportHerd(t0 time.Time) {
	t := w.t
	var firsts []time.Duration
	var delays []time.Duration
	for _, n := range w.nodes {
		// The first retry: the first request at least half a base delay after the
		// outage's start (before that, only the first attempts of the change fail).
		first, ok := n.cli.firstAfter(t0.Add(retryOptions.Base / 2))
		if !ok {
			t.Errorf("%s made no request after the outage began", n.name)
			continue
		}
		firsts = append(firsts, first.Sub(t0))
		if d, ok := n.obs.firstRetryDelay(t0); ok {
			delays = append(delays, d)
		}
	}
	sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
	const window = 10 * time.Millisecond
	pairs := 0
	for i := range firsts {
		for j := i + 1; j < len(firsts); j++ {
			if firsts[j]-firsts[i] < window {
				pairs++
			}
		}
	}
	hist := map[time.Duration]int{}
	for _, f := range firsts {
		hist[f.Truncate(window)]++
	}
	keys := make([]time.Duration, 0, len(hist))
	for k := range hist {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  t0+%5dms %s", k.Milliseconds(), strings.Repeat("#", hist[k]))
	}
	// Uniform first retries over the jitter's 500 ms put two in one 10 ms window with
	// probability ~4%: 45 pairs give ~1.8 such pairs by chance. Managers that share a
	// seed retry within a few milliseconds of each other: all 45.
	t.Logf("herd: first retry of each of %d Managers after the outage began (t0 = every connection reset), 10 ms buckets:%s", len(firsts), b.String())
	t.Logf("herd: %d of %d Manager pairs retried within %v of each other (chance: ~1.8); first backoff delays drawn: %v", pairs, len(firsts)*(len(firsts)-1)/2, window, delays)
	// After the outage ends the Managers' pods are spread over many backoff deadlines
	// (writers kept changing pods during it), so the first requests are reported only.
	var afterEnd []time.Duration
	for _, n := range w.nodes {
		if f, ok := n.cli.firstAfter(w.outageEnd); ok {
			afterEnd = append(afterEnd, f.Sub(w.outageEnd).Round(time.Millisecond))
		}
	}
	slices.Sort(afterEnd)
	t.Logf("herd: first request of each Manager after the outage ended: %v", afterEnd)
	if pairs > 15 {
		t.Errorf("%d of 45 Manager pairs retried within %v of each other after the outage: the herd retries together", pairs, window)
	}
	distinct := map[time.Duration]bool{}
	for _, d := range delays {
		distinct[d] = true
	}
	if len(delays) != nodes || len(distinct) != len(delays) {
		t.Errorf("first backoff delays after the outage %v: want %d distinct draws, one per Manager", delays, nodes)
	}
}

func (w *world) report(healthy tally, convergence, total time.Duration) {
	all := w.tally()
	ps := w.proxyStats()
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.t
	t.Logf("schedule: warm-up %v, outage %v (reset, then refused), resets 10%% %v, latency 1.5s on 20%% %v, black holes 5%% %v; RequestTimeout %v, Retry %+v",
		warmUp, outage, resets, latency, holes, requestTimeout, retryOptions)
	t.Logf("proxies: %d connections, %d client bursts: %d reset, %d black-holed, %d delayed; %d open connections reset by the outage",
		ps.Accepted, ps.Bursts, ps.Resets, ps.BlackHoles, ps.Delays, ps.DownResets)
	t.Logf("writers: %d status changes by the Managers' callers, %d gate writes, %d Ready flips by the node-lifecycle writer (%d conflicts)",
		all.changes, w.gateWrites, w.notReadyFlips, w.nlcConflicts)
	t.Logf("requests, first status and warm-up (no faults): %s", healthy)
	t.Logf("requests, whole run: %s", all)
	t.Logf("convergence: every pod as its Manager last set it %v after healing (bound %v); the test took %v", convergence.Round(time.Millisecond), converge, total.Round(time.Second))
}

// proxyStats sums the counts of every node's proxy.
func (w *world) proxyStats() Stats {
	var ps Stats
	for _, n := range w.nodes {
		s := n.proxy.Stats()
		ps.Accepted += s.Accepted
		ps.Bursts += s.Bursts
		ps.Resets += s.Resets
		ps.BlackHoles += s.BlackHoles
		ps.Delays += s.Delays
		ps.DownResets += s.DownResets
	}
	return ps
}

// recordingClient counts a Manager's requests and remembers when each began.
type recordingClient struct {
	status.Client
	mu                    sync.Mutex
	starts                []time.Time
	gets, patches, failed int
	// patched holds when each pod's successful PATCHes were sent, by name, and bodies
	// what they sent.
	patched map[string][]time.Time
	bodies  map[string][]string
	// log holds every request's start, end and outcome, for the report of a late probe.
	log []request
}

// request is one request a Manager made.
type request struct {
	start, end time.Time
	err        string
}

// requestsAround describes the requests that began or ended in [from, to], relative to
// origin.
func (c *recordingClient) requestsAround(from, to, origin time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, r := range c.log {
		if r.end.Before(from) || r.start.After(to) {
			continue
		}
		fmt.Fprintf(&b, "\n  %+v … %+v %s", r.start.Sub(origin).Round(time.Millisecond), r.end.Sub(origin).Round(time.Millisecond), r.err)
	}
	return b.String()
}

func (c *recordingClient) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	start := c.begin(true)
	p, err := c.Client.GetPod(ctx, namespace, name)
	c.end(err)
	c.record(start, "GET "+name, err)
	return p, err
}

func (c *recordingClient) record(start time.Time, what string, err error) {
	r := request{start: start, end: time.Now(), err: what + ": ok"}
	if err != nil {
		r.err = what + ": " + err.Error()
	}
	c.mu.Lock()
	c.log = append(c.log, r)
	c.mu.Unlock()
}

func (c *recordingClient) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	start := c.begin(false)
	p, err := c.Client.PatchPodStatus(ctx, namespace, name, patch)
	c.end(err)
	c.record(start, "PATCH "+name, err)
	if err == nil {
		c.mu.Lock()
		if c.patched == nil {
			c.patched, c.bodies = map[string][]time.Time{}, map[string][]string{}
		}
		c.patched[name] = append(c.patched[name], start)
		c.bodies[name] = append(c.bodies[name], string(patch))
		c.mu.Unlock()
	}
	return p, err
}

// patchLog describes name's successful PATCHes since t: when each was sent and its body.
func (c *recordingClient) patchLog(name string, t time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for i, s := range c.patched[name] {
		if !s.Before(t) {
			fmt.Fprintf(&b, "\n  +%v %s", s.Sub(t).Round(time.Millisecond), c.bodies[name][i])
		}
	}
	return b.String()
}

// lastPatchSince is when the last successful PATCH sent at or after t was sent.
func (c *recordingClient) lastPatchSince(t time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var last time.Time
	for _, starts := range c.patched {
		for _, s := range starts {
			if !s.Before(t) && s.After(last) {
				last = s
			}
		}
	}
	return last, !last.IsZero()
}

// patchesSince counts each pod's successful PATCHes sent at or after t.
func (c *recordingClient) patchesSince(t time.Time) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for name, starts := range c.patched {
		for _, s := range starts {
			if !s.Before(t) {
				out[name]++
			}
		}
	}
	return out
}

func (c *recordingClient) begin(get bool) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	c.starts = append(c.starts, now)
	if get {
		c.gets++
	} else {
		c.patches++
	}
	return now
}

func (c *recordingClient) end(err error) {
	if err != nil {
		c.mu.Lock()
		c.failed++
		c.mu.Unlock()
	}
}

func (c *recordingClient) counts() (gets, patches, failed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets, c.patches, c.failed
}

func (c *recordingClient) firstAfter(t time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.starts {
		if s.After(t) {
			return s, true
		}
	}
	return time.Time{}, false
}

// observer records the Manager's retries and its wake-ups after transport failures.
type observer struct {
	conflicts  atomic.Int64
	mu         sync.Mutex
	retries    []retry
	recoveries []recovery
}

func (o *observer) observer() *status.Observer {
	return &status.Observer{
		OnConflict: func(status.ConflictEvent) { o.conflicts.Add(1) },
		OnRetry:    func(ev status.RetryEvent) { o.onRetry(ev.Delay) },
		OnRecovery: func(ev status.RecoveryEvent) {
			o.mu.Lock()
			o.recoveries = append(o.recoveries, recovery{time.Now(), ev})
			o.mu.Unlock()
		},
	}
}

// recovery is a RecoveryEvent and when it came (the server's first answer).
type recovery struct {
	at time.Time
	ev status.RecoveryEvent
}

// firstRecoveryAfter is the first wake-up at or after t that rescheduled pods.
func (o *observer) firstRecoveryAfter(t time.Time) (recovery, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range o.recoveries {
		if !r.at.Before(t) && r.ev.Pods > 0 {
			return r, true
		}
	}
	return recovery{}, false
}

type retry struct {
	at    time.Time
	delay time.Duration
}

func (o *observer) onRetry(d time.Duration) {
	o.mu.Lock()
	o.retries = append(o.retries, retry{time.Now(), d})
	o.mu.Unlock()
}

// firstRetryDelay is the backoff drawn for the first failure at or after t.
func (o *observer) firstRetryDelay(t time.Time) (time.Duration, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range o.retries {
		if !r.at.Before(t) {
			return r.delay, true
		}
	}
	return 0, false
}

func condString(c *v1.PodCondition) string {
	if c == nil {
		return "<none>"
	}
	return fmt.Sprintf("%s/%s %q", c.Status, c.Reason, c.Message)
}

func stateName(s v1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return "terminated"
	case s.Waiting != nil:
		return "waiting"
	}
	return "unknown"
}

func terminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// isAPIStatus reports whether err is an answer of the API server (as opposed to a
// transport failure).
func isAPIStatus(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st)
}
