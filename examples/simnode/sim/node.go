package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/status"
)

// Config sets up a run.
type Config struct {
	// Pods is how many pods to run; their kinds cycle through Kinds(). Default 7.
	Pods int
	// Seed draws every pod's timing. The same seed gives the same run.
	Seed uint64
	// Seconds is how long to simulate. Default 60.
	Seconds int
	// Namespace and Node name where the pods live. Defaults "default" and "simnode".
	Namespace, Node string
	// Start is the simulated time at second 0. Default 2026-01-01T00:00:00Z.
	Start time.Time
	// Tick, when non-nil, is called after every simulated second (to pace a run in real
	// time, or to stop it early by returning an error).
	Tick func(second int) error
}

func (c Config) withDefaults() Config {
	if c.Pods <= 0 {
		c.Pods = len(Kinds())
	}
	if c.Seconds <= 0 {
		c.Seconds = 60
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.Node == "" {
		c.Node = "simnode"
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return c
}

// lbDelay is how long the load-balancer controller takes to register a pod whose
// containers are ready (and to deregister one that is not).
const lbDelay = 2

// simPod is one pod of the run.
type simPod struct {
	name      string
	kind      Kind
	script    script
	createAt  int
	ip        string
	pod       *v1.Pod // the server's copy, as the informer last saw it
	created   bool
	deleted   bool
	finished  bool // TerminatePod called
	seenConds []v1.PodCondition
	readyAt   int // when the LB controller first saw ContainersReady True; -1 if not
	latency   int
}

// counting wraps the node agent's client to count its requests and record its patches.
type counting struct {
	status.Client
	mu      sync.Mutex
	gets    int
	patches []sentPatch
}

type sentPatch struct {
	pod   string
	patch []byte
}

func (c *counting) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	c.mu.Lock()
	c.gets++
	c.mu.Unlock()
	return c.Client.GetPod(ctx, namespace, name)
}

func (c *counting) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	c.mu.Lock()
	c.patches = append(c.patches, sentPatch{pod: name, patch: slices.Clone(patch)})
	c.mu.Unlock()
	return c.Client.PatchPodStatus(ctx, namespace, name, patch)
}

// skips counts the syncs that needed no PATCH.
type skips struct {
	mu sync.Mutex
	n  int
}

func (s *skips) onSkip(ev status.SkipEvent) {
	if ev.Reason == status.SkipUnchanged {
		s.mu.Lock()
		s.n++
		s.mu.Unlock()
	}
}

