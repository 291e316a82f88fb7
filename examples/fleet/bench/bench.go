// Package bench measures a simulated kubelet — the fleet agent of examples/fleet, KWOK, or
// any agent already running — at scale against a real API server: it creates nodes and
// pods bound to them (spec.nodeName; no scheduler), waits until every pod is Running and
// Ready, optionally deletes them gracefully and waits until the agent has removed every
// pod object, and reports wall times, the requests the agent sent per pod (from the API
// server's apiserver_request_total, minus the bench's own requests), and the agent's CPU
// time and peak RSS when it runs on this machine.
//
// Command fleet-bench (cmd/fleet-bench) is its command line; Run is the same thing for
// tests and other programs.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Labels the bench puts on what it creates, so that it can find and clean it up.
const (
	// NodeLabel marks the nodes the bench created (value "true").
	NodeLabel = "fleet-bench.podstatus.io/node"
	// RunLabel marks the pods of one run (value: agent and run number).
	RunLabel = "fleet-bench.podstatus.io/run"
)

// Config says what to measure. The zero values of the optional fields are the defaults
// noted on each.
type Config struct {
	// RESTConfig reaches the API server; it must be allowed to read /metrics. Required.
	// The bench copies it, with the client-side rate limit off.
	RESTConfig *rest.Config
	// Kubeconfig is the path of a kubeconfig for the same server, handed to the agents
	// the bench starts. Required unless Agents is only AgentNone.
	Kubeconfig string

	// Agents are the agents to measure one after the other on the same server, each
	// Runs times: AgentFleet, AgentKWOK, AgentKubemark or AgentNone. Default: AgentNone.
	Agents []string
	// Runs is how many times each agent is measured, interleaved: with Agents a, b and
	// Runs 2 the order is a, b, a, b, so that a change of the machine's load over time
	// falls on every agent alike. The summary takes medians. Default 1.
	Runs int

	// Nodes is how many nodes the pods are spread over, round-robin. Default 1.
	Nodes int
	// WaitForNodes: do not create nodes; wait for Nodes Ready nodes whose names start
	// with NodeNamePrefix (an agent that creates its own, such as fleet --nodes N).
	// Otherwise the bench creates them as KWOK users do, annotated FakeNodeAnnotation,
	// labelled NodeLabel=true, without a pod CIDR, capacity or address, and deletes them
	// after each run. AgentKubemark ignores it: each hollow kubelet registers its node,
	// NodeNamePrefix followed by its number, labelled NodeLabel=true, and the bench
	// deletes those nodes after the run.
	WaitForNodes bool
	// NodeNamePrefix names the nodes. Default "fleet-bench-node-".
	NodeNamePrefix string

	// Pods is how many pods each run creates. Default 100.
	Pods int
	// Clients is how many creates (and deletes) are in flight at once. Default 20.
	Clients int
	// Delete: after all pods are Running and Ready, delete them (default grace period)
	// and wait until the agent has removed every pod object.
	Delete bool
	// Namespace holds the pods; created if missing. Default "fleet-bench".
	Namespace string

	// Profile is passed to the fleet agent as --profile. Default "fast".
	Profile string
	// AgentBin is the fleet agent binary. Default: go build of ./cmd/fleet in
	// AgentSource.
	AgentBin string
	// AgentSource is the examples/fleet module directory. Default: found from the
	// working directory upwards.
	AgentSource string
	// KWOKBin is the kwok binary. Default: kwok on PATH.
	KWOKBin string
	// KWOKStages is the Stage file passed to kwok --config. Default: KWOKFastStages.
	KWOKStages string
	// KubemarkBin is the kubemark binary (k8s.io/kubernetes/cmd/kubemark; see
	// hack/build-kubemark.sh). Required, and must be executable, when Agents holds
	// AgentKubemark.
	KubemarkBin string
	// AgentArgs are extra arguments for the agents the bench starts.
	AgentArgs []string
	// AgentPID is the process of an agent already running (AgentNone) whose CPU time
	// and peak RSS are reported. 0: not reported.
	AgentPID int
	// APIServerPID is the API server's process, whose CPU time is reported when it runs
	// on this machine. 0: not reported.
	APIServerPID int
	// Cores is how many cores the API server has, for the deletion floor (its CPU time
	// during deletion divided by Cores). Default: runtime.NumCPU().
	Cores int

	// Timeout bounds each phase (nodes Ready, pods Running and Ready, pods gone).
	// Default 10 minutes.
	Timeout time.Duration
	// Progress receives a progress line every ProgressInterval and a line per step.
	// Default: discard.
	Progress io.Writer
	// ProgressInterval defaults to 2 s.
	ProgressInterval time.Duration
}

