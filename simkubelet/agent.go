// Package simkubelet is a simulated kubelet for many nodes: it registers (or adopts) Node
// objects, renews their Leases and reports their status as the kubelet does, and serves
// the pods bound to them with the kubelet's exact pod statuses, built by
// podstate.Generate from a simulated container runtime (podsim) and sent by one
// status.Manager.
//
// # How work flows
//
//   - Nodes: one ticker renews every node's Lease (every quarter of its duration, as
//     pkg/kubelet/nodelease) and one ticker reports node statuses (the kubelet's
//     nodeStatusUpdateFrequency/nodeStatusReportFrequency: a node's status is sent when
//     the server's copy, from one node informer, differs from what the agent owns, or
//     when the report is due), each through a pool of at most 16 requests in flight: no
//     goroutine per node. The Leases carry the agent's Options.Identity, so that two
//     agents never run one node unnoticed (leaseowner.go).
//   - Pods: ONE shared pod informer. With Options.ManageSingleNode it watches
//     spec.nodeName=<node>; otherwise it watches every bound pod (spec.nodeName!="", a
//     watch the API server buffers more of: see ownPodsOnly).
//     When it may adopt nodes later (a node selection), its cache holds them all, so an
//     adopted node's pods need no new watch; when it manages only the nodes of
//     Options.Nodes, it keeps only their pods (a sharded deployment's replica holds its
//     own pods, not the cluster's). Every
//     event goes to status.Manager.ObservePod (the server's copy is the PATCH base, and a
//     readiness-gate change re-evaluates Ready at once) and queues the pod.
//   - One work queue with a delaying min-heap (client-go's workqueue: one goroutine, one
//     heap entry per pod at most) holds each pod's next change time (podsim's Next), and
//     Options.Workers workers step pods: no goroutine or timer per pod. The queue never
//     hands one pod to two workers at once.
//   - Every step hands the runtime's facts to status.Manager.SyncPod, the kubelet's
//     per-pod status step; the Manager is the only writer of pods/status.
//   - A pod with a deletionTimestamp is stopped in the simulation; once its containers
//     are gone and its terminal phase is on the server, the Manager deletes it with a
//     UID precondition and grace period 0, as the kubelet's status manager does.
//
// On a restart the pods already running are resumed from their server status
// (podsim.New resumes them): no phase regression, no Ready flap, no restart counted.
package simkubelet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/simkubelet/internal/podclient"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/kubeclient"
	"github.com/podstatus/podstatus/status/promobserver"
)

const nodeNameIndex = "spec.nodeName"

// agent is one Run.
type agent struct {
	cfg      resolved
	log      logr.Logger
	cs       kubernetes.Interface
	status   *status.Manager
	recorder record.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[types.UID]

	nodes       nodeSet
	pods        podTable
	podInformer cache.SharedIndexInformer
	// nodeInformer holds the server's copy of the nodes (startNodeInformer); nil in unit
	// tests that build an agent alone.
	nodeInformer cache.SharedIndexInformer
	counts       counters
	nodeCounts   nodeCounters
	// run is a random token of this Run, on the Leases of its nodes (leaseowner.go).
	runToken  string
	simCache  podsim.Cache // shared by every simulated pod
	responses responses    // one object per pod for the informer and the Manager
	// fieldManager names the agent's status PATCHes on the server: the User-Agent's
	// product (the part before a '/'), the name the server would derive from it.
	fieldManager string
	// podClient sends the Manager's requests; Run sets it (see there), and run, given a
	// clientset alone by unit tests, uses kubeclient.New over it when it is nil.
	podClient podWriter
	// leases renews node Leases; Run sets it, and renewLease uses the clientset when it
	// is nil.
	leases *leaseWriter
	// behaviors are the Kubelet's (nil in unit tests that build an agent alone).
	behaviors *atomic.Pointer[behaviors]
	// server is the API server's address, for error messages ("" in unit tests).
	server string
}

// Kubelet is a simulated kubelet for a set of nodes: New checks its Options, Run runs it.
type Kubelet struct {
	r         resolved
	started   atomic.Bool
	behaviors atomic.Pointer[behaviors]
}

