package manager

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"

	"github.com/podstatus/podstatus/conditions"
)

// Condition types the sequences use besides the kubelet's own.
const (
	// gateType is the readiness gate of gated pods, written by "another controller".
	gateType v1.PodConditionType = "example.com/gate"
	// otherType is a foreign condition present on some pods from the start.
	otherType v1.PodConditionType = "example.com/other"
	// bogusType is a foreign condition the kubelet's status sometimes carries; both
	// managers must drop it when merging.
	bogusType v1.PodConditionType = "example.com/kubelet-made"
)

// Container lifecycle states of the simulated runtime.
const (
	waiting = iota
	running
	terminated
)

// ctr is one container as the simulated runtime sees it.
type ctr struct {
	name          string
	init, sidecar bool
	attempt       int
	state         int
	exit          int32
	last          *v1.ContainerStateTerminated
	ready         bool
	started       *bool
}

// id is the container's runtime ID ("" before its first start).
func (c *ctr) id() string {
	if c.attempt == 0 {
		return ""
	}
	return fmt.Sprintf("containerd://%s-%d", c.name, c.attempt)
}

// world is one random scenario: a pod, a simulated runtime for its containers, and the
// kubelet's view of the pod (its informer copy). It produces the statuses a kubelet
// would hand its status manager: container states follow legal lifecycles (restarts
// only where the restart policy allows, with a rare illegal restart that both managers
// must reject), the phase only moves forward, and the conditions are either what the
// kubelet's generators make of the containers or arbitrary values.
type world struct {
	rnd  *rand.Rand
	pod  *v1.Pod
	view *v1.Pod
	ctrs []*ctr
	// phase is the phase of the last generated status.
	phase v1.PodPhase
	// evicted is set once the pod was evicted: its statuses carry a DisruptionTarget.
	evicted bool
	// finished is set by TerminatePod: the kubelet sends no status afterwards.
	finished bool
	// hasStatus is set once SetPodStatus was called.
	hasStatus bool
	serial    int
}

// newWorld draws a pod: 1–3 regular containers, 0–2 init containers (the first possibly
// a sidecar), a restart policy, a readiness gate (usually), and an API status as the
// scheduler and other controllers left it.
func newWorld(seed uint64) *world {
	w := &world{rnd: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	policies := []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}
	spec := v1.PodSpec{RestartPolicy: policies[w.rnd.IntN(3)], NodeName: "node-1"}
	always := v1.ContainerRestartPolicyAlways
	for i := range w.rnd.IntN(3) {
		c := v1.Container{Name: fmt.Sprintf("init%d", i), Image: "img"}
		sc := i == 0 && w.rnd.IntN(2) == 0
		if sc {
			c.RestartPolicy = &always
		}
		spec.InitContainers = append(spec.InitContainers, c)
		w.ctrs = append(w.ctrs, &ctr{name: c.Name, init: true, sidecar: sc})
	}
	for i := range 1 + w.rnd.IntN(3) {
		c := v1.Container{Name: fmt.Sprintf("c%d", i), Image: "img"}
		spec.Containers = append(spec.Containers, c)
		w.ctrs = append(w.ctrs, &ctr{name: c.Name})
	}
	if w.rnd.IntN(10) < 7 {
		spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gateType}}
	}
	w.pod = &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod", UID: podUID(seed), Generation: 1},
		Spec:       spec,
		Status: v1.PodStatus{
			Phase: v1.PodPending,
			Conditions: []v1.PodCondition{{
				Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: fixedTime,
			}},
		},
	}
	if w.rnd.IntN(3) == 0 {
		w.pod.Status.Conditions = append(w.pod.Status.Conditions, v1.PodCondition{
			Type: otherType, Status: v1.ConditionTrue, Reason: "Other", LastTransitionTime: fixedTime,
		})
	}
	if len(spec.ReadinessGates) > 0 && w.rnd.IntN(3) == 0 {
		w.pod.Status.Conditions = append(w.pod.Status.Conditions, v1.PodCondition{
			Type: gateType, Status: v1.ConditionFalse, LastTransitionTime: fixedTime,
		})
	}
	w.view = w.pod.DeepCopy()
	w.phase = v1.PodPending
	return w
}

// fixedTime is the time controllers write; the comparison ignores times anyway.
var fixedTime = metav1.Date(2026, 1, 2, 3, 4, 5, 0, metav1.Now().Location())

// podUID returns the pod UID of a seed's scenario.
func podUID(seed uint64) types.UID { return types.UID("uid-" + strconv.FormatUint(seed, 10)) }

