package vkstatus

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/kubeclient"
)

// DefaultFieldManager is the field manager of a Client's writes when Options.FieldManager
// is empty.
const DefaultFieldManager = "virtual-kubelet"

// MetadataPolicy says what UpdateStatus does with the labels and annotations of the pod a
// provider hands over.
type MetadataPolicy int

const (
	// MetadataForward sends the labels and annotations the provider changed (see the
	// package documentation), in one PATCH of pods/status with the UID precondition.
	MetadataForward MetadataPolicy = iota
	// MetadataIgnore never writes labels or annotations.
	MetadataIgnore
)

// Options configures a Client. The zero value is valid.
type Options struct {
	// FieldManager names the agent in the pods' managedFields. Default DefaultFieldManager.
	FieldManager string
	// Status configures the status.Manager. When Status.Deleter is nil, the Client's own
	// UID-preconditioned DELETE is used (a pod is deleted only after SyncPod reported it
	// Stopped and its terminal status is on the server). Status.Clock, Logger and
	// Features are the Client's too.
	Status status.Options
	// Metadata says what happens to labels and annotations. Default MetadataForward.
	Metadata MetadataPolicy
}

// Client is a corev1client.PodsGetter for node.PodControllerConfig.PodClient: its
// UpdateStatus goes through a status.Manager, everything else (but virtual-kubelet's
// force delete, see Delete) to the wrapped PodsGetter. Wire puts it into the pod
// controller's configuration and registers EventHandler on the pod informer
// virtual-kubelet uses; Run sends the statuses. A Client that is not wired says so:
// UpdateStatus fails without the event handler, and statuses that wait for Run are
// logged at error level (ErrNotWired). Safe for concurrent use.
type Client struct {
	pods   corev1client.PodsGetter
	kc     *kubeclient.Client
	mgr    *status.Manager
	clock  clock.PassiveClock
	logger logr.Logger
	opts   Options
	owners conditions.Ownership
	// vkLog is true when logger is virtual-kubelet's (Options.Status.Logger unset).
	vkLog bool
	// handler is set once EventHandler was asked for.
	handler atomic.Bool
	watch   runWatch
	mu      sync.Mutex
	known   map[string]*podState // by namespace/name
}

// podState is what a Client remembers of one pod.
type podState struct {
	pod *v1.Pod // newest server copy
	// refLabels and refAnnotations are what the provider's next copy is compared with: its
	// previous copy, or the first server copy the Client saw.
	refLabels, refAnnotations map[string]string
	// synced is true once SyncPod produced the pod's status.
	synced bool
}

// New returns a Client writing through pods (a clientset's CoreV1()). Wire it into
// virtual-kubelet's pod controller (Wire, or PodClient and EventHandler by hand) and call
// Run.
//
// When opts.Status.Logger is not set, the Client and its Manager log through
// virtual-kubelet's logger (github.com/virtual-kubelet/virtual-kubelet/log: the one a
// context carries, else log.L): a status write that fails, and is retried, is an
// error-level line there. opts.Status.Observer receives the Manager's events as usual;
// the Client adds hooks of its own beside it.
func New(pods corev1client.PodsGetter, opts Options) *Client {
	if opts.FieldManager == "" {
		opts.FieldManager = DefaultFieldManager
	}
	kc := kubeclient.New(pods, opts.FieldManager)
	so := opts.Status
	if so.Deleter == nil {
		so.Deleter = kc
	}
	var clk clock.PassiveClock = clock.RealClock{}
	if so.Clock != nil {
		clk = so.Clock
	}
	vkLog := so.Logger.GetSink() == nil
	if vkLog {
		so.Logger = vkLogger(context.Background())
	}
	c := &Client{
		pods: pods, kc: kc, clock: clk, logger: so.Logger, vkLog: vkLog,
		opts: opts, owners: conditions.Ownership{Features: so.Features},
		known: map[string]*podState{},
	}
	so.Observer = status.Observers(so.Observer, c.observer())
	c.mgr = status.NewManager(kc, so)
	return c
}

// Manager returns the status.Manager the Client writes through, for its getters and
// setters (GetPodStatus, SetContainerReadiness, ...).
func (c *Client) Manager() *status.Manager { return c.mgr }

// Run sends the accepted statuses until ctx is done, then returns nil; see
// status.Manager.Run. Statuses accepted while no Run runs (and nothing calls the
// Manager's Run or Sync) are reported at error level after NotRunningGrace.
//
// With virtual-kubelet's logger (Options.Status.Logger unset), a ctx without a logr
// logger logs through the virtual-kubelet logger it carries, else log.L.
func (c *Client) Run(ctx context.Context) error {
	if _, err := logr.FromContext(ctx); err != nil && c.vkLog {
		ctx = logr.NewContext(ctx, vkLogger(ctx))
	}
	c.watch.running.Add(1)
	defer c.watch.running.Add(-1)
	return c.mgr.Run(ctx)
}

// EventHandler returns the handler to register on virtual-kubelet's pod informer
// (node.PodControllerConfig.PodInformer): every server copy goes to the Manager, and a
// deleted pod is forgotten.
//
// Until EventHandler is called, UpdateStatus refuses every status (ErrNotWired): a handler
// that is not registered leaves the Client without the server's copies.
func (c *Client) EventHandler() cache.ResourceEventHandler {
	c.handler.Store(true)
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observe(obj) },
		UpdateFunc: func(_, obj any) { c.observe(obj) },
		DeleteFunc: c.forget,
	}
}

func (c *Client) observe(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	c.mu.Lock()
	key := pod.Namespace + "/" + pod.Name
	st := c.known[key]
	if st == nil || st.pod.UID != pod.UID {
		st = &podState{refLabels: pod.Labels, refAnnotations: pod.Annotations}
		c.known[key] = st
	}
	st.pod = pod
	c.mu.Unlock()
	c.mgr.ObservePod(context.Background(), pod) // no context: the Manager logs with c.logger
}

func (c *Client) forget(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			return
		}
		if pod, ok = tomb.Obj.(*v1.Pod); !ok {
			return
		}
	}
	c.mu.Lock()
	key := pod.Namespace + "/" + pod.Name
	if st := c.known[key]; st != nil && st.pod.UID == pod.UID {
		delete(c.known, key)
	}
	c.mu.Unlock()
	c.mgr.ForgetPod(context.Background(), pod.UID)
}

// Pods returns the PodInterface of namespace: the wrapped one, with UpdateStatus replaced.
func (c *Client) Pods(namespace string) corev1client.PodInterface {
	return &pods{PodInterface: c.pods.Pods(namespace), c: c, ns: namespace}
}

// pods is a PodInterface whose UpdateStatus goes through the Client.
type pods struct {
	corev1client.PodInterface
	c  *Client
	ns string
}

// UpdateStatus accepts pod's status for the Manager; see Client.UpdateStatus.
func (p *pods) UpdateStatus(ctx context.Context, pod *v1.Pod, _ metav1.UpdateOptions) (*v1.Pod, error) {
	return p.c.UpdateStatus(ctx, pod)
}

// Delete deletes the pod through the wrapped PodsGetter, except virtual-kubelet's force
// delete (grace period 0 with a UID precondition: PodController.deletePodsFromKubernetesHandler,
// node/pod.go) of a pod whose terminal phase is not on the server yet. The kubelet deletes
// a pod object only after its status manager wrote the terminal status (canBeDeleted in
// pkg/kubelet/status/status_manager.go); virtual-kubelet force-deletes a deleted pod as
// soon as none of its containers runs (a pod deleted before its containers started
// qualifies at once: syncPodInProvider counts a waiting container as not running) and,
// failing that, when its grace period ends, whatever the provider reported. Such a
// delete is held: Delete returns nil without a request, and the Manager deletes the pod
// (status.Options.Deleter, grace period 0 and the UID precondition) once the terminal
// status is on the server:
//
//   - for a pod whose status SyncPod produces, once the provider reports it Stopped;
//   - for any other pod, at once: the held delete is where virtual-kubelet is done with
//     the pod's containers, where the kubelet's pod worker calls its status manager's
//     TerminatePod (SyncTerminatingPod in pkg/kubelet/kubelet.go), so the Client calls
//     status.Manager.TerminatePod on the server's copy: a container that did not report
//     terminated is terminated with exit code 137 (ContainerStatusUnknown), a
//     non-terminal phase becomes Failed, and Ready and ContainersReady become False.
//
// A delete of a pod the Client does not know (its event handler did not see it, or saw
// another UID), and every other delete, goes to the wrapped PodsGetter unchanged.
func (p *pods) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	ref := status.PodRef{Namespace: p.ns, Name: name}
	pod, synced, hold := p.c.holdDelete(p.ns, name, opts)
	switch {
	case !hold:
		return p.PodInterface.Delete(ctx, name, opts)
	case synced:
		p.c.log(ctx).V(2).Info("Force delete held until the provider reports the pod stopped and its terminal status is on the server", "pod", ref, "podUID", pod.UID)
		return nil
	}
	if err := p.c.mgr.TerminatePod(p.c.logCtx(ctx), pod); err != nil {
		// The Manager refused the pod: deleting it without a terminal status is better
		// than keeping it forever.
		p.c.log(ctx).Error(err, "Could not terminate the pod before virtual-kubelet's force delete; deleting it without a terminal status", "pod", ref, "podUID", pod.UID)
		return p.PodInterface.Delete(ctx, name, opts)
	}
	p.c.log(ctx).V(2).Info("Force delete held: pod terminated, deleted once its terminal status is on the server", "pod", ref, "podUID", pod.UID)
	return nil
}