// New returns a simulated kubelet that reaches the API server through restConfig
// (required; Run copies it before changing its rate limit or transport) and runs as
// opts says. Nothing is contacted before Run. The error is a *podstatus.InputError
// (matching podstatus.ErrInvalidInput, as Options.Validate) naming every bad field, or a
// nil restConfig.
func New(restConfig *rest.Config, opts Options) (*Kubelet, error) {
	r, err := opts.resolve(restConfig)
	if err != nil {
		return nil, err
	}
	k := &Kubelet{r: r}
	k.behaviors.Store(&behaviors{list: slices.Clone(opts.Behaviors)})
	return k, nil
}

// SetBehaviors replaces Options.Behaviors, before or while the kubelet runs: the pods it
// starts running from then on follow the new list (a pod already running keeps the
// behaviour it started with). The error, a *podstatus.InputError naming the bad fields
// (Behaviors[1].RunTime), leaves the list as it was.
func (k *Kubelet) SetBehaviors(bs []Behavior) error {
	if errs := validateBehaviors(bs, field.NewPath("Behaviors")); len(errs) > 0 {
		return fmt.Errorf("simkubelet: SetBehaviors: %w", &podstatus.InputError{Errs: errs})
	}
	k.behaviors.Store(&behaviors{list: slices.Clone(bs)})
	return nil
}

// Run runs the simulated kubelet until ctx is done, then stops its workers, flushes the
// statuses still pending (bounded by Options.ShutdownTimeout) and returns nil. It returns
// an error for a client it cannot build, when the API server rejects every node it must
// create and no node selection can bring others, or when Run was called before. Other
// failed requests are logged at error level and retried with backoff; a request the
// server rejects (a 4xx that says neither "later" nor "again") is not retried in a loop
// but reported.
func (k *Kubelet) Run(ctx context.Context) error {
	if !k.started.CompareAndSwap(false, true) {
		return errors.New("simkubelet: Run: called twice; a Kubelet runs once")
	}
	r := k.r
	if r.Logger.GetSink() == nil {
		r.Logger = logr.FromContextOrDiscard(ctx)
	}
	a := newAgent(r)
	a.behaviors = &k.behaviors
	a.server = r.RESTConfig.Host

	rc := rest.CopyConfig(r.RESTConfig)
	if r.QPS <= 0 {
		rc.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	} else {
		rc.QPS = r.QPS
		rc.Burst = r.Burst
		if rc.Burst <= 0 {
			rc.Burst = int(2 * r.QPS)
		}
		// One limiter for both clients below, as a clientset shares one among its groups.
		rc.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(rc.QPS, rc.Burst)
	}
	if rc.UserAgent == "" {
		rc.UserAgent = "podstatus-fleet"
	}
	a.fieldManager, _, _ = strings.Cut(rc.UserAgent, "/")
	rc.Wrap(a.counts.wrapTransport)
	rc.Wrap(bufferWatches)
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return fmt.Errorf("simkubelet: HTTP client for %s: %w", rc.Host, err)
	}
	cs, err := kubernetes.NewForConfigAndClient(rc, hc)
	if err != nil {
		return fmt.Errorf("simkubelet: clientset for %s: %w", rc.Host, err)
	}
	// Core/v1 (pods, nodes, events) through podCodecs, on the same connection.
	pc := podConfig(rc, a.responses.held)
	core, err := newPodCoreV1(pc, hc)
	if err != nil {
		return err
	}
	// The Manager's PATCHes and DELETEs, most of the agent's requests, go over hc
	// directly (internal/podclient), their answers decoded by podCodecs.
	if a.podClient, err = podclient.New(pc, hc, a.fieldManagerName()); err != nil {
		return fmt.Errorf("simkubelet: pod client for %s: %w", rc.Host, err)
	}
	if a.leases, err = newLeaseWriter(rc, hc); err != nil {
		return err
	}
	return a.run(ctx, podClientset{Interface: cs, core: core})
}