func (c *Config) setDefaults() error {
	if c.RESTConfig == nil {
		return errors.New("no API server configuration (RESTConfig)")
	}
	if len(c.Agents) == 0 {
		c.Agents = []string{AgentNone}
	}
	for _, a := range c.Agents {
		switch a {
		case AgentNone:
		case AgentFleet, AgentKWOK, AgentKubemark:
			if c.Kubeconfig == "" {
				return fmt.Errorf("agent %q needs a kubeconfig file to be started with", a)
			}
		default:
			return fmt.Errorf("unknown agent %q (want %s, %s, %s or %s)", a, AgentFleet, AgentKWOK, AgentKubemark, AgentNone)
		}
		if a == AgentKubemark {
			if err := CheckKubemarkBin(c.KubemarkBin); err != nil {
				return fmt.Errorf("agent kubemark: KubemarkBin: %w", err)
			}
		}
	}
	if c.AgentPID != 0 && (len(c.Agents) != 1 || c.Agents[0] != AgentNone) {
		return errors.New("an agent pid only goes with the agent none")
	}
	defInt := func(p *int, def int, name string) error {
		if *p < 0 {
			return fmt.Errorf("%s must not be negative, got %d", name, *p)
		}
		if *p == 0 {
			*p = def
		}
		return nil
	}
	for _, d := range []struct {
		p    *int
		def  int
		name string
	}{{&c.Runs, 1, "runs"}, {&c.Nodes, 1, "nodes"}, {&c.Pods, 100, "pods"}, {&c.Clients, 20, "clients"}, {&c.Cores, runtime.NumCPU(), "cores"}} {
		if err := defInt(d.p, d.def, d.name); err != nil {
			return err
		}
	}
	if c.NodeNamePrefix == "" {
		c.NodeNamePrefix = "fleet-bench-node-"
	}
	if c.Namespace == "" {
		c.Namespace = "fleet-bench"
	}
	if c.Profile == "" {
		c.Profile = "fast"
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = 2 * time.Second
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return nil
}

// runner holds what one call of Run shares between runs.
type runner struct {
	cfg      Config
	cs       kubernetes.Interface
	counter  *requestCounter
	tmp      string
	fleetBin string
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Progress, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// busyAttempts bounds retryBusy: five tries over some 15 s, long enough for an API server
// that answered one request "Timeout" under the load of a run, short enough that a server
// that stays down fails the run in seconds.
const busyAttempts = 5

// retryBusy calls fn until it succeeds, fails other than with the answers of a busy API
// server (a server-side timeout, 429, 503, 504) or has been tried busyAttempts times,
// waiting 1, 2, 4, 8 s between tries and saying so on the progress output. The run's
// pods must all be created and deleted for its figures to exist; on a 2-core machine the
// server sometimes gives up on one request of thousands (its request timeout), which
// used to end the whole invocation.
func (r *runner) retryBusy(ctx context.Context, what string, fn func() error) error {
	var last error
	attempt := 0
	err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: time.Second, Factor: 2, Steps: busyAttempts},
		func(context.Context) (bool, error) {
			attempt++
			if last = fn(); last == nil {
				return true, nil
			}
			if !(apierrors.IsServerTimeout(last) || apierrors.IsTimeout(last) || apierrors.IsTooManyRequests(last) || apierrors.IsServiceUnavailable(last)) {
				return false, last
			}
			if attempt < busyAttempts {
				r.logf("warning: %s: %v; trying again in %s (attempt %d of %d)", what, last, time.Second<<(attempt-1), attempt+1, busyAttempts)
			}
			return false, nil
		})
	if err != nil && last != nil {
		return last // the answer, rather than "timed out waiting" or the context's error
	}
	return err
}

