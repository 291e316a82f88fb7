package status_test

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/status"
)

// Merge keeps the conditions other controllers own and, like the Manager, never moves a
// pod off a terminal phase the server shows. Its time is always given.
func ExampleMerge() {
	server := &v1.Pod{Status: v1.PodStatus{
		Phase:      v1.PodSucceeded,
		Conditions: []v1.PodCondition{{Type: "example.com/gate", Status: v1.ConditionTrue}},
	}}
	kubelet := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}}}
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

	merged, err := status.Merge(status.MergeInput{Server: server, Status: kubelet, Now: now})
	fmt.Println(merged.Phase, len(merged.Conditions), err)

	upstream, _ := status.Merge(status.MergeInput{Server: server, Status: kubelet, Now: now, UpstreamTerminalPhase: true})
	fmt.Println(upstream.Phase)

	_, err = status.Merge(status.MergeInput{Server: server, Status: kubelet})
	var ie *podstatus.InputError
	fmt.Println(errors.As(err, &ie), ie.Errs[0].Field)
	// Output:
	// Succeeded 2 <nil>
	// Running
	// true MergeInput.Now
}
