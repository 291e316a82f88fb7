package agent

import (
	"context"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/podstate"
)

// ReasonInvalidSimAnnotation is the reason of the Warning Event a pod gets when one of its
// sim.podstatus.io/ annotations is invalid (the profile's value is used instead).
const ReasonInvalidSimAnnotation = "InvalidSimAnnotation"

// ReasonSimulationError is the reason of the Warning Event a pod gets when the simulated
// runtime cannot start it: the node's pod CIDR has no address left (raise Config.MaxPods,
// or give the node a larger spec.podCIDR).
const ReasonSimulationError = "SimulationError"

// podEntry is the agent's state of one pod: the newest informer copy and its simulated
// runtime. Workers serialise on mu (the work queue already never hands one pod to two
// workers at once; mu guards against the informer's delete handler). mu is never held
// across a request: the informer's one handler goroutine may wait for it, and every
// other pod's events would wait behind a slow API server.
type podEntry struct {
	mu      sync.Mutex
	pod     atomic.Pointer[v1.Pod] // newest informer copy; the add/update handler sets it without mu
	node    *nodeState
	sim     *podsim.Pod
	simRV   string // resourceVersion last given to sim
	phase   v1.PodPhase
	removed bool // deleted from the informer: ignore further work
	stopped bool // TerminatePod was called
	// couldRun mirrors sim.CouldHaveRunningContainers after every step, for the status
	// manager's CouldHaveRunningContainers (read without mu).
	couldRun atomic.Bool
	deleted  bool // our DELETE is in flight or was accepted (or raced): do not send it again
}

// podTable maps pod UIDs to entries.
type podTable struct {
	mu   sync.RWMutex
	pods map[types.UID]*podEntry
}

func (t *podTable) get(uid types.UID) *podEntry {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.pods[uid]
}

// onPod handles an informer add or update.
func (a *agent) onPod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	node := a.nodes.get(pod.Spec.NodeName)
	if node == nil {
		return // not one of ours (yet: nodeAdded revisits it)
	}
	a.status.ObservePod(pod)
	a.pods.mu.Lock()
	e := a.pods.pods[pod.UID]
	if e == nil {
		e = &podEntry{node: node}
		a.pods.pods[pod.UID] = e
	}
	a.pods.mu.Unlock()
	e.pod.Store(pod)
	a.queue.Add(pod.UID)
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
		if e.sim != nil {
			e.sim.Release()
			e.sim = nil
		}
		a.counts.setPhase(e.phase, "")
		e.mu.Unlock()
	}
	a.responses.take(pod.UID, "")
	a.status.ForgetPod(pod.UID)
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
	for _, o := range objs {
		a.onPod(o)
	}
}

// syncPod steps one pod: its simulated runtime's facts become a status through
// podstate.Generate, which goes to the status manager (the only writer of pod status);
// a deleted pod whose containers are gone and whose terminal status is on the server is
// deleted; and the pod is scheduled again at its runtime's next change.
func (a *agent) syncPod(ctx context.Context, uid types.UID) {
	e := a.pods.get(uid)
	if e == nil {
		return
	}
	if del := a.stepPod(e, uid); del != nil {
		a.deletePod(ctx, e, del) // without e.mu: a request
	}
}