// Run measures every agent of cfg.Agents cfg.Runs times and returns the results and
// their medians. It returns an error as soon as a run fails; the results of the runs
// before it are not returned.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	rep, err := run(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return rep, nil
}

// run is Run; its errors are wrapped once, by Run.
func run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	rc := rest.CopyConfig(cfg.RESTConfig)
	rc.QPS = -1 // no client-side rate limit
	rc.Burst = 0
	rc.RateLimiter = nil
	// No gzip on the bench's own requests and watch: compressing every event of a watch
	// of every pod would take the API server's CPU from the agent being measured.
	rc.DisableCompression = true
	counter := &requestCounter{counts: RequestCounts{}}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", rc.Host, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(pingCtx).Raw(); err != nil {
		return nil, fmt.Errorf("cannot reach the API server at %s: %w", rc.Host, err)
	}
	if _, err := scrapeRequests(pingCtx, cs); err != nil {
		return nil, fmt.Errorf("%w (the bench needs /metrics: use a super-user kubeconfig)", err)
	}
	tmp, err := os.MkdirTemp("", "fleet-bench-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp) // only if empty: agent logs and binaries stay for inspection
	r := &runner{cfg: cfg, cs: cs, counter: counter, tmp: tmp}
	r.logf("API server %s reachable; agents %v, %d run(s) each, %d pods on %d node(s), %d clients; agent logs in %s",
		rc.Host, cfg.Agents, cfg.Runs, cfg.Pods, cfg.Nodes, cfg.Clients, tmp)

	if err := r.ensureNamespace(ctx); err != nil {
		return nil, err
	}
	rep := &Report{Pods: cfg.Pods, Nodes: cfg.Nodes, Clients: cfg.Clients, Delete: cfg.Delete, Runs: cfg.Runs, Profile: cfg.Profile, Cores: cfg.Cores}
	for _, s := range schedule(cfg.Agents, cfg.Runs) {
		res, err := r.once(ctx, s.agent, s.run)
		if err != nil {
			return nil, fmt.Errorf("agent %s, run %d: %w", s.agent, s.run, err)
		}
		rep.Results = append(rep.Results, *res)
	}
	rep.summarize()
	return rep, nil
}

// scheduled is one run of one agent.
type scheduled struct {
	agent string
	run   int // from 1
}

// schedule is the order of the runs: every agent's first run, in the order of agents,
// then every agent's second run, and so on.
func schedule(agents []string, runs int) []scheduled {
	var out []scheduled
	for i := 1; i <= runs; i++ {
		for _, a := range agents {
			out = append(out, scheduled{agent: a, run: i})
		}
	}
	return out
}

// CheckKubemarkBin returns an error unless path names an executable regular file, as
// Config.KubemarkBin must for AgentKubemark.
func CheckKubemarkBin(path string) error {
	if path == "" {
		return errors.New("no kubemark binary given")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

func (r *runner) ensureNamespace(ctx context.Context) error {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.cfg.Namespace}}
	_, err := r.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", r.cfg.Namespace, err)
	}
	return nil
}

