package readiness

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/kubeletrules"
)

// ReasonRestartingAllContainers is the reason the kubelet (v1.35 and later, feature
// RestartAllContainersOnContainerExits) gives a container it terminated or removed because
// another container's restart rule asked for all containers to restart in place. A
// container terminated for that reason is never counted as finished when the phase is
// derived.
const ReasonRestartingAllContainers = "RestartingAllContainers"

// PhaseInput is everything Phase reads. Only Pod is required.
type PhaseInput struct {
	// Pod supplies the spec: containers, init containers (sidecars are init containers
	// with restartPolicy Always), the pod's restartPolicy and each container's
	// restartPolicy and restartPolicyRules. Its status is not read.
	Pod *v1.Pod
	// InitContainerStatuses and ContainerStatuses are the container statuses as the
	// kubelet has them when it derives the phase. The kubelet looks a container up by name
	// in the two lists joined, regular statuses first; with duplicate names the first one
	// wins, and a status whose name is not in the spec is ignored. A container without a
	// status counts as the kubelet counts it: a regular init container as not yet
	// initialized, a sidecar or a regular container as "unknown".
	//
	// For a sidecar, Started matters: a running sidecar whose Started is not true keeps a
	// pod that has not initialized Pending.
	InitContainerStatuses []v1.ContainerStatus
	ContainerStatuses     []v1.ContainerStatus
	// Terminal is the kubelet's podIsTerminal: the pod worker has decided the pod is
	// finished (for example it was deleted or evicted, or every container ran to
	// completion under its restart policy), so no container will be restarted whatever
	// the restart policy says. A pod whose containers have all stopped is then Succeeded
	// when every regular container exited 0 and Failed otherwise.
	Terminal bool
	// Initialized is the kubelet's podHasInitialized: the container runtime has a regular
	// container (in any state) in the pod's current sandbox. The kubelet takes it from
	// runtime state (HasAnyActiveRegularContainerStarted), not from the API statuses, so
	// it is an input here too. When it is true, a sidecar that is restarting does not put
	// the pod back to Pending; when the sandbox was re-created it is false again, and the
	// pod re-initializes. Without a runtime view, "some regular container status is
	// Running or Terminated and belongs to the current sandbox" is the same test.
	Initialized bool
	// Features selects version-dependent behaviour. The zero value is the kubelet
	// v1.37.0 with default gates.
	Features features.Set
}

// Phase derives the pod phase from container statuses exactly as the kubelet v1.37.0's
// getPhase does (or the version selected by in.Features):
//
//   - Failed when a regular init container failed and will not be restarted (with
//     container restart rules, the default since v1.35: by its own restartPolicy and
//     restartPolicyRules, else by the pod's; without them: the pod's restartPolicy is
//     Never);
//   - Pending while a regular init container has not completed, while a sidecar has not
//     started and the pod has not initialized, or while any container is waiting without
//     having run before;
//   - Running when some container runs and every container's status is known;
//   - when every container has stopped: Succeeded or Failed if the pod is Terminal;
//     otherwise Running while some container will be restarted, else Succeeded when every
//     regular container exited 0 and Failed when one did not;
//   - Pending in every other case (for example when a container's status is missing).
//
// Static pods are out of scope: Phase treats every pod as one from the API server (the
// kubelet does not give a Terminal static pod a terminal phase).
//
// The error is non-nil only for malformed input (a nil Pod, or two containers of one
// name) and is then a *podstatus.InputError. Phase never mutates its input.
func Phase(in PhaseInput) (v1.PodPhase, error) {
	if err := kubeletrules.CheckPod(in.Pod, "PhaseInput.Pod"); err != nil {
		return "", fmt.Errorf("readiness: Phase: %w", err)
	}
	p := phaseCounter{in: &in, spec: &in.Pod.Spec, rules: kubeletrules.Rules{Features: in.Features}}
	for i := range p.spec.InitContainers {
		if c := &p.spec.InitContainers[i]; p.rules.IsSidecar(c) {
			p.sidecar(c)
		} else {
			p.initContainer(c)
		}
	}
	for i := range p.spec.Containers {
		p.regular(&p.spec.Containers[i])
	}
	return p.phase(), nil
}

// phaseCounter tallies the containers of one pod as the kubelet's getPhase does.
type phaseCounter struct {
	in    *PhaseInput
	spec  *v1.PodSpec
	rules kubeletrules.Rules

	// Regular init containers: not yet complete; failed; failed and not to be restarted.
	pendingInit, failedInit, failedInitFinal int
	// Sidecars not yet started (or waiting for their first run).
	pendingSidecar int
	// Sidecars and regular containers.
	unknown, running, waiting int
	// Regular containers only: stopped; stopped and not to be restarted; exited 0.
	stopped, stoppedFinal, succeeded int
}

