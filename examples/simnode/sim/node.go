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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/status"
)

// Config sets up a run.
type Config struct {
	// Pods is how many pods to run; their kinds cycle through Kinds(). Default 7.
	Pods int
	// Seed draws every pod's timing (it is podsim's Config.Seed) and when the
	// KindTerminating pods are deleted. The same seed gives the same run.
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

// podCIDR is the simulated node's pod CIDR: room for every pod a run may have.
const podCIDR = "10.244.0.0/14"

// hostIP is the simulated node's IP.
const hostIP = "10.0.0.1"

// lbDelay is how long the load-balancer controller takes to register a pod whose
// containers are ready (and to deregister one that is not).
const lbDelay = 2

// simPod is one pod of the run.
type simPod struct {
	name     string
	kind     Kind
	createAt int
	deleteAt int     // when the user deletes the pod (seconds since the start); -1: never
	pod      *v1.Pod // the server's copy, as the informer last saw it
	created  bool
	deleted  bool // the user deleted it (graceful deletion under way)
	// the node agent's state of the pod
	worker *podsim.Worker
	gone   bool // the node agent deleted the pod object
	// deleteReported: the timeline has the pod's last conditions and its DELETE.
	deleteReported bool
	seenConds      []v1.PodCondition
	readyAt        int // when the LB controller first saw ContainersReady True; -1 if not
	latency        int
}

// deleter is the Manager's status.PodDeleter: the Cluster's DeleteFinishedPod.
type deleter struct{ c Cluster }

func (d deleter) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	return d.c.DeleteFinishedPod(ctx, namespace, name, uid)
}

// counting wraps the node agent's client to count its requests and record its patches
// and the pods they wrote.
type counting struct {
	status.Client
	mu   sync.Mutex
	gets int
	// peeks counts the reads of pods standing in for the informer's watch (observe,
	// on the simulation's goroutine): not the agent's requests, but a real server sees
	// each as a GET.
	peeks   int
	patches []sentPatch
	last    map[types.UID]*v1.Pod // the server's answer to each pod's latest PATCH
}

// written returns the pod as the agent's latest PATCH of it left it, or nil.
func (c *counting) written(uid types.UID) *v1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[uid]
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
	p, err := c.Client.PatchPodStatus(ctx, namespace, name, patch)
	if err == nil && p != nil {
		c.mu.Lock()
		if c.last == nil {
			c.last = map[types.UID]*v1.Pod{}
		}
		c.last[p.UID] = p
		c.mu.Unlock()
	}
	return p, err
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

	kinds := Kinds()
	pods := make([]*simPod, cfg.Pods)
	for i := range pods {
		k := kinds[i%len(kinds)]
		p := &simPod{name: fmt.Sprintf("%s-%d", k, i), kind: k, createAt: (i * 2) % 10, deleteAt: -1, readyAt: -1, latency: -1}
		if k == KindTerminating {
			p.deleteAt = p.createAt + deleteMin + r.IntN(deleteMax-deleteMin+1)
		}
		pods[i] = p
	}
	mgr := status.NewManager(client, status.Options{Clock: clk, Observer: &status.Observer{OnSkip: sk.onSkip}, Retry: status.RetryOptions{Seed: &cfg.Seed},
		Deleter: deleter{cluster}})
	ipam, err := podsim.NewIPAM(podCIDR)
	if err != nil {
		return nil, err
	}
	simCfg := podsim.Config{Node: podsim.Node{Name: cfg.Node, HostIPs: []string{hostIP}},
		Profile: podsim.Default(), Seed: cfg.Seed, Cache: &podsim.Cache{}, Clock: clk}

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
				mgr.ObservePod(ctx, p.pod) // the informer's ADDED event
				worker, w, err := podsim.NewWorker(p.pod, mgr, ipam, simCfg)
				if err == nil {
					err = w.Err() // the annotations are ours and the CIDR is large: a bug
				}
				if err != nil {
					return nil, fmt.Errorf("pod %s: %w", p.name, err)
				}
				p.worker = worker
			}
			if p.created && !p.deleted && p.deleteAt >= 0 && sec >= p.deleteAt {
				got, err := cluster.DeletePod(ctx, p.pod.Namespace, p.name, now) // the user
				if err != nil {
					return nil, err
				}
				p.pod, p.deleted = got, true
				mgr.ObservePod(ctx, got)
			}
		}
		// The informer: every pod's server copy goes to the manager, as a watch delivers it.
		if err := observe(ctx, cluster, client, mgr, pods); err != nil {
			return nil, err
		}
		if err := loadBalancer(ctx, cluster, pods, sec, now); err != nil {
			return nil, err
		}
		if err := observe(ctx, cluster, client, mgr, pods); err != nil {
			return nil, err
		}
		for _, p := range pods {
			if !p.created || p.gone {
				continue
			}
			changed, err := step(ctx, mgr, p)
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
		if err := observe(ctx, cluster, client, mgr, pods); err != nil {
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
	s.Pods, s.SimulatedSeconds, s.StatusChanges, s.PatchesSkipped, s.Gets, s.InformerGets = cfg.Pods, cfg.Seconds, changes, sk.n, client.gets, client.peeks
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
		ps := PodSummary{Name: p.name, Kind: p.kind, Ready: "-", SandboxLatencySeconds: p.latency}
		if p.gone {
			s.Deletes++
		}
		if p.created {
			ps.Phase = string(p.pod.Status.Phase)
			if c := conditions.Get(p.pod.Status.Conditions, v1.PodReady); c != nil {
				ps.Ready = string(c.Status)
			}
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
func observe(ctx context.Context, cluster Cluster, client *counting, mgr *status.Manager, pods []*simPod) error {
	for _, p := range pods {
		if !p.created || p.gone {
			continue
		}
		got, err := cluster.Peek(ctx, p.pod.Namespace, p.name)
		client.peeks++
		if apierrors.IsNotFound(err) {
			// The Manager deleted it once its terminal status was on the server: the
			// informer's DELETED event. Its last version is the one the agent's last
			// PATCH wrote (a watch would have delivered it before the deletion).
			if last := client.written(p.pod.UID); last != nil {
				p.pod = last
			}
			p.worker.Release()
			mgr.ForgetPod(ctx, p.pod.UID)
			p.gone = true
			continue
		}
		if err != nil {
			return err // Cluster.Peek's errors name the pod
		}
		if got.ResourceVersion != p.pod.ResourceVersion {
			mgr.ObservePod(ctx, got)
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
		if !p.created || p.gone || !hasGate(p.pod) {
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

// step is the node agent's work on one pod for one second: the pod's worker gives the
// newest server copy to its simulated runtime and the runtime's facts to the Manager's
// SyncPod (the Manager deletes the pod object once its terminal status is on the server,
// through the Cluster's DeleteFinishedPod). It reports whether the cached status changed.
func step(ctx context.Context, mgr *status.Manager, p *simPod) (bool, error) {
	before, cached := mgr.GetPodStatus(p.pod.UID)
	st, err := p.worker.Sync(ctx, p.pod)
	if err != nil {
		return false, fmt.Errorf("pod %s: %w", p.name, err)
	}
	return !cached || !apiequality.Semantic.DeepEqual(before, st.Status), nil
}

// transitions returns the condition changes on the server since the last look.
func transitions(p *simPod, sec int) []Event {
	if !p.created || p.deleteReported {
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
	if p.gone {
		// The last version the agent wrote (observe keeps it) has been listed above;
		// then the agent's DELETE, once.
		out = append(out, Event{At: sec, Pod: p.name, What: "delete", By: "node-agent"})
		p.deleteReported = true
	}
	return out
}