// once is one run of one agent.
func (r *runner) once(ctx context.Context, agent string, run int) (res *RunResult, err error) {
	cfg := r.cfg
	runID := fmt.Sprintf("%s-%d-%d", agent, run, time.Now().Unix())
	tag := fmt.Sprintf("[%s run %d/%d]", agent, run, cfg.Runs)
	if err := r.cleanup(ctx); err != nil {
		return nil, err
	}

	nodes, err := r.prepareNodes(ctx, agent)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := r.cleanup(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = cerr
		}
	}()

	var proc *agentProc
	var pids []int
	if cfg.AgentPID != 0 {
		pids = []int{cfg.AgentPID}
	}
	if agent != AgentNone {
		if proc, err = r.startAgent(agent, run, nodes); err != nil {
			return nil, err
		}
		pids = proc.pids()
		defer func() {
			if serr := proc.stop(); serr != nil && err == nil {
				err = serr
			}
		}()
	}
	if nodes, err = r.waitNodesReady(ctx, nodes, proc); err != nil {
		return nil, err
	}
	r.logf("%s %d node(s) Ready", tag, len(nodes))

	// Let the agent settle (initial lists and watches, node status) before measuring.
	time.Sleep(time.Second)
	procBefore, apiBefore, benchProcBefore := r.procStats(pids...), r.procStats(cfg.APIServerPID), r.procStats(os.Getpid())
	serverBefore, err := scrapeRequests(ctx, r.cs)
	if err != nil {
		return nil, err
	}
	benchBefore := r.counter.snapshot()

	w, err := r.watchPods(ctx, runID, podName(runID, 0))
	if err != nil {
		return nil, err
	}
	defer w.stop()

	progress := func(phase string, begin time.Time) func() {
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			t := time.NewTicker(cfg.ProgressInterval)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					r.logf("%s %s %5.1fs: created %d, running+ready %d, deleted %d",
						tag, phase, time.Since(begin).Seconds(), w.created.Load(), w.readyCount(), w.deleted.Load())
				}
			}
		})
		return func() { close(done); wg.Wait() }
	}

	// Create.
	res = &RunResult{Agent: agent, Run: run, Pods: cfg.Pods, Nodes: len(nodes)}
	begin := time.Now()
	stopProgress := progress("create", begin)
	createErr := r.parallel(ctx, cfg.Pods, func(ctx context.Context, i int) error {
		p := newPod(cfg.Namespace, podName(runID, i), nodes[i%len(nodes)], runID)
		err := r.retryBusy(ctx, "creating pod "+p.Name, func() error {
			_, err := r.cs.CoreV1().Pods(cfg.Namespace).Create(ctx, p, metav1.CreateOptions{})
			return err
		})
		// A create the server timed out on may have been stored: its retry finds it.
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating pod %s: %w", p.Name, err)
		}
		w.created.Add(1)
		return nil
	})
	res.CreateSeconds = time.Since(begin).Seconds()
	if createErr != nil {
		stopProgress()
		return nil, createErr
	}
	readyAt, err := w.waitReady(ctx, cfg.Pods, cfg.Timeout, proc)
	stopProgress()
	if err != nil {
		return nil, err
	}
	res.ReadySeconds = readyAt.Sub(begin).Seconds()
	serverReady, err := scrapeRequests(ctx, r.cs)
	if err != nil {
		return nil, err
	}
	benchReady := r.counter.snapshot()
	procReady, apiReady := r.procStats(pids...), r.procStats(cfg.APIServerPID)
	res.SamplePodStatus = w.sampleStatus()
	if procReady != nil {
		res.AgentPrivateBytesAtReady = procReady.PrivateBytes
	}
	changesReady, haveChanges, err := proc.statusChanges(ctx)
	if err != nil {
		r.logf("warning: %v", err)
	}
	res.ReadyPodsPerSecond = float64(cfg.Pods) / res.ReadySeconds
	r.logf("%s all %d pods Running and Ready %.2fs after the first create (%.0f pods/s)", tag, cfg.Pods, res.ReadySeconds, res.ReadyPodsPerSecond)

	// Delete.
	if cfg.Delete {
		begin := time.Now()
		stopProgress := progress("delete", begin)
		delErr := r.parallel(ctx, cfg.Pods, func(ctx context.Context, i int) error {
			name := podName(runID, i)
			err := r.retryBusy(ctx, "deleting pod "+name, func() error {
				return r.cs.CoreV1().Pods(cfg.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
			})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting pod %s: %w", name, err)
			}
			return nil
		})
		if delErr != nil {
			stopProgress()
			return nil, delErr
		}
		goneAt, err := w.waitGone(ctx, cfg.Pods, cfg.Timeout, proc)
		stopProgress()
		if err != nil {
			return nil, err
		}
		res.DeleteSeconds = goneAt.Sub(begin).Seconds()
		res.DeletedPodsPerSecond = float64(cfg.Pods) / res.DeleteSeconds
		r.logf("%s all %d pods gone %.2fs after the first delete (%.0f pods/s)", tag, cfg.Pods, res.DeleteSeconds, res.DeletedPodsPerSecond)
	}

	// Requests: the server's counters, minus the bench's own. Close the bench's watch
	// first (the server counts a watch when it ends) and let the last requests land.
	w.stop()
	time.Sleep(time.Second)
	serverAfter, err := scrapeRequests(ctx, r.cs)
	if err != nil {
		return nil, err
	}
	benchAfter := r.counter.snapshot()
	res.setRequests(
		serverReady.minus(serverBefore).minus(benchReady.minus(benchBefore)),
		serverAfter.minus(serverReady).minus(benchAfter.minus(benchReady)),
		benchAfter.minus(benchBefore))
	if changes, ok, err := proc.statusChanges(ctx); err != nil {
		r.logf("warning: %v", err)
	} else if ok && haveChanges {
		res.setStatusChanges(changesReady, changes)
	}
	if st := r.procStats(pids...); st != nil && procBefore != nil && procReady != nil {
		res.AgentProcess = &ProcStats{CPUSeconds: st.CPUSeconds - procBefore.CPUSeconds, PeakRSSBytes: st.PeakRSSBytes, PrivateBytes: st.PrivateBytes, Processes: st.Processes}
		res.AgentCPUSecondsToReady = procReady.CPUSeconds - procBefore.CPUSeconds
	}
	if st := r.procStats(cfg.APIServerPID); st != nil && apiBefore != nil && apiReady != nil {
		res.APIServerCPUSeconds = st.CPUSeconds - apiBefore.CPUSeconds
		res.APIServerCPUSecondsToReady = apiReady.CPUSeconds - apiBefore.CPUSeconds
	}
	if st := r.procStats(os.Getpid()); st != nil && benchProcBefore != nil {
		res.BenchCPUSeconds = st.CPUSeconds - benchProcBefore.CPUSeconds
	}
	res.setDeletionFloor(cfg.Cores)
	if proc != nil {
		if err := proc.alive(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// podName is the name of pod i of run runID.
func podName(runID string, i int) string { return fmt.Sprintf("pod-%s-%06d", runID, i) }

// procStats sums what /proc says of pids (nil for none; pid 0 means none).
func (r *runner) procStats(pids ...int) *ProcStats {
	pids = slices.DeleteFunc(slices.Clone(pids), func(p int) bool { return p == 0 })
	if len(pids) == 0 {
		return nil
	}
	st, err := readProcStatsSum(pids)
	if err != nil {
		r.logf("warning: %v", err)
		return nil
	}
	return &st
}

// parallel calls f for 0..n-1 from Config.Clients goroutines and returns the first error.
func (r *runner) parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(r.cfg.Clients, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// newPod is a pause-like pod with one container, bound to node.
func newPod(namespace, name, node, runID string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{RunLabel: runID}},
		Spec: v1.PodSpec{
			NodeName: node,
			Containers: []v1.Container{{
				Name:  "pause",
				Image: "registry.k8s.io/pause:3.10",
			}},
			// Simulated nodes may carry KWOK's taint; no taint manager runs, but tolerate
			// it as KWOK's own examples do.
			Tolerations: []v1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
		},
	}
}

// prepareNodes creates the nodes for agent and returns their names (or, with
// WaitForNodes, returns nil: waitNodesReady finds them). For AgentKubemark it only
// returns their names: each hollow kubelet registers its own.
func (r *runner) prepareNodes(ctx context.Context, agent string) ([]string, error) {
	if r.cfg.WaitForNodes && agent != AgentKubemark {
		return nil, nil
	}
	names := make([]string, r.cfg.Nodes)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", r.cfg.NodeNamePrefix, i)
	}
	if agent == AgentKubemark {
		return names, nil
	}
	key, val, _ := strings.Cut(FakeNodeAnnotation, "=")
	// The nodes are made as KWOK users make them: the annotation and labels, no pod CIDR,
	// no capacity, no address. Each agent then brings its own model of pod addresses and
	// capacity (KWOK's node stage, the fleet agent's shared pod address pool), as on a
	// KWOK user's cluster.
	err := r.parallel(ctx, len(names), func(ctx context.Context, i int) error {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        names[i],
			Annotations: map[string]string{key: val},
			Labels:      map[string]string{NodeLabel: "true", "type": "kwok", v1.LabelHostname: names[i]},
		}}
		if _, err := r.cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %w", names[i], err)
		}
		return nil
	})
	return names, err
}

