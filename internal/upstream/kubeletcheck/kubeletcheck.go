// Package kubeletcheck checks one watched pod version against kubelet v1.37.0's own
// condition generators (pkg/kubelet/status/generate.go): the end-to-end tests of the
// fleet agent and of vkstatus run it on every version an agent wrote, as an oracle
// independent of podstatus.
package kubeletcheck

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
)

// Key is a condition's identity for the comparison: type, status, reason and message
// (the times are the status manager's, not the generators').
func Key(c v1.PodCondition) string {
	return fmt.Sprintf("%s|%s|%s|%s", c.Type, c.Status, c.Reason, c.Message)
}

func keyPtr(c *v1.PodCondition) string {
	if c == nil {
		return "<missing>"
	}
	return Key(*c)
}

// Find returns the condition of type t in conds, or nil.
func Find(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	_, c := podutil.GetPodConditionFromList(conds, t)
	return c
}

// Diff compares the Initialized, Ready and ContainersReady conditions of one pod version
// with the kubelet's generators run on that version's status (its container statuses,
// phase, and the conditions for which foreign is true: readiness gates another
// controller writes). It returns one line per condition that differs.
// PodReadyToStartContainers depends on the runtime's sandboxes, which are not in the
// status: the caller checks it.
//
// Two kinds of version carry conditions computed for another phase than their own, as
// the kubelet writes them:
//   - A terminal phase the status manager holds back while containers may still run (the
//     kubelet's mergePodStatus with couldHaveRunningContainers) leaves the phase as it was
//     but the conditions computed for the terminal phase (ContainersReady False with
//     PodFailed or PodCompleted). Such a version is checked against the generators run
//     with that terminal phase; heldBack says so.
//   - TerminatePod (pkg/kubelet/status/status_manager.go) turns a Pending phase into
//     Failed without computing the conditions again: a pod deleted before its containers
//     ran ends so, since the kubelet's final generateAPIPodStatus still finds it Pending.
//     A Failed version whose conditions are not the generators' for Failed is checked
//     against theirs for Pending. (Not for Running: a running pod's final status is
//     computed as terminal before TerminatePod, so Ready True on a Failed pod, say, is
//     a mismatch.)
func Diff(v *v1.Pod, foreign func(v1.PodConditionType) bool) (diffs []string, heldBack bool) {
	phase := v.Status.Phase
	if c := Find(v.Status.Conditions, v1.ContainersReady); c != nil && phase != v1.PodSucceeded && phase != v1.PodFailed {
		switch c.Reason {
		case "PodFailed":
			phase, heldBack = v1.PodFailed, true
		case "PodCompleted":
			phase, heldBack = v1.PodSucceeded, true
		}
	}
	diffs = diffAt(v, phase, foreign)
	if len(diffs) > 0 && v.Status.Phase == v1.PodFailed && diffAt(v, v1.PodPending, foreign) == nil {
		return nil, false
	}
	return diffs, heldBack
}

// diffAt is Diff's comparison with the generators run for phase.
func diffAt(v *v1.Pod, phase v1.PodPhase, foreign func(v1.PodConditionType) bool) (diffs []string) {
	old := v.Status.DeepCopy()
	all := append(append([]v1.ContainerStatus{}, v.Status.InitContainerStatuses...), v.Status.ContainerStatuses...)
	var others []v1.PodCondition
	for _, c := range v.Status.Conditions {
		if foreign(c.Type) {
			others = append(others, c)
		}
	}
	init := kubeletstatus.GeneratePodInitializedCondition(v, old, all, phase)
	want := []v1.PodCondition{
		init,
		kubeletstatus.GeneratePodReadyCondition(v, old, append(others, init), all, phase),
		kubeletstatus.GenerateContainersReadyCondition(v, old, all, phase),
	}
	for _, w := range want {
		got := Find(v.Status.Conditions, w.Type)
		if got == nil || Key(*got) != Key(w) {
			diffs = append(diffs, fmt.Sprintf("%s: server %v, kubelet %s", w.Type, keyPtr(got), Key(w)))
		}
	}
	return diffs
}