// restartable reports whether a terminated container may run again.
func (w *world) restartable(c *ctr) bool {
	if c.sidecar {
		return true
	}
	switch w.pod.Spec.RestartPolicy {
	case v1.RestartPolicyAlways:
		return !c.init // a regular init container that succeeded is done
	case v1.RestartPolicyOnFailure:
		return c.exit != 0
	}
	return false
}

// initsDone reports whether every init container before index i (all when i < 0) has
// completed (a sidecar: started).
func (w *world) initsDone(i int) bool {
	for j, c := range w.ctrs {
		if !c.init || (i >= 0 && j >= i) {
			continue
		}
		if c.sidecar {
			if c.state != running || c.started == nil || !*c.started {
				return false
			}
		} else if c.state != terminated || c.exit != 0 {
			return false
		}
	}
	return true
}

// advance makes one random runtime event happen, if the pod is not terminal yet, and
// returns a description of it.
func (w *world) advance() string {
	if terminal(w.phase) {
		return "runtime frozen (terminal)"
	}
	i := w.rnd.IntN(len(w.ctrs))
	c := w.ctrs[i]
	switch c.state {
	case waiting:
		if (c.init && !w.initsDone(i)) || (!c.init && !w.initsDone(-1)) {
			return c.name + " cannot start yet"
		}
		w.start(c)
		return c.name + " started"
	case running:
		switch r := w.rnd.IntN(6); {
		case r == 0 && c.started == nil:
			f := false
			c.started = &f
			return c.name + " startup false"
		case r <= 1:
			t := true
			c.started = &t
			return c.name + " startup true"
		case r <= 3:
			c.ready = c.started != nil && *c.started && !c.ready
			return fmt.Sprintf("%s ready=%v", c.name, c.ready)
		default:
			c.state, c.exit, c.ready = terminated, int32(w.rnd.IntN(2)), false
			return fmt.Sprintf("%s exited %d", c.name, c.exit)
		}
	default:
		if w.restartable(c) || w.rnd.IntN(25) == 0 {
			w.start(c)
			return c.name + " restarted"
		}
		return c.name + " stays terminated"
	}
}

// start runs a container (again): a new attempt and ID; the previous termination
// becomes its last state.
func (w *world) start(c *ctr) {
	if c.state == terminated {
		c.last = c.terminatedState()
	}
	c.attempt++
	c.state, c.ready = running, false
	c.started = nil
	if w.rnd.IntN(2) == 0 {
		f := false
		c.started = &f
	}
}

// terminatedState is the container's current termination as the API shows it.
func (c *ctr) terminatedState() *v1.ContainerStateTerminated {
	reason := "Completed"
	if c.exit != 0 {
		reason = "Error"
	}
	return &v1.ContainerStateTerminated{ExitCode: c.exit, Reason: reason, ContainerID: c.id()}
}

// apiStatus is the container's status as the kubelet reports it.
func (c *ctr) apiStatus() v1.ContainerStatus {
	s := v1.ContainerStatus{Name: c.name, Image: "img", ImageID: "sha256:img", ContainerID: c.id()}
	if c.attempt > 0 {
		s.RestartCount = int32(c.attempt - 1)
	}
	switch c.state {
	case waiting:
		reason := "ContainerCreating"
		if !c.init {
			reason = "PodInitializing"
		}
		s.State.Waiting = &v1.ContainerStateWaiting{Reason: reason}
	case running:
		s.State.Running = &v1.ContainerStateRunning{}
		s.Ready = c.ready
		if c.started != nil {
			b := *c.started
			s.Started = &b
		}
	default:
		s.State.Terminated = c.terminatedState()
		f := false
		s.Started = &f
	}
	if c.last != nil {
		s.LastTerminationState.Terminated = c.last.DeepCopy()
	}
	return s
}

// nextPhase derives the phase from the runtime, never leaving a terminal phase. Now and
// then a running pod is evicted: its containers are killed and it fails with a
// DisruptionTarget condition.
func (w *world) nextPhase() v1.PodPhase {
	if terminal(w.phase) {
		return w.phase
	}
	if w.phase == v1.PodRunning && w.rnd.IntN(30) == 0 {
		for _, c := range w.ctrs {
			if c.state == running {
				c.state, c.exit, c.ready = terminated, 137, false
			}
		}
		w.evicted = true
		return v1.PodFailed
	}
	var anyStarted, allDone, allOK = false, true, true
	for _, c := range w.ctrs {
		if c.init {
			continue
		}
		if c.attempt > 0 {
			anyStarted = true
		}
		if c.state != terminated || w.restartable(c) {
			allDone = false
		}
		if c.state == terminated && c.exit != 0 {
			allOK = false
		}
	}
	switch {
	case anyStarted && allDone && allOK:
		return v1.PodSucceeded
	case anyStarted && allDone:
		return v1.PodFailed
	case anyStarted:
		return v1.PodRunning
	}
	return v1.PodPending
}