// waitNodesReady waits until every node is Ready (with WaitForNodes: until Nodes nodes
// named NodeNamePrefix* are Ready) and returns their names.
func (r *runner) waitNodesReady(ctx context.Context, names []string, proc *agentProc) ([]string, error) {
	var ready []string
	need := len(names)
	if names == nil {
		need = r.cfg.Nodes
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, r.cfg.Timeout, true, func(ctx context.Context) (bool, error) {
		list, err := r.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, fmt.Errorf("listing nodes: %w", err)
		}
		want := map[string]bool{}
		for _, n := range names {
			want[n] = true
		}
		ready = ready[:0]
		for _, n := range list.Items {
			if names != nil && !want[n.Name] || names == nil && !strings.HasPrefix(n.Name, r.cfg.NodeNamePrefix) {
				continue
			}
			for _, c := range n.Status.Conditions {
				if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
					ready = append(ready, n.Name)
				}
			}
		}
		if len(ready) >= need {
			return true, nil
		}
		if proc != nil {
			return false, proc.alive()
		}
		return false, nil
	})
	switch {
	case err == nil:
		slices.Sort(ready)
		return ready[:need], nil
	case wait.Interrupted(err) && ctx.Err() == nil:
		return nil, fmt.Errorf("only %d of %d nodes Ready after %v", len(ready), need, r.cfg.Timeout)
	}
	return nil, err
}