// holdDelete decides whether Delete holds a delete (see Delete): it returns the server's
// copy of the pod, whether SyncPod produces its status, and whether to hold.
func (c *Client) holdDelete(ns, name string, opts metav1.DeleteOptions) (pod *v1.Pod, synced, hold bool) {
	if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 || opts.Preconditions == nil || opts.Preconditions.UID == nil {
		return nil, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.known[ns+"/"+name]
	if st == nil || *opts.Preconditions.UID != st.pod.UID {
		return nil, false, false
	}
	phase := st.pod.Status.Phase
	return st.pod, st.synced, phase != v1.PodSucceeded && phase != v1.PodFailed
}

// UpdateStatus is what the Client's PodInterface does instead of a PUT of pods/status: it
// checks the provider's pod, forwards the labels and annotations the provider changed
// (Options.Metadata) and hands the status, with the kubelet-owned conditions recomputed,
// to the Manager, which sends it from Run. The status of a pod whose status SyncPod
// produces is not touched (the Manager already has it). It returns the newest server copy
// the Client knows with the accepted status.
//
// Errors: a *podstatus.InputError (matching podstatus.ErrInvalidInput) for a nil pod, a
// pod without name, namespace or UID, a status without a phase, or a container status
// whose name is not in the spec; a NotFound *apierrors.StatusError when the server's pod
// of that name has another UID (deleted and recreated: nothing is written, and
// virtual-kubelet's updatePodStatus ignores NotFound); the API error of the metadata
// PATCH; a *status.TransitionError when the Manager rejects the status; an error matching
// ErrNotWired, before anything else, when EventHandler was never called (virtual-kubelet
// logs it and retries the status a few times: the provider's author sees it at once).
func (c *Client) UpdateStatus(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if !c.handler.Load() {
		return nil, fmt.Errorf("vkstatus: UpdateStatus: %w", errNoHandler)
	}
	if err := validate(pod); err != nil {
		return nil, fmt.Errorf("vkstatus: UpdateStatus: %w", err)
	}
	key := pod.Namespace + "/" + pod.Name
	c.mu.Lock()
	st := c.known[key]
	if st != nil && st.pod.UID != pod.UID {
		c.mu.Unlock()
		return nil, fmt.Errorf("vkstatus: UpdateStatus: %w", apierrors.NewNotFound(v1.Resource("pods"),
			fmt.Sprintf("%s (UID %s; the pod of that name now has UID %s)", pod.Name, pod.UID, st.pod.UID)))
	}
	var server *v1.Pod
	var synced bool
	var metaPatch []byte
	if st != nil {
		server, synced = st.pod, st.synced
		if c.opts.Metadata == MetadataForward {
			metaPatch = metadataPatch(pod.UID, st.refLabels, st.refAnnotations, pod, server)
			st.refLabels, st.refAnnotations = pod.Labels, pod.Annotations
		}
	}
	c.mu.Unlock()
	log := c.log(ctx)
	if metaPatch != nil {
		if _, err := c.pods.Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, metaPatch,
			metav1.PatchOptions{FieldManager: c.opts.FieldManager}, "status"); err != nil {
			return nil, fmt.Errorf("vkstatus: UpdateStatus: pod %s: labels and annotations: %w", key, err)
		}
		log.V(3).Info("Provider's labels and annotations sent", "pod", ref(pod), "patch", string(metaPatch))
	}
	if server == nil {
		// The informer has not delivered the pod yet: the provider's own copy stands in for
		// it, without its status (which must not count as the previous one).
		server = pod.DeepCopy()
		server.Status = v1.PodStatus{}
	}
	if !synced {
		s, err := c.kubeletStatus(pod, server)
		if err != nil {
			return nil, fmt.Errorf("vkstatus: UpdateStatus: %w", err)
		}
		if err := c.mgr.SetPodStatus(c.logCtx(ctx), server, s); err != nil {
			return nil, fmt.Errorf("vkstatus: UpdateStatus: %w", err)
		}
	}
	out := server.DeepCopy()
	if s, ok := c.mgr.GetPodStatus(pod.UID); ok {
		out.Status = s
	}
	return out, nil
}

