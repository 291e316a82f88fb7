package simkubelet

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
)

// ReasonOutOfPods is the reason the kubelet v1.37.0 gives a pod it rejects because its
// node runs as many pods as it declares it can (OutOfPods in
// pkg/kubelet/lifecycle/predicate.go): the reason of the pod's Failed status and of the
// Warning Event the pod gets.
const ReasonOutOfPods = "OutOfpods"

// rejectedPrefix starts the message of a rejected pod's status (rejectPod in
// pkg/kubelet/kubelet.go); the Event's message has no prefix.
const rejectedPrefix = "Pod was rejected: "

// admission is a node's pod admission, the kubelet's pod-count check: a pod is admitted
// when the node's active pods leave room for one more under the pod capacity the node
// declares (its allocatable pods; the Fits check of
// pkg/scheduler/framework/plugins/noderesources that pkg/kubelet/lifecycle/predicate.go
// runs), else rejected with ReasonOutOfPods. A node that declares no pod capacity (a
// KWOK user's node) admits every pod: its pod addresses are its only bound.
type admission struct {
	bounded  bool  // the node declares a pod capacity
	capacity int64 // its allocatable pods, when bounded
	mu       sync.Mutex
	// active counts the admitted pods that are not known terminated (the kubelet's
	// GetActivePods: a pod stops counting once it is terminal and its containers have
	// stopped, or is gone).
	active int64
}

// declaredPods returns the pod capacity a node declares, as the kubelet's admission reads
// it: allocatable pods, else capacity pods (a node's creator may set only capacity);
// declared is false when the node sets neither.
func declaredPods(n *v1.Node) (pods int64, declared bool) {
	for _, l := range []v1.ResourceList{n.Status.Allocatable, n.Status.Capacity} {
		if q, ok := l[v1.ResourcePods]; ok {
			return q.Value(), true
		}
	}
	return 0, false
}

// admit takes a place on the node for a new pod. It returns "" when the pod is admitted
// (it then counts as active until release), else the kubelet's message for the rejection
// (InsufficientResourceError in pkg/kubelet/lifecycle/predicate.go).
func (ad *admission) admit() (rejection string) {
	ad.mu.Lock()
	defer ad.mu.Unlock()
	if ad.bounded && ad.active+1 > ad.capacity {
		return fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			v1.ResourcePods, 1, ad.active, ad.capacity)
	}
	ad.active++
	return ""
}

// adopt counts a pod an earlier agent process admitted (it has a status, and a phase that
// is not terminal) as active without checking. The kubelet re-admits the pods it finds at
// start-up in order of creation, so that with an unchanged capacity those it ran before
// are admitted again ahead of newer ones; adopting them first has the same outcome.
func (ad *admission) adopt() {
	ad.mu.Lock()
	ad.active++
	ad.mu.Unlock()
}

// hasRoom reports whether the node would admit one more pod now.
func (ad *admission) hasRoom() bool {
	ad.mu.Lock()
	defer ad.mu.Unlock()
	return !ad.bounded || ad.active < ad.capacity
}

// release gives back the place of an admitted pod that is no longer active.
func (ad *admission) release() {
	ad.mu.Lock()
	ad.active--
	ad.mu.Unlock()
}

// admitPod decides a new entry's admission on its node, as the kubelet's
// HandlePodAdditions does for a pod it has not seen: a pod in a terminal phase is not
// admitted (nor counted, nor ever run: e.finished), a pod an earlier agent process ran is
// adopted, any other pod is admitted or gets e.rejection. Called once per entry, before
// any worker sees it.
func admitPod(e *podEntry, pod *v1.Pod) {
	switch {
	case pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed:
		e.finished = true
	case pod.Status.StartTime != nil:
		e.node.admission.adopt()
		e.active = true
	default:
		e.rejection = e.node.admission.admit()
		e.active = e.rejection == ""
	}
}

// releasePod ends e's place on its node once it is no longer active. The caller holds e.mu.
func releasePod(e *podEntry) {
	if e.active {
		e.active = false
		e.node.admission.release()
	}
}

// settle ends a pod the agent does not run. A rejected pod gets the status the kubelet
// writes for a pod it does not admit (rejectPod in pkg/kubelet/kubelet.go): phase Failed
// with ReasonOutOfPods and the rejection message, and the QoS class the API server gave
// it; and a Warning Event. A pod that was terminal when the agent first saw it (after a
// restart: a finished job, a pod rejected earlier) keeps its status: the kubelet's pod
// workers never start a terminal pod again (UpdatePod in pkg/kubelet/pod_workers.go), and
// resuming one that never ran would start its containers. Either way the pod is
// terminated in the Manager at once, so that the Manager deletes it when it is deleted.
// The caller holds e.mu.
func (a *agent) settle(e *podEntry, pod *v1.Pod) {
	phase := pod.Status.Phase
	if e.rejection != "" {
		a.recorder.Eventf(pod, v1.EventTypeWarning, ReasonOutOfPods, "%s", e.rejection)
		st := v1.PodStatus{QOSClass: pod.Status.QOSClass, Phase: v1.PodFailed, Reason: ReasonOutOfPods, Message: rejectedPrefix + e.rejection}
		if err := a.status.SetPodStatus(context.Background(), pod, st); err != nil {
			a.counts.errors.Add(1)
			a.log.Error(err, "Cannot write the rejected pod's status", "pod", klogRef(pod))
			return
		}
		phase = v1.PodFailed
		if a.counts.admissionRejections.Add(1) == 1 {
			// Once per run: a node full at the kubelet's default of 110 pods surprises
			// a user who created a few hundred pods on two nodes.
			a.log.Info("Pod rejected: its node runs as many pods as it declares; raise the pod capacity of the nodes the agent creates with Options.MaxPods (fleet: --max-pods), or add nodes. Further rejections are logged at V(2) and counted (kubelet_admission_rejections_total)",
				"pod", klogRef(pod), "node", e.node.name, "reason", ReasonOutOfPods, "message", e.rejection)
		} else {
			a.log.V(2).Info("Pod rejected", "pod", klogRef(pod), "reason", ReasonOutOfPods, "message", e.rejection)
		}
	}
	if err := a.status.TerminatePod(context.Background(), pod); err != nil {
		a.counts.errors.Add(1)
		a.log.Error(err, "Cannot terminate a pod that does not run", "pod", klogRef(pod))
		return
	}
	e.settled = true
	a.counts.setPhase(e.phase, phase)
	e.phase = phase
}

// admitListed admits the pods of the informer's first list, which arrive in the order of
// their keys, in order of creation instead, as the kubelet admits the pods it is given at
// once (HandlePodAdditions in pkg/kubelet/kubelet.go sorts them): when a node is full, the
// newest are rejected. From then on every new pod is admitted as it arrives. Called once,
// before any worker runs.
func (a *agent) admitListed() {
	a.pods.mu.Lock()
	defer a.pods.mu.Unlock()
	var listed []*podEntry
	for _, e := range a.pods.pods {
		if e.admitLater {
			listed = append(listed, e)
		}
	}
	slices.SortFunc(listed, func(x, y *podEntry) int {
		p, q := x.pod.Load(), y.pod.Load()
		return cmp.Or(p.CreationTimestamp.Compare(q.CreationTimestamp.Time),
			cmp.Compare(p.Namespace, q.Namespace), cmp.Compare(p.Name, q.Name))
	})
	for _, e := range listed {
		admitPod(e, e.pod.Load())
		e.admitLater = false
	}
	a.pods.admitting = true
}