// status generates the status the kubelet would hand SetPodStatus now. consistent
// chooses the kubelet's generators for the conditions; otherwise some are arbitrary.
func (w *world) status(consistent bool) v1.PodStatus {
	w.serial++
	s := v1.PodStatus{
		Phase:    w.phase,
		HostIP:   "10.0.0.1",
		HostIPs:  []v1.HostIP{{IP: "10.0.0.1"}},
		QOSClass: v1.PodQOSBestEffort,
	}
	var anyStarted bool
	for _, c := range w.ctrs {
		st := c.apiStatus()
		if c.init {
			s.InitContainerStatuses = append(s.InitContainerStatuses, st)
		} else {
			s.ContainerStatuses = append(s.ContainerStatuses, st)
		}
		anyStarted = anyStarted || c.attempt > 0
	}
	if w.rnd.IntN(5) == 0 { // the kubelet sorts them; a caller may not
		w.rnd.Shuffle(len(s.ContainerStatuses), func(i, j int) {
			s.ContainerStatuses[i], s.ContainerStatuses[j] = s.ContainerStatuses[j], s.ContainerStatuses[i]
		})
	}
	if anyStarted {
		ip := "10.1.0." + strconv.Itoa(5+w.rnd.IntN(2))
		s.PodIP, s.PodIPs = ip, []v1.PodIP{{IP: ip}}
	}
	if w.evicted {
		s.Reason, s.Message = "Evicted", "The node was low on resource: memory."
	} else if w.rnd.IntN(4) == 0 {
		s.Message = []string{"", "m1", "m2"}[w.rnd.IntN(3)]
	}
	// Foreign conditions come from the kubelet's informer copy, first.
	for _, c := range w.view.Status.Conditions {
		if !(conditions.Ownership{}).Owned(c.Type) && !(conditions.Ownership{}).Shared(c.Type) {
			s.Conditions = append(s.Conditions, c)
		}
	}
	if w.rnd.IntN(10) == 0 {
		s.Conditions = append(s.Conditions, v1.PodCondition{Type: bogusType, Status: v1.ConditionTrue})
	}
	all := append(append([]v1.ContainerStatus(nil), s.InitContainerStatuses...), s.ContainerStatuses...)
	old := &w.view.Status
	var own []v1.PodCondition
	prtc := v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionFalse, ObservedGeneration: 1}
	if anyStarted && !terminal(w.phase) {
		prtc.Status = v1.ConditionTrue
	}
	own = append(own,
		prtc,
		kubeletstatus.GeneratePodInitializedCondition(w.view, old, all, s.Phase),
		kubeletstatus.GeneratePodReadyCondition(w.view, old, s.Conditions, all, s.Phase),
		kubeletstatus.GenerateContainersReadyCondition(w.view, old, all, s.Phase),
		v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue, ObservedGeneration: 1},
	)
	if !consistent {
		for i := range own {
			// Deliberate difference (see TestGatedReadyRederivedFromEngine): for a pod
			// with readiness gates our Manager re-derives Ready from the cached
			// containers and the server's gates whenever it learns a newer server copy,
			// its own PATCH responses included, while the kubelet's keeps the Ready it
			// was given. Gated pods therefore get the Ready the kubelet's generator
			// makes; only their other conditions are arbitrary.
			if own[i].Type == v1.PodReady && len(w.pod.Spec.ReadinessGates) > 0 {
				continue
			}
			if w.rnd.IntN(2) == 0 {
				own[i].Status = []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}[w.rnd.IntN(2)]
				own[i].Reason = []string{"", "R1", "R2"}[w.rnd.IntN(3)]
				own[i].Message = []string{"", "msg"}[w.rnd.IntN(2)]
			}
		}
		if w.rnd.IntN(8) == 0 {
			if i := w.rnd.IntN(len(own)); own[i].Type != v1.PodReady || len(w.pod.Spec.ReadinessGates) == 0 {
				own = append(own[:i], own[i+1:]...)
			}
		}
		if w.rnd.IntN(8) == 0 {
			w.rnd.Shuffle(len(own), func(i, j int) { own[i], own[j] = own[j], own[i] })
		}
	}
	if w.evicted {
		own = append(own, v1.PodCondition{
			Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "TerminationByKubelet",
			Message: "The node was low on resource: memory.", ObservedGeneration: 1,
		})
	}
	s.Conditions = append(s.Conditions, own...)
	return s
}

// terminal reports whether a phase is terminal.
func terminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }
