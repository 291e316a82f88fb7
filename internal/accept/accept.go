// Package accept holds the rules the kubelet's status manager applies when it accepts a
// status (pkg/kubelet/status/status_manager.go, updateStatusInternal) or merges it with
// the server's (mergePodStatus: a finished pod is never ready), and the rule that a
// terminal phase is final (pkg/kubelet/kubelet_pods.go, generateAPIPodStatus). They are
// written once here and used by status.Manager and podstate, so that a status stamped
// without a manager is the status the Manager would cache.
package accept

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
)

// Terminal reports whether p is a terminal phase: Succeeded or Failed.
func Terminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// FinalPhase returns phase unless it is not terminal and one of earlier is: then the
// first terminal phase of earlier. A pod never leaves a terminal phase.
func FinalPhase(phase v1.PodPhase, earlier ...v1.PodPhase) v1.PodPhase {
	if Terminal(phase) {
		return phase
	}
	for _, p := range earlier {
		if Terminal(p) {
			return p
		}
	}
	return phase
}

// Leaves reports whether a status with phase p would take the pod off the terminal phase
// the server shows: server is terminal and p differs. The kubelet never sends such a
// status.
func Leaves(server, p v1.PodPhase) bool { return Terminal(server) && p != server }

// stamped reports whether the status manager sets the lastTransitionTime of condition
// type t: PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled,
// DisruptionTarget and AllContainersRestarting. Resize conditions carry their own times;
// foreign conditions keep theirs.
func stamped(t v1.PodConditionType) bool {
	switch t {
	case v1.ContainersReady, v1.PodReady, v1.PodInitialized, v1.PodReadyToStartContainers,
		v1.PodScheduled, v1.DisruptionTarget, v1.AllContainersRestarting:
		return true
	}
	return false
}

// Stamp sets the times and the observed generation of s against old, the status it
// replaces, as the status manager does when it accepts s:
//
//   - the first condition of each stamped type keeps old's lastTransitionTime when old
//     has that type with the same Status (even a zero time), and gets now otherwise; a
//     time on s is overwritten;
//   - startTime is old's when old has one, else s's when s has one, else now;
//   - observedGeneration never goes below old's.
//
// s.Conditions must not share its backing array with old.Conditions.
func Stamp(s, old *v1.PodStatus, now metav1.Time) {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if stamped(c.Type) && conditions.Index(s.Conditions, c.Type) == i {
			c.LastTransitionTime = TransitionTime(old.Conditions, c.Type, c.Status, now)
		}
	}
	switch {
	case old.StartTime != nil && !old.StartTime.IsZero():
		s.StartTime = old.StartTime.DeepCopy()
	case s.StartTime.IsZero():
		s.StartTime = now.DeepCopy()
	}
	if old.ObservedGeneration > s.ObservedGeneration {
		s.ObservedGeneration = old.ObservedGeneration
	}
}

// ObservedGeneration is the pod-level observedGeneration the kubelet writes for pod: its
// metadata.generation when observedGeneration tracking is on or the server's status
// already carries one, else 0.
func ObservedGeneration(pod *v1.Pod, f features.Set) int64 {
	if f.ObservedGenerationTracking() || pod.Status.ObservedGeneration != 0 {
		return pod.Generation
	}
	return 0
}

// SetCondition replaces the first condition of c's type in conds, or appends c when there
// is none, with the kubelet's lastTransitionTime rule, and reports whether anything
// changed: when a condition of that type exists with the same Status, its
// LastTransitionTime is kept (even when it is zero, as the kubelet does); otherwise it
// becomes now. Any LastTransitionTime on c is ignored. Like append, SetCondition may write
// into the backing array of conds and returns the slice to use from then on.
//
// changed is true when the condition is new, or when Status, Reason, Message,
// LastProbeTime, LastTransitionTime or ObservedGeneration differ from the old one.
func SetCondition(conds []v1.PodCondition, c v1.PodCondition, now metav1.Time) ([]v1.PodCondition, bool) {
	i := conditions.Index(conds, c.Type)
	if i < 0 {
		c.LastTransitionTime = now
		return append(conds, c), true
	}
	old := conds[i]
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	} else {
		c.LastTransitionTime = now
	}
	changed := old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message ||
		!old.LastProbeTime.Equal(&c.LastProbeTime) ||
		!old.LastTransitionTime.Equal(&c.LastTransitionTime) ||
		old.ObservedGeneration != c.ObservedGeneration
	conds[i] = c
	return conds, changed
}

// TransitionTime returns the lastTransitionTime a condition of type t with status s
// carries, given the previous list old: the old time when old has that type with the same
// status, else now. It is the rule SetCondition applies, for callers that build lists
// themselves.
func TransitionTime(old []v1.PodCondition, t v1.PodConditionType, s v1.ConditionStatus, now metav1.Time) metav1.Time {
	if p := conditions.Get(old, t); p != nil && p.Status == s {
		return p.LastTransitionTime
	}
	return now
}

// Reasons ForceTerminal writes; readiness exports them as ReasonPodCompleted and
// ReasonPodFailed (its tests check that they agree).
const (
	reasonPodCompleted = "PodCompleted"
	reasonPodFailed    = "PodFailed"
)

// ForceTerminal makes Ready and ContainersReady False in a terminal phase, as the
// kubelet's mergePodStatus does: when s.Phase is Succeeded or Failed and either condition
// is True, ContainersReady and then Ready are set False with reason PodCompleted or
// PodFailed (replaced in place or appended, lastTransitionTime now). It reports whether
// s changed; outside a terminal phase it does nothing.
func ForceTerminal(s *v1.PodStatus, now metav1.Time) bool {
	var reason string
	switch s.Phase {
	case v1.PodSucceeded:
		reason = reasonPodCompleted
	case v1.PodFailed:
		reason = reasonPodFailed
	default:
		return false
	}
	ready := conditions.Get(s.Conditions, v1.PodReady)
	cr := conditions.Get(s.Conditions, v1.ContainersReady)
	if (ready == nil || ready.Status != v1.ConditionTrue) && (cr == nil || cr.Status != v1.ConditionTrue) {
		return false
	}
	for _, t := range []v1.PodConditionType{v1.ContainersReady, v1.PodReady} {
		c := v1.PodCondition{Type: t, Status: v1.ConditionFalse, Reason: reason}
		if old := conditions.Get(s.Conditions, t); old != nil {
			c.ObservedGeneration = old.ObservedGeneration
		}
		s.Conditions, _ = SetCondition(s.Conditions, c, now)
	}
	return true
}