// kubeletStatus is the provider's status with the kubelet-owned conditions recomputed from
// its phase and container statuses and the server's readiness gates, and container states
// that are Terminated and something else taken as Terminated.
func (c *Client) kubeletStatus(pod, server *v1.Pod) (v1.PodStatus, error) {
	s := *pod.Status.DeepCopy()
	for _, list := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			if list[i].State.Terminated != nil {
				list[i].State.Running, list[i].State.Waiting = nil, nil
			}
		}
	}
	spec := server
	if len(spec.Spec.Containers) == 0 {
		spec = pod
	}
	res, err := readiness.Evaluate(readiness.Input{
		Pod: spec, Phase: s.Phase,
		InitContainerStatuses: s.InitContainerStatuses, ContainerStatuses: s.ContainerStatuses,
		Conditions: server.Status.Conditions,
		Sandboxes:  inferSandboxes(spec, &s, &server.Status),
		OldStatus:  &server.Status,
		Features:   c.opts.Status.Features,
	})
	if err != nil {
		return v1.PodStatus{}, err
	}
	// Drop every provider copy of a kubelet-owned condition (some providers write two
	// Ready conditions); Apply then writes the engine's, and PodScheduled is True, after
	// them, as the kubelet's generateAPIPodStatus writes it.
	kept := s.Conditions[:0]
	for _, cond := range s.Conditions {
		if !c.owners.Owned(cond.Type) {
			kept = append(kept, cond)
		}
	}
	s.Conditions = kept
	if _, err := readiness.Apply(&s, readiness.ApplyInput{Result: res, Now: metav1.NewTime(c.clock.Now()), Features: c.opts.Status.Features}); err != nil {
		return v1.PodStatus{}, err
	}
	if cond := conditions.Get(server.Status.Conditions, v1.PodScheduled); cond != nil && cond.Status == v1.ConditionTrue {
		s.Conditions = append(s.Conditions, *cond)
	} else {
		s.Conditions = append(s.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
	}
	return s, nil
}

// inferSandboxes is the runtime's sandbox list as a provider that reports no runtime facts
// shows it, for the readiness engine's PodReadyToStartContainers (the kubelet's
// GeneratePodReadyToStartContainersCondition in pkg/kubelet/status/generate.go reads the
// runtime's sandboxes through PodSandboxChanged in pkg/kubelet/kuberuntime/util). s is
// the provider's status, server the server's copy:
//
//   - The provider's status shows a sandbox when it has a pod IP, a container that was
//     created (see showsSandbox), or its own PodReadyToStartContainers True. The
//     sandbox is ready as the provider's own PodReadyToStartContainers says when it wrote
//     one, and otherwise because it shows one.
//   - When it shows none, the server's copy decides whether a sandbox existed before
//     (the same signs, which this Client wrote): then it is there and not ready, as the
//     kubelet reports a stopped sandbox ("pod sandbox is not ready"); else there is none
//     ("no pod sandbox exists", the message of every pod's first status: the kubelet
//     writes it before the runtime created a sandbox).
//
// The sandbox is in the pod's network namespace mode (spec.hostNetwork) and has the
// provider's pod IP; without one it reports no network status, which the kubelet does
// not require an IP of.
func inferSandboxes(pod *v1.Pod, s, server *v1.PodStatus) []sandbox.Status {
	shown := showsSandbox(s)
	if !shown && !showsSandbox(server) {
		return nil
	}
	ready := shown
	if cond := conditions.Get(s.Conditions, v1.PodReadyToStartContainers); cond != nil {
		ready = cond.Status == v1.ConditionTrue
	}
	return []sandbox.Status{{Ready: ready, IP: s.PodIP, NoNetworkStatus: s.PodIP == "", HostNetwork: pod.Spec.HostNetwork}}
}

// showsSandbox reports whether a status shows that the pod has or had a sandbox: a pod
// IP, a container that was created (running, terminated, terminated before, or with a
// container ID), or PodReadyToStartContainers True. A False
// PodReadyToStartContainers shows nothing: the kubelet writes it with and without one.
func showsSandbox(s *v1.PodStatus) bool {
	if s.PodIP != "" {
		return true
	}
	if cond := conditions.Get(s.Conditions, v1.PodReadyToStartContainers); cond != nil && cond.Status == v1.ConditionTrue {
		return true
	}
	for _, list := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for _, cs := range list {
			if cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil || cs.ContainerID != "" {
				return true
			}
		}
	}
	return false
}

// validate checks a provider's pod.
func validate(pod *v1.Pod) error {
	if pod == nil {
		return &podstatus.InputError{Errs: field.ErrorList{field.Required(field.NewPath("pod"), "")}}
	}
	var errs field.ErrorList
	meta := field.NewPath("pod", "ObjectMeta")
	if pod.Name == "" {
		errs = append(errs, field.Required(meta.Child("Name"), ""))
	}
	if pod.Namespace == "" {
		errs = append(errs, field.Required(meta.Child("Namespace"), ""))
	}
	if pod.UID == "" {
		errs = append(errs, field.Required(meta.Child("UID"), ""))
	}
	stPath := field.NewPath("pod", "Status")
	if pod.Status.Phase == "" {
		errs = append(errs, field.Required(stPath.Child("Phase"), "a status without a phase reports nothing"))
	}
	names := func(cs []v1.Container) map[string]bool {
		m := make(map[string]bool, len(cs))
		for _, c := range cs {
			m[c.Name] = true
		}
		return m
	}
	eph := map[string]bool{}
	for _, c := range pod.Spec.EphemeralContainers {
		eph[c.Name] = true
	}
	for _, l := range []struct {
		name  string
		spec  map[string]bool
		stats []v1.ContainerStatus
	}{
		{"InitContainerStatuses", names(pod.Spec.InitContainers), pod.Status.InitContainerStatuses},
		{"ContainerStatuses", names(pod.Spec.Containers), pod.Status.ContainerStatuses},
		{"EphemeralContainerStatuses", eph, pod.Status.EphemeralContainerStatuses},
	} {
		for i, cs := range l.stats {
			if !l.spec[cs.Name] {
				errs = append(errs, field.NotFound(stPath.Child(l.name).Index(i).Child("Name"), cs.Name))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &podstatus.InputError{Pod: pod.Namespace + "/" + pod.Name, Errs: errs}
}

// log is the logger of a method that takes ctx: ctx's logr logger, else, with
// virtual-kubelet's logger, the one ctx carries (or log.L), else Options.Status.Logger.
func (c *Client) log(ctx context.Context) logr.Logger {
	if l, err := logr.FromContext(ctx); err == nil {
		return l
	}
	if c.vkLog {
		return vkLogger(ctx)
	}
	return c.logger
}

// logCtx is ctx carrying the logger log finds in it, for the Manager's methods, which log
// with their context's logr logger: virtual-kubelet's own logger reaches them this way.
func (c *Client) logCtx(ctx context.Context) context.Context {
	if _, err := logr.FromContext(ctx); err == nil {
		return ctx
	}
	return logr.NewContext(ctx, c.log(ctx))
}

func ref(p *v1.Pod) status.PodRef {
	return status.PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}
}
