package conditions_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
)

func ExampleValidateReadinessGates() {
	errs := conditions.ValidateReadinessGates([]v1.PodReadinessGate{
		{ConditionType: "www.example.com/feature-1"},
		{ConditionType: "example.com/load balancer"},
	}, field.NewPath("spec", "readinessGates"))
	fmt.Println(errs.ToAggregate())
	// Output:
	// spec.readinessGates[1].conditionType: Invalid value: "example.com/load balancer": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')
}

func ExampleOwnership() {
	v137 := conditions.Ownership{Features: features.V1_37()}
	old := conditions.Ownership{Features: features.Set{NoReadyToStartContainers: true}}
	for _, t := range []v1.PodConditionType{v1.PodReady, v1.PodReadyToStartContainers, v1.DisruptionTarget, "example.com/lb"} {
		fmt.Printf("%s: owned=%v shared=%v foreign=%v; without PodReadyToStartContainers owned=%v\n",
			t, v137.Owned(t), v137.Shared(t), v137.Foreign(t), old.Owned(t))
	}
	// Output:
	// Ready: owned=true shared=false foreign=false; without PodReadyToStartContainers owned=true
	// PodReadyToStartContainers: owned=true shared=false foreign=false; without PodReadyToStartContainers owned=false
	// DisruptionTarget: owned=false shared=true foreign=false; without PodReadyToStartContainers owned=false
	// example.com/lb: owned=false shared=false foreign=true; without PodReadyToStartContainers owned=false
}