// run is Run after the client is built; unit tests call it with a fake clientset.
func (a *agent) run(ctx context.Context, cs kubernetes.Interface) error {
	r := a.cfg
	a.cs = cs

	observer := a.counts.observer()
	if r.Registerer != nil {
		prom := promobserver.New(promobserver.Options{})
		if err := r.Registerer.Register(prom); err != nil {
			return fmt.Errorf("simkubelet: register status metrics: %w", err)
		}
		if err := a.counts.register(r.Registerer); err != nil {
			return fmt.Errorf("simkubelet: register agent metrics: %w", err)
		}
		if err := a.registerNodeMetrics(r.Registerer); err != nil {
			return fmt.Errorf("simkubelet: register node metrics: %w", err)
		}
		observer = status.Observers(observer, prom.Observer())
	}
	var kc podWriter = a.podClient
	if kc == nil {
		kc = kubeclient.New(a.cs.CoreV1(), a.fieldManagerName())
	}
	a.status = status.NewManager(leanClient{Client: kc, responses: &a.responses}, status.Options{
		Clock:          r.Clock,
		Features:       r.Features,
		Retry:          r.StatusRetry,
		Deleter:        countingDeleter{PodDeleter: kc, deletes: &a.counts.deletes},
		Logger:         a.log.WithName("status"),
		Observer:       observer,
		Workers:        r.StatusWorkers,
		RequestTimeout: 30 * time.Second,
		// Retry jitter keeps the Manager's random seed even when the simulation is
		// seeded: several agents started with one --seed must not retry in lockstep.
	})

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: a.cs.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	a.recorder = broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: "podstatus-fleet"})

	a.queue = newQueue()

	runCtx, stopLoops := context.WithCancel(context.WithoutCancel(ctx))
	var loops sync.WaitGroup
	defer func() {
		stopLoops()
		loops.Wait()
	}()
	loops.Go(func() { _ = a.status.Run(runCtx) })

	existing := a.markClusterNodes(ctx)
	err := a.ensureNodes(ctx, existing)
	if err == nil {
		err = a.claimNodes(ctx)
	}
	if err != nil {
		_ = a.shutdown(ctx, stopLoops, &loops)
		if ctx.Err() != nil {
			return nil
		}
		return err
	}

	// The pod informer.
	selector := fields.OneTermNotEqualSelector("spec.nodeName", "").String()
	if r.Nodes == 0 && r.ManageSingleNode != "" {
		selector = fields.OneTermEqualSelector("spec.nodeName", r.ManageSingleNode).String()
	}
	factory := informers.NewSharedInformerFactoryWithOptions(a.cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = selector }))
	if r.ownPodsOnly() {
		a.podInformer = factory.InformerFor(&v1.Pod{}, a.newOwnPodInformer(selector))
	} else {
		a.podInformer = factory.Core().V1().Pods().Informer()
	}
	_ = a.podInformer.SetTransform(a.transformPod)
	if err := a.podInformer.AddIndexers(cache.Indexers{nodeNameIndex: func(o any) ([]string, error) {
		if p, ok := o.(*v1.Pod); ok {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	}}); err != nil {
		return fmt.Errorf("simkubelet: pod index: %w", err)
	}
	podHandler, err := a.podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    a.onPod,
		UpdateFunc: a.onPodUpdate,
		DeleteFunc: a.onPodDelete,
	})
	if err != nil {
		return fmt.Errorf("simkubelet: pod handler: %w", err)
	}
	// The informers stop with ctx; Shutdown waits for their goroutines, so none outlives
	// Run.
	infCtx, stopInformers := context.WithCancel(ctx)
	factories := []informers.SharedInformerFactory{factory}
	defer func() {
		stopInformers()
		for _, f := range factories {
			f.Shutdown()
		}
	}()
	factory.StartWithContext(infCtx)

	// The server's copy of the nodes (and, with a node selection, the nodes to adopt).
	nf, err := a.startNodeInformer(infCtx, &loops)
	if err != nil {
		return err
	}
	factories = append(factories, nf)
	if r.BindPods {
		factories = append(factories, a.startBinder(infCtx, &loops))
	}
	// The handler's HasSynced: onPod has seen every pod of the first list.
	if !cache.WaitForCacheSync(ctx.Done(), a.podInformer.HasSynced, podHandler.HasSynced) {
		// ctx ended before the first list: nothing was stepped, only the node work can
		// be pending.
		return a.shutdown(ctx, stopLoops, &loops)
	}
	a.admitListed()

	var workers sync.WaitGroup
	for range r.Workers {
		workers.Go(func() {
			for {
				uid, shutdown := a.queue.Get()
				if shutdown {
					return
				}
				a.syncPod(uid)
				a.queue.Done(uid)
			}
		})
	}

	leaseEvery := time.Duration(r.NodeLeaseDurationSeconds) * time.Second / 4
	loops.Go(func() { a.nodeLoop(ctx, "node lease", leaseEvery, a.renewLease) })
	loops.Go(func() { a.nodeLoop(ctx, "node status", r.NodeStatusUpdateFrequency, a.reportNodeStatus) })
	if r.ProgressInterval > 0 {
		loops.Go(func() { a.progressLoop(ctx) })
	}
	a.log.Info("Fleet agent running", "nodes", a.nodes.len(), "profile", r.profile.Name, "workers", r.Workers, "statusWorkers", r.StatusWorkers)
	if r.OnRunning != nil {
		r.OnRunning(RunningEvent{Nodes: a.nodes.len()})
	}

	<-ctx.Done()
	a.queue.ShutDown()
	workers.Wait()
	return a.shutdown(ctx, stopLoops, &loops)
}

