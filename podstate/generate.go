package podstate

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/accept"
	"github.com/podstatus/podstatus/internal/kubeletrules"
	"github.com/podstatus/podstatus/readiness"
)

// Condition reason of AllContainersRestarting (kubelet v1.35 and later).
const (
	// ReasonRestartAllContainersStarted: a container exited with a restart rule whose
	// action is RestartAllContainers, and the containers are being restarted in place.
	ReasonRestartAllContainersStarted = "RestartAllContainersStarted"
	msgRestartAllStarted              = "container exited with restart policy rule"
)

// gen holds what one Generate call has worked out.
type gen struct {
	in       *Input
	pod      *v1.Pod
	base     *v1.PodStatus
	features features.Set
	rules    kubeletrules.Rules
	facts    map[string]*Container
	rro      bool
	// regularCreated: the runtime has a regular container in a known state (the
	// kubelet's HasAnyRegularContainerCreated).
	regularCreated bool
	// restartingAll: all containers are being restarted in place (ShouldAllContainersRestart).
	restartingAll bool
}

// Generate returns the status the kubelet v1.37.0's generateAPIPodStatus would produce for
// in (or the version selected by in.Features):
//
//   - the container statuses, one per container of the spec (init in spec order, regular
//     and ephemeral by name), with Started and Ready set as the prober sets them;
//   - the phase, derived by readiness.Phase; a terminal phase in OldStatus or on the
//     server is never left, and the reason and message are carried over while the phase
//     does not change;
//   - the pod IPs (from the newest sandbox, if it is ready) and the host IPs;
//   - the conditions, in the kubelet's order: the server's conditions that the kubelet
//     does not own, in server order; the resize conditions; DisruptionTarget from the
//     previous status, replacing the server's copy in place; PodReadyToStartContainers;
//     Initialized; Ready (whose readiness gates read the conditions before it);
//     ContainersReady; PodScheduled True; AllContainersRestarting when a container has a
//     RestartAllContainers rule. The kubelet-owned ones are what readiness.Evaluate
//     computes for the same inputs;
//   - the pod-level allocatedResources (the aggregate requests of the spec) and
//     resources: for a pod the server does not show Running, the aggregate requests and
//     limits over spec.resources; for a Running one, spec.resources with the pod cgroup's
//     values (Input.PodCgroup), or the previous status's where the cgroup was not read
//     (gate InPlacePodLevelResourcesVerticalScaling, beta since v1.36; off with
//     features.Set.NoPodLevelResourcesStatus).
//
// Every lastTransitionTime Generate writes is zero, and startTime and the pod-level
// observedGeneration are unset: in the kubelet the status manager sets them when it
// accepts the status, and status.Manager.SetPodStatus does the same. Callers without a
// manager call Stamp.
//
// One deliberate difference: the kubelet derives the phase before its prober updates
// Started, from the Started of the previous status, and catches up one sync later.
// Generate derives it after, so that the phase and the containers' Started and Ready of one
// status agree; it is the phase the kubelet settles on.
//
// The error is non-nil only for malformed input (a nil Pod, two containers of one name in
// the spec, or two facts of one name) and is then a *podstatus.InputError whose field
// paths start at Input ("Input.Containers[1].Name").
func Generate(in Input) (v1.PodStatus, error) {
	if err := kubeletrules.CheckPod(in.Pod, "Input.Pod"); err != nil {
		return v1.PodStatus{}, fmt.Errorf("podstate: Generate: %w", err)
	}
	pod := in.Pod
	g := &gen{
		in:       &in,
		pod:      pod,
		base:     in.base(),
		features: in.Features,
		facts:    make(map[string]*Container, len(in.Containers)),
		rro:      in.RecursiveReadOnlyMounts,
		rules:    kubeletrules.Rules{Features: in.Features},
	}
	for i := range in.Containers {
		f := &in.Containers[i]
		if _, dup := g.facts[f.Name]; dup {
			return v1.PodStatus{}, fmt.Errorf("podstate: Generate: %w", &podstatus.InputError{Pod: kubeletrules.PodName(pod),
				Errs: field.ErrorList{field.Duplicate(field.NewPath("Input", "Containers").Index(i).Child("Name"), f.Name)}})
		}
		g.facts[f.Name] = f
	}
	spec := &pod.Spec
	for i := range spec.Containers {
		if f := g.facts[spec.Containers[i].Name]; f != nil && !isZeroState(&f.State) {
			g.regularCreated = true
			break
		}
	}
	g.restartingAll = g.features.RestartAllContainers() && g.shouldAllContainersRestart()

	var s v1.PodStatus
	s.PodIPs, s.PodIP = g.podIPs()
	s.QOSClass = pod.Status.QOSClass
	if s.QOSClass == "" {
		s.QOSClass = g.base.QOSClass
	}
	s.ContainerStatuses = g.statuses(spec.Containers, g.base.ContainerStatuses, kindRegular)
	s.InitContainerStatuses = g.statuses(spec.InitContainers, g.base.InitContainerStatuses, kindInit)
	eph := make([]v1.Container, len(spec.EphemeralContainers))
	for i := range spec.EphemeralContainers {
		eph[i] = v1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
	}
	s.EphemeralContainerStatuses = g.statuses(eph, g.base.EphemeralContainerStatuses, kindEphemeral)
	g.probe(s.ContainerStatuses, spec.Containers, kindRegular)
	g.probe(s.InitContainerStatuses, spec.InitContainers, kindInit)

	phase, err := readiness.Phase(readiness.PhaseInput{
		Pod:                   pod,
		InitContainerStatuses: s.InitContainerStatuses,
		ContainerStatuses:     s.ContainerStatuses,
		Terminal:              in.Terminal,
		Initialized:           g.activeRegularContainer(),
		Features:              in.Features,
	})
	if err != nil {
		return v1.PodStatus{}, fmt.Errorf("podstate: Generate: %w", err)
	}
	g.setPhase(&s, phase)

	if err := g.setConditions(&s); err != nil {
		return v1.PodStatus{}, fmt.Errorf("podstate: Generate: %w", err)
	}
	g.setHostIPs(&s)
	g.setPodResources(&s)
	return s, nil
}

