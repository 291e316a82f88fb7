package kubeletrules_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/kubeletrules"
)

func ptr[T any](v T) *T { return &v }

func TestContainerShouldRestart(t *testing.T) {
	in := func(op v1.ContainerRestartRuleOnExitCodesOperator, action v1.ContainerRestartRuleAction, codes ...int32) v1.ContainerRestartRule {
		return v1.ContainerRestartRule{Action: action, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
	}
	never := ptr(v1.ContainerRestartPolicyNever)
	cases := []struct {
		c    v1.Container
		pod  v1.RestartPolicy
		exit int32
		f    features.Set
		want bool
	}{
		{v1.Container{}, "", 1, features.Set{}, true},
		{v1.Container{}, v1.RestartPolicyOnFailure, 0, features.Set{}, false},
		{v1.Container{}, v1.RestartPolicyOnFailure, 3, features.Set{}, true},
		{v1.Container{}, v1.RestartPolicyNever, 3, features.Set{}, false},
		{v1.Container{RestartPolicy: never, RestartPolicyRules: []v1.ContainerRestartRule{in(v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleActionRestart, 7)}}, v1.RestartPolicyAlways, 7, features.Set{}, true},
		{v1.Container{RestartPolicy: never, RestartPolicyRules: []v1.ContainerRestartRule{in(v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleActionRestart, 7)}}, v1.RestartPolicyAlways, 8, features.Set{}, false},
		{v1.Container{RestartPolicy: never, RestartPolicyRules: []v1.ContainerRestartRule{in(v1.ContainerRestartRuleOnExitCodesOpNotIn, v1.ContainerRestartRuleActionRestart, 7)}}, v1.RestartPolicyAlways, 8, features.Set{}, true},
		{v1.Container{RestartPolicy: never, RestartPolicyRules: []v1.ContainerRestartRule{in(v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleActionRestartAllContainers, 7)}}, v1.RestartPolicyAlways, 7, features.Set{}, true},
		{v1.Container{RestartPolicy: never, RestartPolicyRules: []v1.ContainerRestartRule{in(v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleActionRestartAllContainers, 7)}}, v1.RestartPolicyAlways, 7,
			features.Set{NoRestartAllContainers: true}, false},
		// Rules are read only when the container has its own restartPolicy.
		{v1.Container{RestartPolicyRules: []v1.ContainerRestartRule{in(v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleActionRestart, 7)}}, v1.RestartPolicyNever, 7, features.Set{}, false},
	}
	for i, c := range cases {
		spec := &v1.PodSpec{RestartPolicy: c.pod}
		if got := (kubeletrules.Rules{Features: c.f}).ContainerShouldRestart(&c.c, spec, c.exit); got != c.want {
			t.Errorf("case %d (%s): %v, want %v", i, fmt.Sprint(c.c.RestartPolicyRules), got, c.want)
		}
	}
}
