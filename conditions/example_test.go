package conditions_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
)

func ExampleSet() {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := t0.Add(time.Minute)
	conds := []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: t0}}

	// A new reason with the same status keeps the transition time.
	conds, changed := conditions.Set(conds, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ReadinessGatesNotReady"}, metav1.NewTime(t1))
	fmt.Println(changed, conds[0].Reason, conds[0].LastTransitionTime.UTC().Format(time.TimeOnly))

	// A new status moves it to now.
	conds, changed = conditions.Set(conds, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}, metav1.NewTime(t1))
	fmt.Println(changed, conds[0].Status, conds[0].LastTransitionTime.UTC().Format(time.TimeOnly))
	// Output:
	// true ReadinessGatesNotReady 00:00:00
	// true True 00:01:00
}

func ExampleValidateReadinessGates() {
	err := conditions.ValidateReadinessGates([]v1.PodReadinessGate{
		{ConditionType: "www.example.com/feature-1"},
		{ConditionType: "example.com/load balancer"},
	})
	fmt.Println(err)
	// Output:
	// spec.readinessGates[1]: invalid condition type "example.com/load balancer": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')
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
