package podstate

import (
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/internal/kubeletrules"
	"github.com/podstatus/podstatus/readiness"
)

// Waiting reasons the kubelet v1.37.0 writes into container statuses.
const (
	// ReasonContainerCreating: a regular container of a pod without init containers has
	// not been created yet.
	ReasonContainerCreating = "ContainerCreating"
	// ReasonPodInitializing: a container of a pod with init containers has not been
	// created yet.
	ReasonPodInitializing = "PodInitializing"

	msgUnknownDeleted  = "The container could not be located when the pod was deleted.  The container used to be Running"
	msgRestartingAll   = "The container is removed because RestartAllContainers in place"
	msgInitAssumedDone = "Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally"
)

// kind says which list of the spec a container belongs to.
type kind int

const (
	kindInit kind = iota
	kindRegular
	kindEphemeral
)

// statuses builds the container statuses of one list of the spec, as the kubelet's
// convertToAPIContainerStatuses does from runtime records and the previous statuses.
func (g *gen) statuses(containers []v1.Container, previous []v1.ContainerStatus, k kind) []v1.ContainerStatus {
	old := make(map[string]*v1.ContainerStatus, len(previous))
	for i := range previous {
		old[previous[i].Name] = &previous[i] // last one wins, as in the kubelet's map
	}
	hasInit := len(g.pod.Spec.InitContainers) > 0
	waitReason := ReasonContainerCreating
	if hasInit {
		waitReason = ReasonPodInitializing
	}
	out := make([]v1.ContainerStatus, 0, len(containers))
	for i := range containers {
		c := &containers[i]
		o := old[c.Name]
		var s v1.ContainerStatus
		if f := g.facts[c.Name]; f != nil {
			s = g.fromFact(c, f, o)
		} else {
			s = g.missing(c, o, waitReason, k)
		}
		out = append(out, s)
	}
	if k != kindInit {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	}
	return out
}

// missing is the status of a container the runtime does not report.
func (g *gen) missing(c *v1.Container, o *v1.ContainerStatus, waitReason string, k kind) v1.ContainerStatus {
	s := v1.ContainerStatus{
		Name:         c.Name,
		Image:        c.Image,
		State:        v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: waitReason}},
		VolumeMounts: g.volumeMounts(c),
	}
	if o != nil {
		if o.State.Terminated != nil {
			s = *o.DeepCopy()
		} else {
			s.RestartCount = o.RestartCount
			s.LastTerminationState = *o.LastTerminationState.DeepCopy()
		}
	}
	switch {
	case o == nil:
	case g.restartingAll && o.State.Waiting == nil:
		// Removed while all containers restart in place.
		s.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: readiness.ReasonRestartingAllContainers, Message: msgRestartingAll}}
		s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{Reason: readiness.ReasonRestartingAllContainers, Message: msgRestartingAll, ExitCode: 137}
		s.RestartCount = o.RestartCount + 1
	case o.State.Terminated == nil && o.State.Running != nil &&
		s.State.Waiting != nil && s.State.Waiting.Reason == waitReason && s.LastTerminationState.Terminated == nil:
		// It was running and is gone: show it stopped rather than waiting, so the pod
		// does not fall back to Pending.
		s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{Reason: kubeletrules.ReasonContainerStatusUnknown, Message: msgUnknownDeleted, ExitCode: 137}
		if g.pod.DeletionTimestamp == nil {
			s.RestartCount++
		}
	}
	if k == kindInit && !g.sidecar(c) && g.regularCreated && s.State.Waiting != nil {
		// A regular container exists, so this init container completed; its record is gone.
		s.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed", Message: msgInitAssumedDone}}
	}
	return s
}