// cleanup force-deletes the bench's pods and the nodes labelled NodeLabel (those it
// created, and those of the hollow kubelets it started) with their leases, and waits
// until the pods are gone. Nodes an agent made itself (WaitForNodes) carry no such label
// and stay.
func (r *runner) cleanup(ctx context.Context) error {
	pods := r.cs.CoreV1().Pods(r.cfg.Namespace)
	sel := metav1.ListOptions{LabelSelector: RunLabel}
	list, err := pods.List(ctx, sel)
	if err != nil {
		return fmt.Errorf("cleanup: listing pods: %w", err)
	}
	zero := int64(0)
	err = r.parallel(ctx, len(list.Items), func(ctx context.Context, i int) error {
		err := pods.Delete(ctx, list.Items[i].Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("cleanup: deleting pod %s: %w", list.Items[i].Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	nodes, err := r.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: NodeLabel})
	if err != nil {
		return fmt.Errorf("cleanup: listing nodes: %w", err)
	}
	err = r.parallel(ctx, len(nodes.Items), func(ctx context.Context, i int) error {
		name := nodes.Items[i].Name
		if err := r.cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("cleanup: deleting node %s: %w", name, err)
		}
		// No controller manager collects a node's lease; remove it with the node.
		err := r.cs.CoordinationV1().Leases(v1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("cleanup: deleting lease %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		left, err := pods.List(ctx, metav1.ListOptions{LabelSelector: RunLabel, Limit: 1})
		if err != nil {
			return false, fmt.Errorf("cleanup: listing pods: %w", err)
		}
		return len(left.Items) == 0, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("cleanup: pods still present a minute after deleting them")
	}
	return err
}

// podWatch follows the pods of one run through one informer.
type podWatch struct {
	stopOnce sync.Once
	cancel   context.CancelFunc
	factory  informers.SharedInformerFactory

	created atomic.Int64
	deleted atomic.Int64

	// sample is the name of the pod whose latest status the watch keeps.
	sample string

	mu      sync.Mutex
	ready   map[string]bool
	nReady  int
	changed chan struct{} // closed and replaced on every change
	sampled *v1.PodStatus // sample's latest status
}

// watchPods watches the pods of run runID, keeping the latest status of the pod named
// sample.
func (r *runner) watchPods(ctx context.Context, runID, sample string) (*podWatch, error) {
	w := &podWatch{ready: map[string]bool{}, changed: make(chan struct{}), sample: sample}
	factory := informers.NewSharedInformerFactoryWithOptions(r.cs, 0,
		informers.WithNamespace(r.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{RunLabel: runID}.String()
		}))
	inf := factory.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.observe(o.(*v1.Pod)) },
		UpdateFunc: func(_, o any) { w.observe(o.(*v1.Pod)) },
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if p, ok := o.(*v1.Pod); ok {
				w.forget(p)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}
	infCtx, cancel := context.WithCancel(ctx)
	w.cancel, w.factory = cancel, factory
	factory.StartWithContext(infCtx)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		w.stop()
		return nil, errors.New("pod informer did not sync within a minute")
	}
	return w, nil
}

// stop stops the informer and waits for its goroutines to end (factory.Shutdown): none
// outlives the run that started it.
func (w *podWatch) stop() {
	w.stopOnce.Do(func() {
		w.cancel()
		w.factory.Shutdown()
	})
}

func runningAndReady(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func (w *podWatch) observe(p *v1.Pod) {
	rr := runningAndReady(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if p.Name == w.sample {
		w.sampled = &p.Status // the informer's objects are not changed, only replaced
	}
	old, seen := w.ready[p.Name]
	w.ready[p.Name] = old || rr // once Running and Ready, counted (deletion may end it)
	if !seen || rr && !old {
		if rr && !old {
			w.nReady++
		}
		w.notifyLocked()
	}
}

func (w *podWatch) forget(p *v1.Pod) {
	w.deleted.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.notifyLocked()
}

func (w *podWatch) notifyLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// sampleStatus returns a copy of the latest status of the sample pod (nil if unseen).
func (w *podWatch) sampleStatus() *v1.PodStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sampled == nil {
		return nil
	}
	return w.sampled.DeepCopy()
}

func (w *podWatch) readyCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nReady
}

// waitFor waits until cond holds and returns when it first saw it.
func (w *podWatch) waitFor(ctx context.Context, timeout time.Duration, proc *agentProc, what string, cond func() bool) (time.Time, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	for {
		w.mu.Lock()
		ok, ch := cond(), w.changed
		w.mu.Unlock()
		if ok {
			return time.Now(), nil
		}
		select {
		case <-ch:
		case <-poll.C:
			if proc != nil {
				if err := proc.alive(); err != nil {
					return time.Time{}, err
				}
			}
		case <-deadline.C:
			return time.Time{}, fmt.Errorf("%s: not done after %v (created %d, running+ready %d, deleted %d)",
				what, timeout, w.created.Load(), w.readyCount(), w.deleted.Load())
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

func (w *podWatch) waitReady(ctx context.Context, n int, timeout time.Duration, proc *agentProc) (time.Time, error) {
	return w.waitFor(ctx, timeout, proc, "waiting for all pods Running and Ready", func() bool { return w.nReady >= n })
}

func (w *podWatch) waitGone(ctx context.Context, n int, timeout time.Duration, proc *agentProc) (time.Time, error) {
	return w.waitFor(ctx, timeout, proc, "waiting for all pods to be gone", func() bool { return w.deleted.Load() >= int64(n) })
}
