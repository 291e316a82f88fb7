// Package provider is a virtual-kubelet provider backed by podsim, the simulated runtime
// of podstatus: every pod bound to the node goes through sandbox creation, init
// containers, probes, restarts and graceful termination as a CRI runtime would run it,
// and its status is the kubelet v1.37.0's, computed from the simulated runtime's facts.
//
// With Config.Status set, statuses go through vkstatus.Client.SyncPod (the status
// Manager writes them, one PATCH per change); without it the provider computes the same
// statuses with podstate.Generate and podstate.Stamp and virtual-kubelet writes them its
// own way (a PUT of the whole pod), which is how a careful provider works today: the two
// modes differ only in the write path.
package provider

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/vkstatus"
)

// DefaultPeriod is how often Run steps the pods whose simulated runtime has a change due.
const DefaultPeriod = 100 * time.Millisecond

// Config configures a Provider.
type Config struct {
	// Node is the simulated node (its name and IPs). Node.Name is required.
	Node podsim.Node
	// IPAM hands out pod IPs. Required.
	IPAM *podsim.IPAM
	// Profile is the simulated runtime's timing (podsim.Default(), podsim.Fast()).
	Profile podsim.Profile
	// Seed makes runs reproducible (podsim.Config.Seed).
	Seed uint64
	// Pods is virtual-kubelet's pod lister (nodeutil.ProviderConfig.Pods): the provider
	// reads the newest server copy of each pod from it. Required.
	Pods corev1listers.PodLister
	// Status, when set, receives every status through SyncPod. nil: stock
	// virtual-kubelet, the provider stamps statuses itself.
	Status *vkstatus.Client
	// Clock is the simulation's time, and Run's ticker (tests drive Run by stepping a
	// fake clock). nil is the real clock.
	Clock clock.WithTicker
	// Period is how often Run looks for due pods. Default DefaultPeriod.
	Period time.Duration
	// Logger receives errors. Default: discard.
	Logger logr.Logger
}

// Provider is a virtual-kubelet provider (nodeutil.Provider and node.PodNotifier) whose
// pods run in podsim. Its methods are safe for concurrent use; Run does the simulation.
type Provider struct {
	cfg    Config
	cache  podsim.Cache
	mu     sync.Mutex
	pods   map[string]*entry // by namespace/name
	notify func(*v1.Pod)
	wake   chan struct{}
}

// entry is one pod. Only Run's goroutine calls sim's methods; the fields are written
// under Provider.mu.
type entry struct {
	pod    *v1.Pod        // the newest copy virtual-kubelet handed over
	worker *podsim.Worker // nil until the first step
	status *v1.PodStatus  // the last status notified
	next   time.Time
	dirty  bool
	done   bool
}