// setPhase applies the kubelet's terminal-phase rules to the derived phase.
func (g *gen) setPhase(s *v1.PodStatus, phase v1.PodPhase) {
	api := g.pod.Status.Phase
	phase = accept.FinalPhase(phase, g.base.Phase, api)
	s.Phase = phase
	if phase == g.base.Phase {
		s.Reason, s.Message = g.base.Reason, g.base.Message
		if s.Reason == "" {
			s.Reason = g.pod.Status.Reason
		}
		if s.Message == "" {
			s.Message = g.pod.Status.Message
		}
	}
	if e := g.in.Eviction; e != nil {
		s.Phase, s.Reason, s.Message = v1.PodFailed, e.Reason, e.Message
	}
	if accept.Leaves(api, s.Phase) {
		s.Phase = api // a pod never leaves a terminal phase the server shows
	}
}

// setConditions writes the conditions in the kubelet's order.
func (g *gen) setConditions(s *v1.PodStatus) error {
	pod, base := g.pod, g.base
	own := conditions.Ownership{Features: g.features}
	var resize []v1.PodConditionType
	if !g.in.Terminal {
		resize = []v1.PodConditionType{v1.PodResizePending, v1.PodResizeInProgress}
	}
	restartAll := g.features.RestartAllContainers() && kubeletrules.CouldRestartAllContainers(&pod.Spec)
	// Sized once for everything appended below (a slice sized for the worst case, or
	// regrown, was a third of the bytes one status step allocated).
	n := 5 // PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled
	for i := range pod.Status.Conditions {
		if !own.Owned(pod.Status.Conditions[i].Type) {
			n++
		}
	}
	for _, t := range resize {
		if conditions.Get(g.in.Resize, t) != nil {
			n++
		}
	}
	if conditions.Get(base.Conditions, v1.DisruptionTarget) != nil &&
		(own.Owned(v1.DisruptionTarget) || conditions.Get(pod.Status.Conditions, v1.DisruptionTarget) == nil) {
		n++ // appended below, not replaced in place
	}
	if restartAll {
		n++
	}
	conds := make([]v1.PodCondition, 0, n)
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; !own.Owned(c.Type) {
			conds = append(conds, *c.DeepCopy())
		}
	}
	for _, t := range resize {
		if c := conditions.Get(g.in.Resize, t); c != nil {
			rc := *c.DeepCopy()
			if g.conditionGeneration(t) == 0 {
				rc.ObservedGeneration = 0
			}
			conds = append(conds, rc)
		}
	}
	if dt := conditions.Get(base.Conditions, v1.DisruptionTarget); dt != nil {
		if i := conditions.Index(conds, v1.DisruptionTarget); i >= 0 {
			conds[i] = *dt.DeepCopy()
		} else {
			conds = append(conds, *dt.DeepCopy())
		}
	}
	ein := readiness.Input{
		Pod:                   pod,
		Phase:                 s.Phase,
		InitContainerStatuses: s.InitContainerStatuses,
		ContainerStatuses:     s.ContainerStatuses,
		Conditions:            conds,
		Sandboxes:             g.in.Sandboxes,
		OldStatus:             base,
		Features:              g.features,
	}
	r, err := readiness.Evaluate(ein)
	if err != nil {
		return err
	}
	if r.PodReadyToStartContainers.Type != "" {
		conds = append(conds, r.PodReadyToStartContainers)
	}
	conds = append(conds, r.Initialized)
	if g.gateReadsOwnCondition() {
		// Ready reads the conditions accumulated so far, which now include the two above.
		ein.Conditions = conds
		if r, err = readiness.Evaluate(ein); err != nil {
			return err
		}
	}
	conds = append(conds, r.Ready, r.ContainersReady, v1.PodCondition{
		Type:               v1.PodScheduled,
		ObservedGeneration: g.conditionGeneration(v1.PodScheduled),
		Status:             v1.ConditionTrue,
	})
	if restartAll {
		conds = append(conds, g.allContainersRestarting(s.Phase))
	}
	s.Conditions = conds
	return nil
}