func newAgent(r resolved) *agent {
	if r.Logger.GetSink() == nil {
		r.Logger = logr.Discard()
	}
	a := &agent{cfg: r, log: r.Logger, runToken: newRunToken()}
	a.nodes.nodes = map[string]*nodeState{}
	a.nodes.space = newAddrSpace(r.identity(), podCIDRBits(r.MaxPods))
	a.pods.pods = map[types.UID]*podEntry{}
	a.responses.pods = map[types.UID]sharedPod{}
	return a
}

// newQueue is the pods' work queue: a delaying min-heap for each pod's next change.
func newQueue() workqueue.TypedRateLimitingInterface[types.UID] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[types.UID](200*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[types.UID]{Name: "fleet-pods"})
}

// shutdown stops the background loops and flushes the statuses still pending.
func (a *agent) shutdown(ctx context.Context, stopLoops context.CancelFunc, loops *sync.WaitGroup) error {
	if a.queue != nil {
		a.queue.ShutDown()
	}
	// Flush while the Manager's loop still runs: Sync waits for the PATCHes the loop has
	// in flight instead of cutting them off, then sends what is still pending.
	flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.ShutdownTimeout)
	defer cancel()
	if err := a.status.Sync(flush); err != nil {
		a.log.Info("Some statuses were not flushed before shutdown", "err", err)
	}
	stopLoops()
	loops.Wait()
	a.logProgress()
	return nil
}

// retry calls fn until it succeeds, fails for good or ctx is done, backing off from
// 200 ms to 10 s with 20% jitter (apimachinery's wait.Backoff), on the agent's clock. An
// answer that will never succeed (rejected, see rejected) is logged at error level and
// returned at once. Any other failure (a server that is down, unreachable or overloaded)
// is retried: the first is logged at error level with what to check, the next ones at
// V(1) only (the progress line counts them as errors), and a success after failures is
// logged once. It returns nil on success, ctx's error when ctx ended first.
func (a *agent) retry(ctx context.Context, what string, fn func() error) error {
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: math.MaxInt32, Cap: 10 * time.Second}
	timer := backoff.DelayFunc().Timer(a.cfg.Clock)
	defer timer.Stop()
	for failures := 0; ; failures++ {
		err := fn()
		if err == nil {
			if failures > 0 {
				a.log.Info("Request succeeded after failures", "what", what, "failures", failures)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a.counts.errors.Add(1)
		if rejected(err) {
			a.log.Error(err, "Request rejected; not retrying", "what", what)
			return err
		}
		if failures == 0 {
			a.log.Error(err, "Request failed; retrying with backoff (up to every 10s) until it succeeds: check that the API server is up and reachable at this address, and the kubeconfig's credentials",
				"what", what, "server", a.server)
		} else {
			a.log.V(1).Info("Request failed again; retrying", "what", what, "failures", failures+1, "err", err)
		}
		timer.Next()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C():
		}
	}
}