// Run simulates cfg against cluster and returns the report.
func Run(ctx context.Context, cluster Cluster, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	clk := clocktesting.NewFakeClock(cfg.Start)
	client := &counting{Client: cluster}
	sk := &skips{}
	mgr := status.NewManager(client, status.Options{Clock: clk, Observer: &status.Observer{OnSkip: sk.onSkip}, Retry: status.RetryOptions{Seed: &cfg.Seed}})

	kinds := Kinds()
	pods := make([]*simPod, cfg.Pods)
	for i := range pods {
		k := kinds[i%len(kinds)]
		pods[i] = &simPod{name: fmt.Sprintf("%s-%d", k, i), kind: k, script: newScript(k, r),
			createAt: (i * 2) % 10, ip: fmt.Sprintf("10.244.%d.%d", i/250, i%250+2), readyAt: -1, latency: -1}
	}

	index := make(map[string]int, len(pods))
	for i, p := range pods {
		index[p.name] = i
	}
	rep := &Report{Start: cfg.Start}
	changes := 0
	for sec := 0; sec <= cfg.Seconds; sec++ {
		now := cfg.Start.Add(time.Duration(sec) * time.Second)
		clk.SetTime(now)
		client.patches = client.patches[:0]

		for _, p := range pods {
			if !p.created && sec >= p.createAt {
				if err := create(ctx, cluster, cfg, p, now); err != nil {
					return nil, err
				}
				mgr.ObservePod(p.pod) // the informer's ADDED event
			}
		}
		// The informer: every pod's server copy goes to the manager, as a watch delivers it.
		if err := observe(ctx, cluster, mgr, pods); err != nil {
			return nil, err
		}
		if err := loadBalancer(ctx, cluster, pods, sec, now); err != nil {
			return nil, err
		}
		if err := observe(ctx, cluster, mgr, pods); err != nil {
			return nil, err
		}
		for _, p := range pods {
			if !p.created || p.finished {
				continue
			}
			changed, err := agentStep(ctx, cluster, mgr, cfg, p, sec, now)
			if err != nil {
				return nil, err
			}
			if changed {
				changes++
			}
		}
		if err := mgr.Sync(ctx); err != nil {
			return nil, fmt.Errorf("second %d: sync: %w", sec, err)
		}
		// The manager syncs pods in no particular order; the timeline lists them in pod order.
		slices.SortStableFunc(client.patches, func(a, b sentPatch) int { return index[a.pod] - index[b.pod] })
		for _, sp := range client.patches {
			rep.Timeline = append(rep.Timeline, Event{At: sec, Pod: sp.pod, What: "patch", Patch: sp.patch, Summary: digest(sp.patch)})
		}
		if err := observe(ctx, cluster, mgr, pods); err != nil {
			return nil, err
		}
		for _, p := range pods {
			rep.Timeline = append(rep.Timeline, transitions(p, sec)...)
		}
		if cfg.Tick != nil {
			if err := cfg.Tick(sec); err != nil {
				return nil, err
			}
		}
	}

	s := &rep.Summary
	s.Pods, s.SimulatedSeconds, s.StatusChanges, s.PatchesSkipped, s.Gets = cfg.Pods, cfg.Seconds, changes, sk.n, client.gets
	for _, e := range rep.Timeline {
		if e.What == "patch" {
			s.PatchesSent++
		}
	}
	s.Requests = s.Gets + s.PatchesSent
	if changes > 0 {
		s.RequestsPerChange = float64(s.Requests) / float64(changes)
	}
	for _, p := range pods {
		ps := PodSummary{Name: p.name, Kind: p.kind, Phase: string(p.pod.Status.Phase), Ready: "-", SandboxLatencySeconds: p.latency}
		if c := conditions.Get(p.pod.Status.Conditions, v1.PodReady); c != nil {
			ps.Ready = string(c.Status)
		}
		s.PerPod = append(s.PerPod, ps)
	}
	return rep, nil
}

// create makes the pod on the server and, as the scheduler, marks it PodScheduled.
func create(ctx context.Context, cluster Cluster, cfg Config, p *simPod, now time.Time) error {
	if _, err := cluster.CreatePod(ctx, podSpec(p.kind, cfg.Namespace, p.name, cfg.Node)); err != nil {
		return err
	}
	got, err := cluster.WriteCondition(ctx, cfg.Namespace, p.name, v1.PodCondition{
		Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)})
	if err != nil {
		return err
	}
	p.pod, p.created = got, true
	return nil
}

// observe refreshes every pod's server copy and hands changed ones to the manager.
func observe(ctx context.Context, cluster Cluster, mgr *status.Manager, pods []*simPod) error {
	for _, p := range pods {
		if !p.created {
			continue
		}
		got, err := cluster.Peek(ctx, p.pod.Namespace, p.name)
		if err != nil {
			return fmt.Errorf("read pod %s: %w", p.name, err)
		}
		if got.ResourceVersion != p.pod.ResourceVersion {
			mgr.ObservePod(got)
		}
		p.pod = got
	}
	return nil
}