// fromFact is the status of a container the runtime reports.
func (g *gen) fromFact(c *v1.Container, f *Container, o *v1.ContainerStatus) v1.ContainerStatus {
	s := v1.ContainerStatus{
		Name:                 c.Name,
		RestartCount:         f.RestartCount,
		Image:                f.Image,
		ImageID:              f.ImageID,
		ContainerID:          f.ContainerID,
		LastTerminationState: *f.LastTerminationState.DeepCopy(),
		User:                 f.User.DeepCopy(),
	}
	if s.Image == "" {
		s.Image = c.Image
	}
	restartAll := g.features.RestartAllContainers()
	if o != nil {
		s.VolumeMounts = append([]v1.VolumeMountStatus(nil), o.VolumeMounts...)
		if restartAll {
			if o.RestartCount > s.RestartCount {
				s.RestartCount = o.RestartCount
			}
			if isZeroState(&f.LastTerminationState) {
				switch {
				case o.ContainerID != s.ContainerID && o.State.Terminated != nil:
					s.LastTerminationState.Terminated = o.State.Terminated.DeepCopy()
				case o.LastTerminationState.Terminated != nil:
					s.LastTerminationState.Terminated = o.LastTerminationState.Terminated.DeepCopy()
				}
			}
		}
	}
	switch {
	case f.State.Running != nil:
		s.State.Running = f.State.Running.DeepCopy()
		if restartAll && o != nil && o.State.Terminated != nil && o.RestartCount >= f.RestartCount {
			s.RestartCount = o.RestartCount + 1
		}
		if o != nil && o.Started != nil {
			st := *o.Started // the prober decides again for init and regular containers
			s.Started = &st
		}
	case f.State.Terminated != nil:
		s.State.Terminated = f.State.Terminated.DeepCopy()
		if s.State.Terminated.ContainerID == "" {
			s.State.Terminated.ContainerID = f.ContainerID
		}
	case f.State.Waiting != nil:
		s.State.Waiting = f.State.Waiting.DeepCopy()
	case o != nil && o.State.Running != nil:
		reason := kubeletrules.ReasonContainerStatusUnknown
		if g.restartingAll {
			reason = readiness.ReasonRestartingAllContainers
		}
		s.State.Terminated = &v1.ContainerStateTerminated{Reason: reason, Message: kubeletrules.MessageContainerNotLocated, ExitCode: 137}
		s.RestartCount = o.RestartCount + 1
	default:
		s.State.Waiting = &v1.ContainerStateWaiting{}
	}
	if f.Resources != nil {
		s.Resources = f.Resources.DeepCopy()
	} else {
		s.Resources = c.Resources.DeepCopy()
	}
	s.AllocatedResources = c.Resources.Requests.DeepCopy()
	return s
}

// volumeMounts lists c's volume mounts as a container status reports them.
func (g *gen) volumeMounts(c *v1.Container) []v1.VolumeMountStatus {
	var out []v1.VolumeMountStatus
	for _, m := range c.VolumeMounts {
		vs := v1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			mode := v1.RecursiveReadOnlyDisabled
			if m.RecursiveReadOnly != nil && g.rro {
				switch *m.RecursiveReadOnly {
				case v1.RecursiveReadOnlyEnabled, v1.RecursiveReadOnlyIfPossible:
					mode = v1.RecursiveReadOnlyEnabled
				}
			}
			vs.RecursiveReadOnly = &mode
		}
		out = append(out, vs)
	}
	return out
}

// probe sets Started and Ready on the init and regular container statuses as the kubelet's
// prober does: Started when running and the startup probe (if any) succeeded; Ready when
// started, running and the readiness probe (if any) succeeded; a regular init container
// Ready once it exited 0.
func (g *gen) probe(list []v1.ContainerStatus, specs []v1.Container, k kind) {
	for i := range list {
		s := &list[i]
		c := findContainer(specs, s.Name)
		f := g.facts[s.Name]
		running := s.State.Running != nil
		started := running && (c == nil || c.StartupProbe == nil || (f != nil && f.Startup == ProbeSuccess))
		s.Started = &started
		if k == kindInit && (c == nil || !g.sidecar(c)) {
			if s.State.Terminated != nil && s.State.Terminated.ExitCode == 0 {
				s.Ready = true
			}
			continue
		}
		if !started {
			continue
		}
		s.Ready = c == nil || c.ReadinessProbe == nil || (f != nil && f.Readiness == ProbeSuccess)
	}
}

func findContainer(specs []v1.Container, name string) *v1.Container {
	for i := range specs {
		if specs[i].Name == name {
			return &specs[i]
		}
	}
	return nil
}

func isZeroState(s *v1.ContainerState) bool {
	return s.Running == nil && s.Waiting == nil && s.Terminated == nil
}
