package simkubelet

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/status"
)

// ReasonInvalidSimAnnotation is the reason of the Warning Event a pod gets when one of its
// sim.podstatus.io/ annotations is invalid (the profile's value is used instead).
const ReasonInvalidSimAnnotation = "InvalidSimAnnotation"

// ReasonSimulationError is the reason of the Warning Event a pod gets when the simulated
// runtime cannot start it: the node's pod CIDR has no address left (raise Options.MaxPods,
// or give the node a larger spec.podCIDR).
const ReasonSimulationError = "SimulationError"

// podEntry is the agent's state of one pod: the newest informer copy and its simulated
// runtime. Workers serialise on mu (the work queue already never hands one pod to two
// workers at once; mu guards against the informer's delete handler). mu is never held
// across a request: SyncPod only queues what the status Manager sends.
type podEntry struct {
	mu      sync.Mutex
	pod     atomic.Pointer[v1.Pod] // newest informer copy; the add/update handler sets it without mu
	node    *nodeState
	worker  *podsim.Worker // the pod's simulated runtime and status step; nil until started
	phase   v1.PodPhase
	removed bool // deleted from the informer: ignore further work
	// Admission on the node (see admitPod), decided when the entry is made: active is
	// true while the pod holds a place on its node; rejection is the kubelet's message
	// for a pod the node has no room for; finished marks a pod that was terminal when
	// first seen. Neither of the last two is ever run; settled is set once the Manager
	// has their final status.
	active    bool
	rejection string
	finished  bool
	settled   bool
	// admitLater marks an entry of the first list, whose admission admitListed decides.
	admitLater bool
	// reserved is the pod IP reserveIP took for the pod before its simulation started
	// (its simulation keeps it, or onPodDelete releases it).
	reserved bool
}

// podTable maps pod UIDs to entries.
type podTable struct {
	mu   sync.RWMutex
	pods map[types.UID]*podEntry
	// admitting is true once the pods of the first list have been admitted
	// (admitListed); until then new entries wait, so that they are admitted in order of
	// creation.
	admitting bool
}

func (t *podTable) get(uid types.UID) *podEntry {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.pods[uid]
}

// onPodUpdate handles an informer update. A copy that differs from the one before it in
// its status alone (its resourceVersion aside) — the watch event of the agent's own
// PATCH, mostly, or another controller's condition — is observed, not stepped, as the
// kubelet's pod config does: checkAndUpdatePod in pkg/kubelet/config/config.go sends such
// a copy to reconcile instead of to the pod worker, and HandlePodReconcile
// (pkg/kubelet/kubelet.go) syncs the pod then only when its Ready condition needs
// reconciling with its readiness gates, which ObservePod does itself (as it restores a
// kubelet-owned field another writer changed). The runtime's own changes come on the
// pod's timer (syncPod), so nothing the simulation does waits for such a copy.
//
// Every other update goes to onPod and a worker, as an add does: a pod that is new to the
// agent, one whose spec, labels, annotations, generation or deletion changed, and a copy
// without a resourceVersion (a fake clientset's), which ObservePod cannot order against
// the copies before it.
func (a *agent) onPodUpdate(old, cur any) {
	o, ok := old.(*v1.Pod)
	p, ok2 := cur.(*v1.Pod)
	if !ok || !ok2 || o.UID != p.UID || p.ResourceVersion == "" || podChanged(o, p) {
		a.onPod(cur)
		return
	}
	if a.nodes.get(p.Spec.NodeName) == nil {
		return // not one of ours (onPod would return too)
	}
	e := a.pods.get(p.UID)
	if e == nil {
		a.onPod(cur) // new to the agent: onPod makes its entry and queues it
		return
	}
	a.status.ObservePod(context.Background(), p)
	e.pod.Store(p)
	// The simulated runtime takes the newest copy too, as syncPod gives it one: else it
	// holds the copy it was last given, a second object per pod beside the informer's
	// (some 5 KB each; 50 MiB of peak RSS at 10,000 pods).
	// A removed entry has no worker (onPodDelete).
	e.mu.Lock()
	if e.worker != nil {
		e.worker.Update(p)
	}
	e.mu.Unlock()
}