// loadBalancer is the simulated load-balancer controller: it registers a pod lbDelay
// seconds after its containers are ready and then sets the pod's readiness gate True, and
// deregisters (gate False) a pod whose containers stopped being ready.
func loadBalancer(ctx context.Context, cluster Cluster, pods []*simPod, sec int, now time.Time) error {
	for _, p := range pods {
		if !p.created || !hasGate(p.pod) {
			continue
		}
		cr := conditions.Get(p.pod.Status.Conditions, v1.ContainersReady)
		ready := cr != nil && cr.Status == v1.ConditionTrue && p.pod.DeletionTimestamp == nil
		switch {
		case ready && p.readyAt < 0:
			p.readyAt = sec
		case !ready:
			p.readyAt = -1
		}
		want, reason := v1.ConditionFalse, "NotRegistered"
		if ready && sec-p.readyAt >= lbDelay {
			want, reason = v1.ConditionTrue, "Registered"
		}
		gate := conditions.Get(p.pod.Status.Conditions, GateType)
		if gate != nil && gate.Status == want {
			continue
		}
		if gate == nil && want == v1.ConditionFalse && !ready {
			continue // nothing registered yet, nothing to say
		}
		got, err := cluster.WriteCondition(ctx, p.pod.Namespace, p.name, v1.PodCondition{
			Type: GateType, Status: want, Reason: reason, LastTransitionTime: metav1.NewTime(now)})
		if err != nil {
			return err
		}
		p.pod = got
	}
	return nil
}

func hasGate(p *v1.Pod) bool {
	for _, g := range p.Spec.ReadinessGates {
		if g.ConditionType == GateType {
			return true
		}
	}
	return false
}

// agentStep is the node agent's pod sync for one pod: read the runtime's facts, build the
// status with podstate.Generate, hand it to the manager; finish a deleted pod whose
// containers stopped. It reports whether the cached status changed.
func agentStep(ctx context.Context, cluster Cluster, mgr *status.Manager, cfg Config, p *simPod, sec int, now time.Time) (bool, error) {
	f := p.script.at(sec-p.createAt, cfg.Start.Add(time.Duration(p.createAt)*time.Second), p.name, p.ip)
	if f.deleted && !p.deleted {
		got, err := cluster.DeletePod(ctx, p.pod.Namespace, p.name, now)
		if err != nil {
			return false, err
		}
		p.pod, p.deleted = got, true
		mgr.ObservePod(got)
	}
	before, cached := mgr.GetPodStatus(p.pod.UID)
	var prev *v1.PodStatus
	if cached {
		prev = &before
	}
	st, err := podstate.Generate(podstate.Input{
		Pod: p.pod, Previous: prev, Sandboxes: f.sandboxes, HostIPs: []string{"10.0.0.1"},
		Containers: f.containers, Terminal: f.terminal,
	})
	if err != nil {
		return false, fmt.Errorf("pod %s: generate status: %w", p.name, err)
	}
	if err := mgr.SetPodStatus(p.pod, st); err != nil {
		return false, fmt.Errorf("pod %s: set status: %w", p.name, err)
	}
	if f.terminal && p.deleted {
		if err := mgr.TerminatePod(p.pod); err != nil {
			return false, fmt.Errorf("pod %s: terminate: %w", p.name, err)
		}
		p.finished = true
	}
	after, _ := mgr.GetPodStatus(p.pod.UID)
	return !cached || !apiequality.Semantic.DeepEqual(before, after), nil
}

// transitions returns the condition changes on the server since the last look.
func transitions(p *simPod, sec int) []Event {
	if !p.created {
		return nil
	}
	var out []Event
	for _, c := range p.pod.Status.Conditions {
		old := conditions.Get(p.seenConds, c.Type)
		if old != nil && old.Status == c.Status && old.Reason == c.Reason {
			continue
		}
		by := "node-agent"
		switch {
		case c.Type == GateType:
			by = "lb-controller"
		case c.Type == v1.PodScheduled && old == nil:
			by = "scheduler"
		}
		out = append(out, Event{At: sec, Pod: p.name, What: "condition", Condition: string(c.Type), Status: string(c.Status),
			Reason: c.Reason, LastTransitionTime: c.LastTransitionTime.UTC().Format(time.RFC3339), By: by})
		if c.Type == v1.PodReadyToStartContainers && c.Status == v1.ConditionTrue && p.latency < 0 {
			if s := conditions.Get(p.pod.Status.Conditions, v1.PodScheduled); s != nil {
				p.latency = int(c.LastTransitionTime.Sub(s.LastTransitionTime.Time) / time.Second)
			}
		}
	}
	p.seenConds = slices.Clone(p.pod.Status.Conditions)
	return out
}