// New returns a Provider. The error names the Config field at fault.
func New(cfg Config) (*Provider, error) {
	switch {
	case cfg.Node.Name == "":
		return nil, fmt.Errorf("provider: New: Config.Node.Name: Required value")
	case cfg.IPAM == nil:
		return nil, fmt.Errorf("provider: New: Config.IPAM: Required value")
	case cfg.Pods == nil:
		return nil, fmt.Errorf("provider: New: Config.Pods: Required value")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Period <= 0 {
		cfg.Period = DefaultPeriod
	}
	return &Provider{cfg: cfg, pods: map[string]*entry{}, wake: make(chan struct{}, 1)}, nil
}

func key(ns, name string) string { return ns + "/" + name }

func (p *Provider) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// NotifyPods registers virtual-kubelet's status callback (node.PodNotifier).
func (p *Provider) NotifyPods(_ context.Context, f func(*v1.Pod)) {
	p.mu.Lock()
	p.notify = f
	p.mu.Unlock()
}

// CreatePod starts simulating pod.
func (p *Provider) CreatePod(_ context.Context, pod *v1.Pod) error {
	p.mu.Lock()
	p.pods[key(pod.Namespace, pod.Name)] = &entry{pod: pod.DeepCopy(), dirty: true}
	p.mu.Unlock()
	p.poke()
	return nil
}

// UpdatePod hands the simulation a new copy of the pod.
func (p *Provider) UpdatePod(_ context.Context, pod *v1.Pod) error {
	return p.update(pod)
}

// DeletePod starts the graceful termination of the pod (the copy carries the
// deletionTimestamp); the terminal status follows once its containers stopped.
func (p *Provider) DeletePod(_ context.Context, pod *v1.Pod) error {
	return p.update(pod)
}

func (p *Provider) update(pod *v1.Pod) error {
	p.mu.Lock()
	e := p.pods[key(pod.Namespace, pod.Name)]
	if e == nil || e.pod.UID != pod.UID {
		p.mu.Unlock()
		return errdefs.NotFoundf("pod %s/%s is not simulated", pod.Namespace, pod.Name)
	}
	e.pod, e.dirty = pod.DeepCopy(), true
	p.mu.Unlock()
	p.poke()
	return nil
}

// GetPod returns the provider's copy of the pod, with its last status.
func (p *Provider) GetPod(_ context.Context, namespace, name string) (*v1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.pods[key(namespace, name)]
	if e == nil {
		return nil, errdefs.NotFoundf("pod %s/%s is not simulated", namespace, name)
	}
	out := e.pod.DeepCopy()
	if e.status != nil {
		out.Status = *e.status.DeepCopy()
	}
	return out, nil
}

// GetPodStatus returns the pod's last status.
func (p *Provider) GetPodStatus(ctx context.Context, namespace, name string) (*v1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods lists the simulated pods that still run: on the server and not deleted and
// stopped.
func (p *Provider) GetPods(context.Context) ([]*v1.Pod, error) {
	p.mu.Lock()
	keys := make([]string, 0, len(p.pods))
	for k := range p.pods {
		keys = append(keys, k)
	}
	p.mu.Unlock()
	var out []*v1.Pod
	for _, k := range keys {
		ns, name := splitKey(k)
		p.mu.Lock()
		done := p.pods[k] != nil && p.pods[k].done
		p.mu.Unlock()
		pod, err := p.GetPod(context.Background(), ns, name)
		if err != nil || done {
			continue
		}
		// A pod gone from the server, or deleted and stopped, no longer runs, even before
		// Run's next step releases it.
		if srv, err := p.cfg.Pods.Pods(ns).Get(name); err != nil || srv.UID != pod.UID {
			continue
		}
		out = append(out, pod)
	}
	return out, nil
}

func splitKey(k string) (string, string) {
	for i := range k {
		if k[i] == '/' {
			return k[:i], k[i+1:]
		}
	}
	return "", k
}

// Run steps the pods until ctx is done, then returns nil: every Config.Period on
// Config.Clock, and at once when virtual-kubelet hands over a pod.
func (p *Provider) Run(ctx context.Context) error {
	t := p.cfg.Clock.NewTicker(p.cfg.Period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		case <-p.wake:
		}
		p.stepDue()
	}
}

func (p *Provider) stepDue() {
	now := p.cfg.Clock.Now()
	p.mu.Lock()
	var due []string
	for k, e := range p.pods {
		if e.dirty || (!e.next.IsZero() && !now.Before(e.next)) || e.done || p.newServerCopy(e) {
			due = append(due, k)
		}
	}
	notify := p.notify
	p.mu.Unlock()
	for _, k := range due {
		if pod := p.step(k); pod != nil && notify != nil {
			notify(pod)
		}
	}
}

// newServerCopy reports whether the lister has a copy of the pod the simulation has not
// seen: virtual-kubelet does not hand every copy to the provider (a deleted pod none of
// whose containers runs is never passed to DeletePod), and a status step follows every
// new copy, as status.Manager.SyncPod asks.
func (p *Provider) newServerCopy(e *entry) bool {
	if e.worker == nil {
		return false
	}
	srv, err := p.cfg.Pods.Pods(e.pod.Namespace).Get(e.pod.Name)
	return err == nil && srv.UID == e.pod.UID && srv.ResourceVersion != e.worker.ResourceVersion()
}

// step advances one pod and returns the pod to notify when its status changed.
func (p *Provider) step(k string) *v1.Pod {
	p.mu.Lock()
	e := p.pods[k]
	if e == nil {
		p.mu.Unlock()
		return nil
	}
	pod := e.pod
	e.dirty = false
	p.mu.Unlock()
	// The newest server copy, when the lister has this pod: it carries the readiness
	// gates and the deletionTimestamp.
	// A pod the lister no longer has is gone from the server (CreatePod is only ever
	// called for pods the informer delivered): its simulation ends.
	srv, err := p.cfg.Pods.Pods(pod.Namespace).Get(pod.Name)
	if err != nil || srv.UID != pod.UID {
		p.forget(k, e)
		return nil
	}
	pod = srv
	if e.worker == nil {
		var syncer podsim.StatusSyncer = &stockSyncer{clock: p.cfg.Clock}
		if p.cfg.Status != nil {
			syncer = vkSyncer{p.cfg.Status}
		}
		w, _, err := podsim.NewWorker(pod, syncer, p.cfg.IPAM, podsim.Config{Node: p.cfg.Node, Profile: p.cfg.Profile,
			Seed: p.cfg.Seed, Cache: &p.cache, Clock: p.cfg.Clock})
		if err != nil {
			p.cfg.Logger.Error(err, "Cannot simulate pod", "pod", k)
			p.forget(k, e)
			return nil
		}
		p.mu.Lock()
		e.worker = w
		p.mu.Unlock()
	}
	st, err := e.worker.Sync(context.Background(), pod)
	p.mu.Lock()
	e.next, e.done = st.Next, st.Facts.Done
	p.mu.Unlock()
	if err != nil {
		p.cfg.Logger.Error(err, "Pod status step failed", "pod", k)
		return nil
	}
	out := pod.DeepCopy()
	out.Status = st.Status
	p.mu.Lock()
	changed := e.status == nil || !equality.Semantic.DeepEqual(*e.status, out.Status)
	e.status = &out.Status
	p.mu.Unlock()
	if !changed {
		return nil
	}
	return out
}

// forget drops a pod that is gone from the server.
func (p *Provider) forget(k string, e *entry) {
	if e.worker != nil {
		e.worker.Release()
	}
	p.mu.Lock()
	if p.pods[k] == e {
		delete(p.pods, k)
	}
	p.mu.Unlock()
}

// vkSyncer is the Worker's StatusSyncer with vkstatus: the status goes through
// vkstatus.Client.SyncPod (the status Manager writes it, one PATCH per change).
type vkSyncer struct{ c *vkstatus.Client }

func (s vkSyncer) SyncPod(ctx context.Context, in status.SyncPodInput) (v1.PodStatus, error) {
	got, err := s.c.SyncPod(ctx, in)
	if err != nil {
		return v1.PodStatus{}, err
	}
	return got.Status, nil
}

// stockSyncer is the Worker's StatusSyncer of stock virtual-kubelet, one per pod: the
// provider generates the status on top of the last one (podstate.Generate) and stamps
// its times with its clock (podstate.Stamp); virtual-kubelet writes it its own way.
type stockSyncer struct {
	clock clock.PassiveClock
	last  *v1.PodStatus
}

func (s *stockSyncer) SyncPod(_ context.Context, in status.SyncPodInput) (v1.PodStatus, error) {
	pin := podstate.Input{Pod: in.Pod, OldStatus: s.last, Runtime: in.Runtime}
	st, err := podstate.Generate(pin)
	if err == nil {
		pin.Now = metav1.NewTime(s.clock.Now())
		err = podstate.Stamp(&st, pin)
	}
	if err != nil {
		return v1.PodStatus{}, err
	}
	s.last = st.DeepCopy()
	return st, nil
}

var errNotSupported = errdefs.InvalidInput("not supported by the simulated runtime")

// GetContainerLogs is not supported.
func (p *Provider) GetContainerLogs(context.Context, string, string, string, api.ContainerLogOpts) (io.ReadCloser, error) {
	return nil, errNotSupported
}

// RunInContainer is not supported.
func (p *Provider) RunInContainer(context.Context, string, string, string, []string, api.AttachIO) error {
	return errNotSupported
}

// AttachToContainer is not supported.
func (p *Provider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errNotSupported
}

// GetStatsSummary returns an empty summary for the node.
func (p *Provider) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: p.cfg.Node.Name}}, nil
}

// GetMetricsResource returns no metrics.
func (p *Provider) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) { return nil, nil }

// PortForward is not supported.
func (p *Provider) PortForward(context.Context, string, string, int32, io.ReadWriteCloser) error {
	return errNotSupported
}