// podChanged reports whether cur differs from old in what the pod's worker acts on: the
// kubelet's podsDifferSemantically (pkg/kubelet/config/config.go: spec, labels,
// annotations, deletionTimestamp and deletionGracePeriodSeconds), and the generation,
// which the status's observedGeneration follows (the kubelet keeps the generation of the
// copy its pod worker last had; the agent steps the pod again instead, as it did before
// for every copy).
//
// The spec is compared through the generation where the API server keeps one: it sets 1
// on create and adds 1 on every change of the spec, through an update or a subresource
// (updatePodGeneration in pkg/registry/core/pod/strategy.go, since Kubernetes v1.33). A
// binding sets spec.nodeName without it, and reaches the agent as an add (its watch
// selects pods by spec.nodeName). A pod of generation 0 (an older API server's) has its
// spec compared field by field, as the kubelet's reflect.DeepEqual: a difference that is
// not one (a Quantity's cached string) only costs a step. The comparison was a third of
// what handling such an update cost, the step it saves aside.
func podChanged(old, cur *v1.Pod) bool {
	return old.Generation != cur.Generation ||
		!reflect.DeepEqual(old.DeletionTimestamp, cur.DeletionTimestamp) ||
		!reflect.DeepEqual(old.DeletionGracePeriodSeconds, cur.DeletionGracePeriodSeconds) ||
		!maps.Equal(old.Labels, cur.Labels) ||
		!maps.Equal(old.Annotations, cur.Annotations) ||
		(cur.Generation == 0 && !reflect.DeepEqual(old.Spec, cur.Spec))
}

// onPod handles an informer add, and an update onPodUpdate does not observe alone.
func (a *agent) onPod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	node := a.nodes.get(pod.Spec.NodeName)
	if node == nil {
		return // not one of ours (yet: nodeAdded revisits it)
	}
	a.status.ObservePod(context.Background(), pod)
	a.pods.mu.Lock()
	e := a.pods.pods[pod.UID]
	if e == nil {
		e = &podEntry{node: node}
		e.pod.Store(pod) // before anyone can see e (admitListed reads it)
		reserveIP(e, pod)
		if a.pods.admitting {
			admitPod(e, pod)
		} else {
			e.admitLater = true
		}
		a.pods.pods[pod.UID] = e
	}
	a.pods.mu.Unlock()
	e.pod.Store(pod)
	a.queue.Add(pod.UID)
}

// reserveIP reserves, in its node's address pool, the pod IP an earlier agent process
// gave a pod that may still run, as soon as the agent sees the pod: the pods of the first
// list are resumed by several workers at once, and a new pod started by one of them
// before another resumed this one would otherwise be given its IP, and two running pods
// would share it (podsim.New reserves it again, under the same key, when it resumes the
// pod). A pod whose IP cannot be reserved is left to podsim.New, which reports it.
func reserveIP(e *podEntry, pod *v1.Pod) {
	if e.node.ipam == nil || pod.Status.PodIP == "" || pod.Spec.HostNetwork ||
		pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return
	}
	e.reserved = e.node.ipam.Reserve(pod.Namespace+"/"+pod.Name, pod.Status.PodIP) == nil
}

// onPodDelete handles an informer delete, tombstones included.
func (a *agent) onPodDelete(obj any) {
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
	a.pods.mu.Lock()
	e := a.pods.pods[pod.UID]
	delete(a.pods.pods, pod.UID)
	a.pods.mu.Unlock()
	if e != nil {
		// Wait for a worker stepping the pod, so that no status is set after ForgetPod
		// (the Manager would GET a pod that is gone).
		e.mu.Lock()
		e.removed = true
		releasePod(e)
		if e.worker != nil {
			e.worker.Release()
			e.worker = nil
		} else if e.reserved {
			e.node.ipam.Release(pod.Namespace + "/" + pod.Name)
		}
		a.counts.setPhase(e.phase, "")
		e.mu.Unlock()
	}
	a.responses.forget(pod.UID)
	a.status.ForgetPod(context.Background(), pod.UID)
}

// nodeAdded revisits the cached pods of a node that just became managed.
func (a *agent) nodeAdded(name string) {
	if a.podInformer == nil {
		return
	}
	objs, err := a.podInformer.GetIndexer().ByIndex(nodeNameIndex, name)
	if err != nil {
		return
	}
	// In order of creation, as the kubelet admits the pods it is given at once
	// (HandlePodAdditions in pkg/kubelet/kubelet.go): when the node is full, the newest
	// pods are the ones rejected.
	created := func(o any) time.Time {
		if p, ok := o.(*v1.Pod); ok {
			return p.CreationTimestamp.Time
		}
		return time.Time{}
	}
	slices.SortStableFunc(objs, func(x, y any) int { return created(x).Compare(created(y)) })
	for _, o := range objs {
		a.onPod(o)
	}
}

