package status_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/status"
)

// The patch for a pod becoming ready: only the two changed conditions are sent, with the
// reason and message they lost set to null, and $setElementOrder keeps the order of the
// whole list without resending the conditions that did not change (here a readiness gate
// written by another controller).
func ExamplePatchBytes() {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	gate := v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue, LastTransitionTime: t0}
	notReady := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ReadinessGatesNotReady", LastTransitionTime: t0}
	ready := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: t1}

	old := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{gate, notReady}}
	new := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{gate, ready}}
	patch, unchanged := status.PatchBytes("uid-1", old, new)
	fmt.Println(unchanged)
	fmt.Println(string(patch))

	_, unchanged = status.PatchBytes("uid-1", new, new)
	fmt.Println(unchanged)
	// Output:
	// false
	// {"metadata":{"uid":"uid-1"},"status":{"$setElementOrder/conditions":[{"type":"example.com/gate"},{"type":"Ready"}],"conditions":[{"lastTransitionTime":"2026-01-01T00:01:00Z","reason":null,"status":"True","type":"Ready"}]}}
	// true
}