// gateReadsOwnCondition reports whether a readiness gate names a condition Generate
// writes before Ready.
func (g *gen) gateReadsOwnCondition() bool {
	for _, rg := range g.pod.Spec.ReadinessGates {
		if rg.ConditionType == v1.PodReadyToStartContainers || rg.ConditionType == v1.PodInitialized {
			return true
		}
	}
	return false
}

// conditionGeneration is the kubelet's CalculatePodConditionObservedGeneration against the
// previous status.
func (g *gen) conditionGeneration(t v1.PodConditionType) int64 {
	if g.features.ObservedGenerationTracking() {
		return g.pod.Generation
	}
	for i := range g.base.Conditions {
		if c := &g.base.Conditions[i]; c.Type == t && c.ObservedGeneration != 0 {
			return g.pod.Generation
		}
	}
	return 0
}

// sidecar reports whether init container c is a sidecar under the feature set.
func (g *gen) sidecar(c *v1.Container) bool { return g.rules.IsSidecar(c) }

// activeRegularContainer is the kubelet's HasAnyActiveRegularContainerStarted: the newest
// sandbox is ready and a regular container belongs to it.
func (g *gen) activeRegularContainer() bool {
	sb := g.in.Sandboxes
	if len(sb) == 0 || !sb[0].Ready {
		return false
	}
	for i := range g.pod.Spec.Containers {
		if f := g.facts[g.pod.Spec.Containers[i].Name]; f != nil && (f.SandboxID == "" || f.SandboxID == sb[0].ID) {
			return true
		}
	}
	return false
}

// shouldAllContainersRestart is the kubelet's ShouldAllContainersRestart: the previous
// status says so, or a container the runtime reports exited has (per the runtime, else per
// the previous status) an exit code whose rule restarts all containers.
func (g *gen) shouldAllContainersRestart() bool {
	for i := range g.base.Conditions {
		if c := &g.base.Conditions[i]; c.Type == v1.AllContainersRestarting && c.Status == v1.ConditionTrue {
			return true
		}
	}
	old := make(map[string]*v1.ContainerStatus)
	for i := range g.base.InitContainerStatuses {
		old[g.base.InitContainerStatuses[i].Name] = &g.base.InitContainerStatuses[i]
	}
	for i := range g.base.ContainerStatuses {
		old[g.base.ContainerStatuses[i].Name] = &g.base.ContainerStatuses[i]
	}
	restartsAll := func(c *v1.Container, t *v1.ContainerStateTerminated) bool {
		r, ok := kubeletrules.MatchRestartRule(c, t.ExitCode)
		return ok && r.Action == v1.ContainerRestartRuleActionRestartAllContainers
	}
	for _, list := range [][]v1.Container{g.pod.Spec.InitContainers, g.pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			// As in the kubelet, the previous status is consulted only for a container the
			// runtime reports exited.
			f := g.facts[c.Name]
			if f == nil || f.State.Terminated == nil {
				continue
			}
			if restartsAll(c, f.State.Terminated) {
				return true
			}
			if o := old[c.Name]; o != nil && o.State.Terminated != nil && restartsAll(c, o.State.Terminated) {
				return true
			}
		}
	}
	return false
}

// allContainersRestarting is the kubelet's GenerateAllContainersRestartingCondition.
func (g *gen) allContainersRestarting(phase v1.PodPhase) v1.PodCondition {
	c := v1.PodCondition{Type: v1.AllContainersRestarting, Status: v1.ConditionFalse}
	switch {
	case phase == v1.PodSucceeded:
		c.Reason = readiness.ReasonPodCompleted
	case phase == v1.PodFailed:
		c.Reason = readiness.ReasonPodFailed
	case !g.restartingAll:
	case g.cleanedUp():
	default:
		c.Status, c.Reason, c.Message = v1.ConditionTrue, ReasonRestartAllContainersStarted, msgRestartAllStarted
	}
	return c
}

// cleanedUp reports whether the runtime has no init or regular container of the pod left.
func (g *gen) cleanedUp() bool {
	for _, list := range [][]v1.Container{g.pod.Spec.InitContainers, g.pod.Spec.Containers} {
		for i := range list {
			if g.facts[list[i].Name] != nil {
				return false
			}
		}
	}
	return true
}