// syncPod steps one pod: its simulated runtime's facts go through status.Manager.SyncPod,
// the kubelet's per-pod status step (podstate.Generate, SetPodStatus, TerminatePod once
// the containers are gone; the Manager deletes the pod once its terminal status is on the
// server), and the pod is scheduled again at its runtime's next change.
func (a *agent) syncPod(uid types.UID) {
	e := a.pods.get(uid)
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	pod := e.pod.Load()
	if e.removed || pod == nil {
		return
	}
	now := a.cfg.Clock.Now()
	if e.worker == nil {
		if e.rejection != "" || e.finished {
			if !e.settled {
				a.settle(e, pod)
			}
			return // never runs; onPod's ObservePod lets the Manager delete it once deleted
		}
		if !a.startSim(e, pod) {
			return
		}
	}
	var previous *v1.PodStatus
	if a.cfg.OnStatus != nil {
		// Only for the hook: SyncPod reads the same cached status itself.
		if s, ok := a.status.GetPodStatus(uid); ok {
			previous = &s
		}
	}
	step, err := e.worker.Sync(context.Background(), pod)
	if step.Facts.Stopped {
		releasePod(e) // known terminated: no longer one of the node's active pods
	}
	if err != nil {
		a.counts.errors.Add(1)
		a.log.Error(err, "Pod status step failed", "pod", klogRef(pod))
	} else {
		if a.cfg.OnStatus != nil {
			a.cfg.OnStatus(pod, step.Facts.Input(pod, previous), step.Status)
		}
		a.counts.setPhase(e.phase, step.Status.Phase)
		e.phase = step.Status.Phase
	}
	if !step.Next.IsZero() {
		a.queue.AddAfter(uid, step.Next.Sub(now))
	}
}

// startSim starts the simulated runtime of a pod the agent has not stepped yet (podsim.New
// resumes a pod an earlier agent process ran), and reports the problems podsim warns
// about: an invalid annotation or no pod IP left is the pod author's or the operator's
// business (a Warning Event on the pod, as the kubelet's FailedCreatePodSandBox event for
// the latter), anything else is logged. It reports false when the pod cannot be
// simulated at all.
func (a *agent) startSim(e *podEntry, pod *v1.Pod) bool {
	cfg := podsim.Config{Node: e.node.sim, Profile: a.cfg.profile, Seed: a.cfg.Seed,
		Cache: &a.simCache, Clock: a.cfg.Clock, Features: a.cfg.Features}
	simPod := pod
	if a.behaviors != nil {
		if b := a.behaviors.Load().forPod(pod); b != nil {
			simPod = b.apply(pod)
		}
	}
	worker, w, err := podsim.NewWorker(simPod, a.status, e.node.ipam, cfg)
	if err != nil {
		a.counts.errors.Add(1)
		a.log.Error(err, "Cannot simulate pod", "pod", klogRef(pod))
		return false
	}
	e.worker = worker
	for _, err := range w.Annotations {
		a.counts.invalidAnnotations.Add(1)
		a.recorder.Eventf(pod, v1.EventTypeWarning, ReasonInvalidSimAnnotation, "%v", err)
	}
	if w.NoIP != nil {
		a.log.Error(w.NoIP, "Pod cannot start", "pod", klogRef(pod))
		a.recorder.Eventf(pod, v1.EventTypeWarning, ReasonSimulationError, "%v", w.NoIP)
	}
	if w.IPNotReserved != nil {
		a.log.Info("Simulation adjusted", "pod", klogRef(pod), "err", w.IPNotReserved)
	}
	return true
}

// countingDeleter is the Manager's status.PodDeleter: the kubelet's UID-preconditioned
// DELETE, counted for the progress line and the metrics.
type countingDeleter struct {
	status.PodDeleter
	deletes *atomic.Int64
}

func (d countingDeleter) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	err := d.PodDeleter.DeletePod(ctx, namespace, name, uid)
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		d.deletes.Add(1)
	}
	return err
}

// klogRef is a pod as the agent logs it, klog.KObj-style: it prints as namespace/name and
// marshals as {"name","namespace"} (status.PodRef).
func klogRef(p *v1.Pod) status.PodRef {
	return status.PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}
}
