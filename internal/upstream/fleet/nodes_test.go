package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/go-logr/logr/testr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/simkubelet"
)

// pauseSwitch stalls one agent's traffic as a SIGSTOP does: while paused, no request
// leaves and no answer or watch event is read; resume lets them go on.
type pauseSwitch struct {
	mu     sync.Mutex
	resume chan struct{} // non-nil while paused
}

func (p *pauseSwitch) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resume == nil {
		p.resume = make(chan struct{})
	}
}

func (p *pauseSwitch) unpause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resume != nil {
		close(p.resume)
		p.resume = nil
	}
}

func (p *pauseSwitch) wait() {
	p.mu.Lock()
	c := p.resume
	p.mu.Unlock()
	if c != nil {
		<-c
	}
}

func (p *pauseSwitch) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(req *http.Request) (*http.Response, error) {
		p.wait()
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body = pausedBody{resp.Body, p}
		}
		return resp, err
	})
}

type pausedBody struct {
	body interface {
		Read([]byte) (int, error)
		Close() error
	}
	p *pauseSwitch
}

func (b pausedBody) Read(buf []byte) (int, error) {
	n, err := b.body.Read(buf)
	b.p.wait()
	return n, err
}

func (b pausedBody) Close() error { return b.body.Close() }

// requestCount counts one agent's requests by "METHOD resource" (watches aside).
type requestCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCount) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Query().Get("watch") != "true" {
			parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
			res := ""
			for i, s := range parts {
				if s == "nodes" || s == "leases" || s == "pods" || s == "events" {
					res = s
					if i+2 < len(parts) {
						res += "/" + parts[i+2]
					}
				}
			}
			c.mu.Lock()
			c.n[req.Method+" "+res]++
			c.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (c *requestCount) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.n
	c.n = map[string]int{}
	return out
}

// markUnknown does what the node-lifecycle controller does to a node whose kubelet stopped
// posting status (tryUpdateNodeHealth and the NoExecute tainting pass in
// pkg/controller/nodelifecycle/node_lifecycle_controller.go): the kubelet's conditions go
// Unknown (reason NodeStatusUnknown) and the node is tainted unreachable.
func markUnknown(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	now := metav1.Now()
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node %s: %v", name, err)
	}
	for i := range n.Status.Conditions {
		c := &n.Status.Conditions[i]
		switch c.Type {
		case v1.NodeReady, v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure:
			c.Status, c.Reason, c.Message, c.LastTransitionTime = v1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.", now
		}
	}
	if n, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("mark node %s Unknown: %v", name, err)
	}
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute, TimeAdded: &now})
	if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("taint node %s: %v", name, err)
	}
}

func nodeReady(ctx context.Context, cs kubernetes.Interface, name string) (*v1.Node, bool) {
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return n, c.Status == v1.ConditionTrue
		}
	}
	return n, false
}