// lookup returns the status named name. The kubelet joins regular statuses first, then
// init statuses; the first match wins.
func (p *phaseCounter) lookup(name string) *v1.ContainerStatus {
	for i := range p.in.ContainerStatuses {
		if p.in.ContainerStatuses[i].Name == name {
			return &p.in.ContainerStatuses[i]
		}
	}
	for i := range p.in.InitContainerStatuses {
		if p.in.InitContainerStatuses[i].Name == name {
			return &p.in.InitContainerStatuses[i]
		}
	}
	return nil
}

// exited returns the termination a stopped container is judged by: its current
// terminated state, or, while it waits to run again, its last one (nil when it has none).
func exited(s *v1.ContainerStatus) *v1.ContainerStateTerminated {
	switch {
	case s.State.Terminated != nil:
		return s.State.Terminated
	case s.State.Waiting != nil:
		return s.LastTerminationState.Terminated
	}
	return nil
}

// final reports whether container c, terminated with t, will stay stopped.
func (p *phaseCounter) final(c *v1.Container, t *v1.ContainerStateTerminated) bool {
	if p.in.Features.RestartAllContainers() && t.Reason == ReasonRestartingAllContainers {
		return false
	}
	return !p.rules.ContainerShouldRestart(c, p.spec, t.ExitCode)
}

// initContainer counts a regular init container.
func (p *phaseCounter) initContainer(c *v1.Container) {
	s := p.lookup(c.Name)
	if s == nil || s.State.Running != nil {
		p.pendingInit++
		return
	}
	t := exited(s)
	switch {
	case t == nil:
		p.pendingInit++
	case t.ExitCode != 0:
		p.failedInit++
		if p.final(c, t) {
			p.failedInitFinal++
		}
	}
}

// sidecar counts a restartable init container. A stopped sidecar does not count.
func (p *phaseCounter) sidecar(c *v1.Container) {
	s := p.lookup(c.Name)
	switch {
	case s == nil:
		p.unknown++
	case s.State.Running != nil:
		if s.Started == nil || !*s.Started {
			p.pendingSidecar++
		}
		p.running++
	case s.State.Terminated != nil:
	case s.State.Waiting != nil:
		if s.LastTerminationState.Terminated == nil {
			p.pendingSidecar++
			p.waiting++
		}
	default:
		p.pendingSidecar++
		p.unknown++
	}
}

// regular counts a regular container. Only a current termination with exit code 0
// counts as a success; a container waiting after a run counts as stopped.
func (p *phaseCounter) regular(c *v1.Container) {
	s := p.lookup(c.Name)
	switch {
	case s == nil:
		p.unknown++
		return
	case s.State.Running != nil:
		p.running++
		return
	}
	t := exited(s)
	switch {
	case t != nil:
		p.stopped++
		if p.in.Features.ContainerRestartRules() && p.final(c, t) {
			p.stoppedFinal++
		}
		if t == s.State.Terminated && t.ExitCode == 0 {
			p.succeeded++
		}
	case s.State.Waiting != nil:
		p.waiting++
	default:
		p.unknown++
	}
}

// phase turns the tallies into the phase.
func (p *phaseCounter) phase() v1.PodPhase {
	rules, policy := p.in.Features.ContainerRestartRules(), p.spec.RestartPolicy
	if rules && p.failedInitFinal > 0 || !rules && p.failedInit > 0 && policy == v1.RestartPolicyNever {
		return v1.PodFailed
	}
	switch {
	case p.pendingInit > 0, p.pendingSidecar > 0 && !p.in.Initialized, p.waiting > 0:
		return v1.PodPending
	case p.running > 0 && p.unknown == 0:
		return v1.PodRunning
	case p.running > 0 || p.stopped == 0 || p.unknown > 0:
		return v1.PodPending
	}
	// Every container has stopped.
	finished := v1.PodFailed
	if p.stopped == p.succeeded {
		finished = v1.PodSucceeded
	}
	switch {
	case p.in.Terminal:
		return finished
	case rules:
		if p.stopped != p.stoppedFinal {
			return v1.PodRunning // some container is being restarted
		}
		return finished
	case policy == v1.RestartPolicyAlways:
		return v1.PodRunning
	case finished == v1.PodSucceeded:
		return v1.PodSucceeded
	case policy == v1.RestartPolicyNever:
		return v1.PodFailed
	}
	return v1.PodRunning // OnFailure: the failed containers are being restarted
}
