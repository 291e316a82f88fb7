// Package kubeletrules holds the kubelet's rules about a pod's containers that several
// packages of podstatus apply: which init containers are sidecars, whether a container is
// restarted after it exits (pkg/api/v1/pod/util.go, ContainerShouldRestart and
// AllContainersCouldRestart), the reason the kubelet gives a container it cannot find
// (pkg/kubelet/container/runtime.go, ContainerReasonStatusUnknown), and the check that
// a pod can be looked at by container name at all. readiness, podstate, status and podsim
// call them, so that every package asks each question the same way.
package kubeletrules

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
)

// Container-status reason and message the kubelet writes when it gives up on a container
// it cannot find; podstate.Generate and status.Manager.TerminatePod both write them.
const (
	// ReasonContainerStatusUnknown is the reason of a terminated state the kubelet
	// invents for a container the runtime no longer reports (kubecontainer's
	// ContainerReasonStatusUnknown), with exit code 137.
	ReasonContainerStatusUnknown = "ContainerStatusUnknown"
	// MessageContainerNotLocated is its message when the pod was terminated.
	MessageContainerNotLocated = "The container could not be located when the pod was terminated"
)

// Rules are the kubelet's container rules under one feature set. The zero value is the
// kubelet v1.37.0 with its default gates.
type Rules struct {
	// Features selects version-dependent behaviour.
	Features features.Set
}

// IsSidecar reports whether init container c is a sidecar: a restartable init container
// (restartPolicy Always), unless r.Features turns sidecars off (Features.NoSidecars, an
// API server that strips the field).
func (r Rules) IsSidecar(c *v1.Container) bool {
	return r.Features.Sidecars() && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// ContainerShouldRestart reports whether the kubelet restarts container c of a pod with
// spec after it exited with exitCode, as the kubelet v1.37.0's ContainerShouldRestart
// (pkg/api/v1/pod/util.go) does. When c has its own restartPolicy, its
// restartPolicyRules are tried first (the first matching rule decides: action Restart
// restarts; RestartAllContainers restarts when that feature is on), then its
// restartPolicy (Always; OnFailure: exitCode != 0; Never). Otherwise the pod's
// restartPolicy decides the same way, an empty one meaning Always.
//
// r.Features matters only for the RestartAllContainers action. This is the rule with
// container restart rules on (the default since v1.35); when
// Features.NoContainerRestartRules is set, callers do not ask it for regular containers.
func (r Rules) ContainerShouldRestart(c *v1.Container, spec *v1.PodSpec, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := MatchRestartRule(c, exitCode); ok {
			switch rule.Action {
			case v1.ContainerRestartRuleActionRestart:
				return true
			case v1.ContainerRestartRuleActionRestartAllContainers:
				if r.Features.RestartAllContainers() {
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

// CouldRestartAllContainers reports whether some init or regular container of spec has a
// restart rule whose action is RestartAllContainers (the kubelet's
// AllContainersCouldRestart): such a pod may restart every container in place, which
// relaxes the container state-transition check and adds the AllContainersRestarting
// condition.
func CouldRestartAllContainers(spec *v1.PodSpec) bool {
	for _, list := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			for _, r := range list[i].RestartPolicyRules {
				if r.Action == v1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
			}
		}
	}
	return false
}