// An agent paused past the node-monitor grace period finds its nodes marked Unknown and
// tainted unreachable by the node-lifecycle controller; once it resumes, it reports them
// Ready again within NodeStatusUpdateFrequency (as a kubelet does), and leaves the taint
// to the controller. Nodes nobody touched cost their Lease renewals and nothing else.
func TestNodesReadyAgainAfterPause(t *testing.T) {
	srv := apiserver.Start(t)
	ctx := context.Background()
	const nodes = 4
	const update = 2 * time.Second // shortened from the kubelet's 10 s
	prefix := "pause-node-"
	pause := &pauseSwitch{}
	count := &requestCount{n: map[string]int{}}
	rc := rest.CopyConfig(srv.Config)
	rc.Wrap(count.wrap)
	rc.Wrap(pause.wrap)
	startKubelet(t, ctx, rc, simkubelet.Options{
		Nodes: nodes, NodeNamePrefix: prefix, NodeStatusUpdateFrequency: update, NodeLeaseDurationSeconds: 8,
		ProgressInterval: -1, Logger: testr.NewWithOptions(t, testr.Options{Verbosity: 0}),
	})
	for i := range nodes {
		name := fmt.Sprintf("%s%d", prefix, i)
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			_, ok := nodeReady(ctx, srv.Client, name)
			return ok, nil
		}); err != nil {
			t.Fatalf("node %s never Ready: %v", name, err)
		}
	}

	// Idle: what the nodes cost when nothing changes.
	time.Sleep(2 * update)
	count.take()
	const idle = 8 * time.Second
	time.Sleep(idle)
	got := count.take()
	total := 0
	for _, v := range got {
		total += v
	}
	perNodeMinute := float64(total) / nodes / idle.Minutes()
	t.Logf("idle requests over %v for %d nodes: %v (%.1f per node per minute, lease every %v)", idle, nodes, got, perNodeMinute, 2*time.Second)
	if got["PATCH nodes/status"] != 0 {
		t.Errorf("%d node status PATCHes while nothing changed, want 0 (the next report is due in 5 minutes)", got["PATCH nodes/status"])
	}
	if got["GET nodes"]+got["GET nodes/"+prefix+"0"] != 0 {
		t.Errorf("node GETs while idle: %v; the status loop reads its informer", got)
	}

	// Pause the agent, play the node-lifecycle controller, resume.
	pause.pause()
	for i := range nodes {
		markUnknown(ctx, t, srv.Client, fmt.Sprintf("%s%d", prefix, i))
	}
	time.Sleep(time.Second)
	resumed := time.Now()
	pause.unpause()
	for i := range nodes {
		name := fmt.Sprintf("%s%d", prefix, i)
		var n *v1.Node
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*update+10*time.Second, true, func(context.Context) (bool, error) {
			var ok bool
			n, ok = nodeReady(ctx, srv.Client, name)
			return ok, nil
		}); err != nil {
			t.Fatalf("node %s not Ready again within %v of the resume: %v", name, 5*update+10*time.Second, err)
		}
		if i == 0 {
			t.Logf("node %s Ready again %v after the resume (NodeStatusUpdateFrequency %v)", name, time.Since(resumed).Round(time.Millisecond), update)
		}
		for _, c := range n.Status.Conditions {
			if c.Status == v1.ConditionUnknown {
				t.Errorf("node %s: condition %s still Unknown: %+v", name, c.Type, c)
			}
			if c.Type == v1.NodeMemoryPressure && c.Reason != "KubeletHasSufficientMemory" {
				t.Errorf("node %s: MemoryPressure %+v, want the kubelet's reason", name, c)
			}
		}
		if !slices.ContainsFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Key == v1.TaintNodeUnreachable }) {
			t.Errorf("node %s taints %v: the unreachable taint is the controller's to remove, not the agent's", name, n.Spec.Taints)
		}
	}
}

// logLines records the lines of an agent's log, and passes them to the test's log.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger(t *testing.T, name string) logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.lines = append(l.lines, args)
		l.mu.Unlock()
		t.Log(name, prefix, args)
	}, funcr.Options{})
}

func (l *logLines) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// leaseWrites counts one agent's Lease PUTs and POSTs that the server accepted.
type leaseWrites struct{ n atomic.Int64 }

func (w *leaseWrites) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode < 300 && req.Method != http.MethodGet && strings.Contains(req.URL.Path, "/leases") {
			w.n.Add(1)
		}
		return resp, err
	})
}