// rejected reports whether err is an answer the same request will get again: a 4xx from
// the API server (400 Bad Request, 401, 403 Forbidden, 404 Not Found, 422 Invalid, ...)
// other than those that say "later" or "again" (408 Request Timeout, 409 Conflict, 429
// Too Many Requests). Transport errors and 5xx are worth retrying.
func rejected(err error) bool {
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		return false
	}
	switch code := s.Status().Code; code {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return false
	default:
		return code >= 400 && code < 500
	}
}

// stripManagedFields drops managedFields from informer objects: the agent never reads
// them, and they are a large share of a pod's memory.
func stripManagedFields(o any) (any, error) {
	// Only when there are some: an object without them is not written to, as a client
	// may share it with others (client-go's fake clientset hands one object to every
	// watcher).
	if acc, err := meta.Accessor(o); err == nil && acc.GetManagedFields() != nil {
		acc.SetManagedFields(nil)
	}
	return o, nil
}

// fieldManagerName is the field manager of the agent's PATCHes: fieldManager, or
// podstatus-fleet when it is empty (a User-Agent that starts with '/', or unit tests that
// call run without Run).
func (a *agent) fieldManagerName() string { return cmp.Or(a.fieldManager, "podstatus-fleet") }

// leanClient is the status.Client the Manager uses: the pods it returns (PATCH responses
// and GETs, which the Manager keeps as the base of its next patch, one per pod) lose their
// managedFields, as informer objects do. Patches are computed from the base's status,
// generation and resourceVersion only, so they are unchanged. Every PATCH response goes
// through responses, which shares one object per pod with the informer.
// podWriter is what the Manager is given to send its requests with: podclient's Client
// in Run, kubeclient's over the fake clientset in unit tests.
type podWriter interface {
	status.Client
	status.PodDeleter
}

type leanClient struct {
	status.Client
	responses *responses
}

func (c leanClient) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	p, err := c.Client.GetPod(ctx, namespace, name)
	if p != nil {
		lean(p)
	}
	return p, err
}

func (c leanClient) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	p, err := c.Client.PatchPodStatus(ctx, namespace, name, patch)
	if p != nil {
		lean(p)
		if err == nil {
			p = c.responses.fromPatch(p)
		}
	}
	return p, err
}

// lean drops the managedFields of p, a pod decoded for the caller alone, and interns its
// strings, unless podCodecs already did (it decodes none) or p is being deleted (it is
// gone after a watch event or two).
func lean(p *v1.Pod) {
	if p.ManagedFields == nil {
		return
	}
	p.ManagedFields = nil
	if p.DeletionTimestamp == nil {
		internPod(p)
	}
}

// responses makes the informer's cache and the Manager's patch base one object instead of
// two equal ones (a pod's largest cost, some 4 KB each): a PATCH response and the watch
// event of the same resourceVersion are the same stored object, and whichever of the two
// reaches the agent second is replaced by the first. The response usually comes first: the
// informer then stores it instead of the copy it just decoded (transformPod). When the
// event comes first, the Manager is given the informer's object instead of the response
// (leanClient.PatchPodStatus); without that, the response stayed as a second copy of the
// pod until its next event: for a pod that is Running and Ready, until it is deleted.
//
// It holds, per pod, the newest object one side has and the other may still bring: a
// PATCH response until its watch event, or the newest watch event's object (the one the
// informer holds) until a response of its resourceVersion. Each entry points at an object
// the informer or the Manager holds anyway; onPodDelete drops it.
type responses struct {
	mu   sync.Mutex
	pods map[types.UID]sharedPod
}

// sharedPod is one pod's entry in responses.
type sharedPod struct {
	pod     *v1.Pod
	watched bool // pod is the informer's object (a watch event), not a PATCH response
}

// fromPatch takes a PATCH response and returns the object the Manager keeps: the
// informer's, if its watch event came first, else p itself (kept for its event).
func (r *responses) fromPatch(p *v1.Pod) *v1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.pods[p.UID]; ok && s.watched && s.pod.ResourceVersion == p.ResourceVersion {
		delete(r.pods, p.UID)
		return s.pod
	}
	r.pods[p.UID] = sharedPod{pod: p}
	return p
}

