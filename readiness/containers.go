package readiness

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
)

// IsSidecar reports whether init container c is a sidecar: a restartable init container
// (restartPolicy Always), unless f turns sidecars off (Features.NoSidecars, an API server
// that strips the field). Every package of podstatus asks this one question the same way.
func IsSidecar(c *v1.Container, f features.Set) bool {
	return f.Sidecars() && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
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