// Two agents given the same node names: one started under another Identity while the
// first runs is refused at start, naming the node and the first agent; one started under
// the same Identity (two processes on one host) takes the nodes as a restarted agent
// would, and then the two find each other: each logs it, and one gives the nodes up
// instead of both renewing the Leases forever.
func TestSecondAgentWithTheSameNodes(t *testing.T) {
	srv := apiserver.Start(t)
	ctx := context.Background()
	const prefix = "dup-node-"
	opts := func(identity string, log logr.Logger) simkubelet.Options {
		return simkubelet.Options{Nodes: 2, NodeNamePrefix: prefix, Identity: identity, NodeLeaseDurationSeconds: 4,
			NodeStatusUpdateFrequency: time.Second, ProgressInterval: -1, Logger: log}
	}
	type run struct {
		cancel context.CancelFunc
		done   chan error
		log    *logLines
		writes *leaseWrites
	}
	start := func(identity, name string) *run {
		r := &run{done: make(chan error, 1), log: &logLines{}, writes: &leaseWrites{}}
		rc := rest.CopyConfig(srv.Config)
		rc.Wrap(r.writes.wrap)
		var actx context.Context
		actx, r.cancel = context.WithCancel(ctx)
		go func() { r.done <- runKubelet(actx, rc, opts(identity, r.log.logger(t, name))) }()
		return r
	}
	stop := func(r *run) error {
		r.cancel()
		select {
		case err := <-r.done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatalf("an agent did not stop within 30 s")
			return nil
		}
	}
	first := start("host-a", "a")
	defer func() {
		if err := stop(first); err != nil {
			t.Errorf("first agent: %v", err)
		}
	}()
	for i := range 2 {
		name := fmt.Sprintf("%s%d", prefix, i)
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			_, ok := nodeReady(ctx, srv.Client, name)
			return ok, nil
		}); err != nil {
			t.Fatalf("node %s never Ready: %v", name, err)
		}
	}

	// Another host: refused at start.
	other := start("host-b", "b")
	select {
	case err := <-other.done:
		held, ok := errors.AsType[*simkubelet.NodeHeldError](err)
		if !ok || held.Holder != "host-a" || !strings.HasPrefix(held.Node, prefix) {
			t.Fatalf("second agent's Run = %v; want a *simkubelet.NodeHeldError naming a node and host-a", err)
		}
		t.Logf("the second agent refused to start: %v", err)
	case <-time.After(30 * time.Second):
		other.cancel()
		t.Fatal("an agent started with another Identity on nodes another agent runs is still running after 30 s")
	}

	// The same Identity: taken, then found.
	twin := start("host-a", "twin")
	defer func() {
		if err := stop(twin); err != nil {
			t.Errorf("twin agent: %v", err)
		}
	}()
	const found = "Another writer renews the Lease"
	const gaveUp = "Leaving the node to another writer"
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return (first.log.has(gaveUp) || twin.log.has(gaveUp)) && (first.log.has(found) || twin.log.has(found)), nil
	}); err != nil {
		t.Fatalf("two agents renewing one node's Lease: no report within 30 s (found: %v/%v, gave up: %v/%v)",
			first.log.has(found), twin.log.has(found), first.log.has(gaveUp), twin.log.has(gaveUp))
	}
	// Settled: one of them renews the Leases, the other writes none.
	time.Sleep(2 * time.Second)
	a0, b0 := first.writes.n.Load(), twin.writes.n.Load()
	time.Sleep(8 * time.Second) // two lease durations
	a, b := first.writes.n.Load()-a0, twin.writes.n.Load()-b0
	t.Logf("Lease writes over 8 s after the report: first agent %d, twin %d", a, b)
	if a != 0 && b != 0 {
		t.Errorf("both agents still renew the Leases (%d and %d writes in 8 s): they flap", a, b)
	}
	if a+b == 0 {
		t.Errorf("neither agent renews the Leases any more")
	}
}

// The API server proxies `kubectl logs` and `kubectl exec` to the node's kubelet endpoint
// (status.daemonEndpoints.kubeletEndpoint on its InternalIP), which a simulated node does
// not serve: the request must fail with an error, within the API server's kubelet timeout,
// not hang.
func TestLogsOfASimulatedPodFail(t *testing.T) {
	srv := apiserver.Start(t)
	ctx := context.Background()
	ns := srv.CreateNamespace(t, "logs-").Name
	startKubelet(t, ctx, srv.Config, simkubelet.Options{Nodes: 1, NodeNamePrefix: "logs-node-", Profile: "fast",
		ProgressInterval: -1, Logger: testr.NewWithOptions(t, testr.Options{Verbosity: 0})})
	srv.CreatePod(t, apiserver.NewPod(ns, "web", "logs-node-0"))
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		p, err := srv.Client.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && p.Status.Phase == v1.PodRunning, nil
	}); err != nil {
		t.Fatalf("pod never Running: %v", err)
	}
	lctx, lcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer lcancel()
	began := time.Now()
	_, err := srv.Client.CoreV1().Pods(ns).GetLogs("web", &v1.PodLogOptions{}).DoRaw(lctx)
	took := time.Since(began)
	if err == nil {
		t.Fatalf("logs of a simulated pod: no error")
	}
	if lctx.Err() != nil {
		t.Fatalf("logs of a simulated pod still pending after %v: %v", took, err)
	}
	t.Logf("logs of a simulated pod failed after %v: %v", took.Round(time.Millisecond), err)
}