// fromWatch takes a watch event's pod (or a listed one) and returns the object the
// informer keeps: the Manager's PATCH response of the same resourceVersion if there is
// one, else p itself (kept for a response that may follow).
func (r *responses) fromWatch(p *v1.Pod) *v1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.pods[p.UID]; ok && !s.watched {
		if s.pod.ResourceVersion == p.ResourceVersion {
			delete(r.pods, p.UID)
			return s.pod
		}
		if c, err := resourceversion.CompareResourceVersion(s.pod.ResourceVersion, p.ResourceVersion); err == nil && c > 0 {
			// A response newer than this event (another writer's change came between):
			// it waits for its own event.
			return p
		}
	}
	// An older response is dropped: the Manager holds it if it is newer than its base.
	r.pods[p.UID] = sharedPod{pod: p, watched: true}
	return p
}

// held returns the object responses holds for the pod version (uid, rv), if any: a PATCH
// response whose watch event has not come yet, or the watch event's object (the
// informer's) whose PATCH response has not. The other of the two carries the same stored
// object, and podDecoder gives it a copy of this one instead of decoding it (fromWatch
// and fromPatch then pair them as usual).
func (r *responses) held(uid, rv []byte) *v1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.pods[types.UID(uid)]; ok && s.pod.ResourceVersion == string(rv) {
		return s.pod
	}
	return nil
}

// forget drops uid's entry (the pod left the informer).
func (r *responses) forget(uid types.UID) {
	r.mu.Lock()
	delete(r.pods, uid)
	r.mu.Unlock()
}

// transformPod is the pod informer's transform: managedFields go, a relisted pod the
// informer holds at the same version keeps the informer's object (informerHolds), and a
// pod whose watch event carries the object of the agent's own PATCH (same UID and
// resourceVersion: the same stored object) is replaced by the PATCH response the Manager
// already holds (see responses). Both are read-only from then on: informer objects and Manager bases are
// never modified.
func (a *agent) transformPod(o any) (any, error) {
	p, ok := o.(*v1.Pod)
	if !ok {
		return stripManagedFields(o)
	}
	if held := a.informerHolds(p); held != nil {
		return held, nil
	}
	if p.ManagedFields != nil && p.DeletionTimestamp == nil {
		// A shallow copy, not a write to the event's object: a client (client-go's fake
		// clientset, for one) may share it with others. An object with managedFields
		// comes from a real API server's watch, decoded for this informer alone: its
		// strings can be interned in place. A deleting pod keeps them: it is gone after
		// an event or two (its terminal status, its deletion), and copying and interning
		// each of those events' objects cost a few percent of the agent's CPU while
		// deleting.
		c := *p
		c.ManagedFields = nil
		p = &c
		internPod(p)
	}
	return a.responses.fromWatch(p), nil
}

// informerHolds returns the pod object the informer holds for p if it is the same stored
// version (UID and resourceVersion), else nil. A relist brings every pod again: the
// reflector lists again whenever a watch ends before it has delivered anything, which the
// API server causes when it closes a watcher that falls behind (cache_watcher.go, "Forcing
// watcher close due to unresponsiveness"; a watch of one node's pods gets a buffer of 10
// events, watch_cache_history.go). Without this, every pod of the list replaced its
// informer object by an equal copy while the Manager kept the old one as its base: two
// pod objects per pod until the next status change, for a pod that is Running and Ready,
// until it is deleted. The transform runs under the informer queue's lock, which its
// processing holds too before it writes to the indexer, so the lookup takes the locks in
// the order the informer does.
func (a *agent) informerHolds(p *v1.Pod) *v1.Pod {
	if p.ResourceVersion == "" || a.podInformer == nil {
		return nil
	}
	o, ok, err := a.podInformer.GetIndexer().GetByKey(cache.ObjectName{Namespace: p.Namespace, Name: p.Name}.String())
	if !ok || err != nil {
		return nil
	}
	if cur, _ := o.(*v1.Pod); cur != nil && cur.UID == p.UID && cur.ResourceVersion == p.ResourceVersion {
		return cur
	}
	return nil
}
