package readiness

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
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
}

// Phase derives the pod phase from container statuses exactly as the kubelet v1.37.0's
// getPhase does (or the version selected with WithFeatures):
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
// The error is non-nil only for malformed input: a nil Pod, or two containers of one name.
// Phase never mutates its input.
func Phase(in PhaseInput, opts ...Option) (v1.PodPhase, error) {
	if in.Pod == nil {
		return "", errors.New("readiness: phase input has no pod (PhaseInput.Pod is nil)")
	}
	spec := &in.Pod.Spec
	if err := checkNames(spec); err != nil {
		return "", fmt.Errorf("readiness: phase of pod %s/%s: %w", in.Pod.Namespace, in.Pod.Name, err)
	}
	cfg := newConfig(opts)
	f := cfg.features
	lookup := func(name string) *v1.ContainerStatus {
		// The kubelet joins regular statuses first, then init statuses.
		for i := range in.ContainerStatuses {
			if in.ContainerStatuses[i].Name == name {
				return &in.ContainerStatuses[i]
			}
		}
		for i := range in.InitContainerStatuses {
			if in.InitContainerStatuses[i].Name == name {
				return &in.InitContainerStatuses[i]
			}
		}
		return nil
	}
	// notRestartable reports whether container c, terminated with t, will stay stopped.
	notRestartable := func(c *v1.Container, t *v1.ContainerStateTerminated) bool {
		restart := ContainerShouldRestart(c, spec, t.ExitCode, opts...)
		if f.RestartAllContainers() && t.Reason == ReasonRestartingAllContainers {
			restart = true
		}
		return !restart
	}

	var pendingInit, pendingSidecar, failedInit, failedInitFinal int
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if IsSidecar(c, f) {
			continue
		}
		s := lookup(c.Name)
		switch {
		case s == nil, s.State.Running != nil:
			pendingInit++
		case s.State.Terminated != nil:
			if s.State.Terminated.ExitCode != 0 {
				failedInit++
				if notRestartable(c, s.State.Terminated) {
					failedInitFinal++
				}
			}
		case s.State.Waiting != nil && s.LastTerminationState.Terminated != nil:
			if s.LastTerminationState.Terminated.ExitCode != 0 {
				failedInit++
				if notRestartable(c, s.LastTerminationState.Terminated) {
					failedInitFinal++
				}
			}
		default:
			pendingInit++
		}
	}

	var unknown, running, waiting, stopped, stoppedFinal, succeeded int
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if !IsSidecar(c, f) {
			continue
		}
		s := lookup(c.Name)
		switch {
		case s == nil:
			unknown++
		case s.State.Running != nil:
			if s.Started == nil || !*s.Started {
				pendingSidecar++
			}
			running++
		case s.State.Terminated != nil:
			// A stopped sidecar does not count towards the phase.
		case s.State.Waiting != nil:
			if s.LastTerminationState.Terminated == nil {
				pendingSidecar++
				waiting++
			}
		default:
			pendingSidecar++
			unknown++
		}
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		s := lookup(c.Name)
		switch {
		case s == nil:
			unknown++
		case s.State.Running != nil:
			running++
		case s.State.Terminated != nil:
			stopped++
			if f.ContainerRestartRules() && notRestartable(c, s.State.Terminated) {
				stoppedFinal++
			}
			if s.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case s.State.Waiting != nil && s.LastTerminationState.Terminated != nil:
			stopped++
			if f.ContainerRestartRules() && notRestartable(c, s.LastTerminationState.Terminated) {
				stoppedFinal++
			}
		case s.State.Waiting != nil:
			waiting++
		default:
			unknown++
		}
	}

	if f.ContainerRestartRules() {
		if failedInitFinal > 0 {
			return v1.PodFailed, nil
		}
	} else if failedInit > 0 && spec.RestartPolicy == v1.RestartPolicyNever {
		return v1.PodFailed, nil
	}
	switch {
	case pendingInit > 0, pendingSidecar > 0 && !in.Initialized, waiting > 0:
		return v1.PodPending, nil
	case running > 0 && unknown == 0:
		return v1.PodRunning, nil
	case running == 0 && stopped > 0 && unknown == 0:
		finished := func() v1.PodPhase {
			if stopped == succeeded {
				return v1.PodSucceeded
			}
			return v1.PodFailed
		}
		switch {
		case in.Terminal:
			return finished(), nil
		case f.ContainerRestartRules():
			if stopped != stoppedFinal {
				return v1.PodRunning, nil // some container is being restarted
			}
			return finished(), nil
		case spec.RestartPolicy == v1.RestartPolicyAlways:
			return v1.PodRunning, nil
		case stopped == succeeded:
			return v1.PodSucceeded, nil
		case spec.RestartPolicy == v1.RestartPolicyNever:
			return v1.PodFailed, nil
		default: // OnFailure: the failed containers are being restarted
			return v1.PodRunning, nil
		}
	}
	return v1.PodPending, nil
}

// ContainerShouldRestart reports whether the kubelet restarts container c of a pod with
// spec after it exited with exitCode, as the kubelet v1.37.0's ContainerShouldRestart
// does. When c has its own restartPolicy, its restartPolicyRules are tried first (the
// first matching rule decides: action Restart restarts; RestartAllContainers restarts
// when that feature is on), then its restartPolicy (Always; OnFailure: exitCode != 0;
// Never). Otherwise the pod's restartPolicy decides the same way, an empty one meaning
// Always.
//
// This is the rule with container restart rules on (the default since v1.35); when
// Features.NoContainerRestartRules is set, Phase does not call it for regular containers.
func ContainerShouldRestart(c *v1.Container, spec *v1.PodSpec, exitCode int32, opts ...Option) bool {
	if c.RestartPolicy != nil {
		if rule, ok := MatchRestartRule(c, exitCode); ok {
			switch rule.Action {
			case v1.ContainerRestartRuleActionRestart:
				return true
			case v1.ContainerRestartRuleActionRestartAllContainers:
				if newConfig(opts).features.RestartAllContainers() {
					return true
				}
			}
		}
		switch *c.RestartPolicy {
		case v1.ContainerRestartPolicyAlways:
			return true
		case v1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case v1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	case v1.RestartPolicyNever:
		return false
	}
	return true
}

// MatchRestartRule returns the first of c's restartPolicyRules whose exit-code
// requirement matches exitCode (operator In: exitCode is listed; NotIn: it is not), and
// whether one matched. Rules without exit codes or with an unknown operator never match.
func MatchRestartRule(c *v1.Container, exitCode int32) (v1.ContainerRestartRule, bool) {
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil {
			continue
		}
		listed := false
		for _, v := range r.ExitCodes.Values {
			if v == exitCode {
				listed = true
				break
			}
		}
		switch r.ExitCodes.Operator {
		case v1.ContainerRestartRuleOnExitCodesOpIn:
			if listed {
				return r, true
			}
		case v1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !listed {
				return r, true
			}
		}
	}
	return v1.ContainerRestartRule{}, false
}

// ResolveFeatures returns the feature set that opts select (the zero Set, v1.37.0, when
// none does), for packages that build on this one and take the same options.
func ResolveFeatures(opts ...Option) Features { return newConfig(opts).features }