// stepPod is syncPod under e.mu: it returns the pod to delete, if its time has come (e
// is then marked deleted, so that no other step sends the DELETE again).
func (a *agent) stepPod(e *podEntry, uid types.UID) (del *v1.Pod) {
	e.mu.Lock()
	defer e.mu.Unlock()
	pod := e.pod.Load()
	if e.removed || pod == nil {
		return nil
	}
	now := a.cfg.Clock.Now()
	if e.sim == nil {
		cfg := podsim.Config{Node: e.node.sim, IPAM: e.node.ipam, Profile: a.cfg.profile, Seed: a.cfg.Seed,
			Cache: &a.simCache, Clock: a.cfg.Clock}
		sim, w, err := podsim.New(pod, cfg) // resumes a pod an earlier agent process ran
		if err != nil {
			a.counts.errors.Add(1)
			a.log.Error(err, "Cannot simulate pod", "pod", klogRef(pod))
			return nil
		}
		e.sim = sim
		e.simRV = pod.ResourceVersion
		for _, err := range w.Annotations {
			a.counts.invalidAnnotations.Add(1)
			a.recorder.Eventf(pod, v1.EventTypeWarning, ReasonInvalidSimAnnotation, "%v", err)
		}
		if w.NoIP != nil {
			// No pod IP left in the node's CIDR leaves the pod Pending (as behind a kubelet
			// whose network plugin has no address left): say so on the pod, as the
			// kubelet's FailedCreatePodSandBox event does.
			a.log.Error(w.NoIP, "Pod cannot start", "pod", klogRef(pod))
			a.recorder.Eventf(pod, v1.EventTypeWarning, ReasonSimulationError, "%v", w.NoIP)
		}
		if w.IPNotReserved != nil {
			// A resumed pod's IP already taken changes nothing the pod shows: log it.
			a.log.Info("Simulation adjusted", "pod", klogRef(pod), "err", w.IPNotReserved)
		}
	} else if e.simRV != pod.ResourceVersion {
		e.sim.Update(pod)
		e.simRV = pod.ResourceVersion
	}
	facts := e.sim.Advance()
	e.couldRun.Store(e.sim.CouldHaveRunningContainers())
	var previous *v1.PodStatus
	if s, ok := a.status.GetPodStatus(uid); ok {
		previous = &s
	}
	in := facts.Input(pod, previous)
	st, err := podstate.Generate(in)
	if err != nil {
		a.counts.errors.Add(1)
		a.log.Error(err, "Generate pod status", "pod", klogRef(pod))
	} else {
		if a.cfg.OnStatus != nil {
			a.cfg.OnStatus(pod, in, st)
		}
		if err := a.status.SetPodStatus(pod, st); err != nil {
			a.counts.errors.Add(1)
			a.log.Error(err, "Status manager rejected the status", "pod", klogRef(pod))
		}
		a.counts.setPhase(e.phase, st.Phase)
		e.phase = st.Phase
	}
	if facts.Stopped && !e.stopped {
		// The end of the kubelet's SyncTerminatingPod: every container is gone.
		if err := a.status.TerminatePod(pod); err != nil {
			a.counts.errors.Add(1)
			a.log.Error(err, "Status manager rejected the terminated status", "pod", klogRef(pod))
		}
		e.stopped = true
	}

	if next := e.sim.Next(); !next.IsZero() {
		a.queue.AddAfter(uid, next.Sub(now))
	}
	if pod.DeletionTimestamp != nil && facts.Done && !e.deleted && terminal(pod.Status.Phase) {
		if s, ok := a.status.GetPodStatus(uid); !ok || terminal(s.Phase) {
			e.deleted = true
			return pod
		}
	}
	return nil
}

// deletePod removes a terminated pod from the API server as the kubelet's status manager
// does once it can be deleted (pkg/kubelet/status/status_manager.go, canBeDeleted): a
// DELETE with a UID precondition and grace period 0. 404 (already gone) and 409 (the
// name now belongs to another pod: the UID precondition failed) are the races of that
// request and count as done; other errors retry with the queue's backoff.
func (a *agent) deletePod(ctx context.Context, e *podEntry, pod *v1.Pod) {
	err := a.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      metav1.NewUIDPreconditions(string(pod.UID)),
	})
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		a.counts.deletes.Add(1)
		a.queue.Forget(pod.UID)
	default:
		a.counts.errors.Add(1)
		a.log.V(1).Info("Delete of a terminated pod failed; retrying", "pod", klogRef(pod), "err", err)
		e.mu.Lock()
		e.deleted = false
		e.mu.Unlock()
		a.queue.AddRateLimited(pod.UID)
	}
}

// couldHaveRunningContainers is status.Options.CouldHaveRunningContainers: the kubelet's
// PodCouldHaveRunningContainers, which holds back a terminal phase while a container
// may still run. A pod the agent does not simulate has none.
func (a *agent) couldHaveRunningContainers(pod *v1.Pod) bool {
	e := a.pods.get(pod.UID)
	return e != nil && e.couldRun.Load()
}

func terminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

func klogRef(p *v1.Pod) string { return p.Namespace + "/" + p.Name }
