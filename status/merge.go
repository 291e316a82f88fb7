package status

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
)

// MergeOption adjusts Merge. The defaults give the kubelet v1.37.0's mergePodStatus.
type MergeOption func(*mergeConfig)

type mergeConfig struct {
	now           metav1.Time
	features      features.Set
	generation    int64
	hasGeneration bool
	serverLTT     bool
	keepTerminal  bool
}

// MergeAt sets the time used for lastTransitionTime of conditions that transition during
// the merge (the terminal Ready/ContainersReady override, a new DisruptionTarget). The
// default is the wall clock; tests and the Manager pass their clock's time.
func MergeAt(now metav1.Time) MergeOption { return func(c *mergeConfig) { c.now = now } }

// MergeFeatures selects the version-dependent behaviour (which condition types the
// kubelet owns). The default is v1.37.0.
func MergeFeatures(f features.Set) MergeOption { return func(c *mergeConfig) { c.features = f } }

// MergeGeneration gives the API pod's metadata.generation, which the kubelet writes as
// the observedGeneration of the Ready and ContainersReady conditions it forces False in
// a terminal phase. Without it those conditions keep the observedGeneration they had.
func MergeGeneration(gen int64) MergeOption {
	return func(c *mergeConfig) { c.generation, c.hasGeneration = gen, true }
}

// MergeServerTransitionTimes makes the merge respect the server's lastTransitionTime of
// kubelet-owned conditions (the fix for kubernetes#119514; see Options.UpstreamTransitionTimes):
// an unchanged Status keeps the server's time, and a Status some other writer flipped
// after our recorded transition gets a fresh time when we flip it back.
func MergeServerTransitionTimes() MergeOption { return func(c *mergeConfig) { c.serverLTT = true } }

// MergeKeepTerminalPhase makes a terminal server phase final: a kubelet status with
// another phase keeps the server's phase, reason and message. The kubelet guarantees this
// when it generates statuses; the Manager merges with it on, so a stale or mistaken
// caller status can never move a finished pod back to running.
func MergeKeepTerminalPhase() MergeOption { return func(c *mergeConfig) { c.keepTerminal = true } }

// Merge computes the status the kubelet would write, given the server's current status
// and the kubelet's own, exactly as the kubelet's mergePodStatus (spec §4.9):
//
//   - every condition of the server whose type the kubelet does not own is kept, in
//     server order (readiness gates, custom conditions, DisruptionTarget), followed by
//     the kubelet's owned conditions in its order; the kubelet's copies of foreign
//     conditions are dropped;
//   - the kubelet's DisruptionTarget is sent only when the pod is really becoming
//     terminal (a non-terminal server phase, a terminal kubelet phase, and no container
//     that could still run); it then replaces the server's, with its transition time
//     recomputed against the server's copy;
//   - resource-claim statuses are always the server's: the kubelet never writes them;
//   - a terminal phase is held back (phase, reason and message stay the server's) while
//     couldHaveRunningContainers is true;
//   - in a terminal phase, Ready and ContainersReady are forced False (PodFailed or
//     PodCompleted) when either is True.
//
// Merge does not stop a terminal-to-running regression unless MergeKeepTerminalPhase is
// given (the kubelet prevents it when it generates a status; the Manager always passes
// the option). Neither input is modified.
func Merge(server, kubelet v1.PodStatus, couldHaveRunningContainers bool, opts ...MergeOption) v1.PodStatus {
	var cfg mergeConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.now.IsZero() {
		cfg.now = metav1.NewTime(time.Now())
	}
	cfg.now = cfg.now.Rfc3339Copy()
	return merge(&server, kubelet, couldHaveRunningContainers, &cfg)
}

func merge(server *v1.PodStatus, out v1.PodStatus, couldRun bool, cfg *mergeConfig) v1.PodStatus {
	own := conditions.For(cfg.features)
	conds := make([]v1.PodCondition, 0, len(server.Conditions)+len(out.Conditions))
	for _, c := range server.Conditions {
		if !own.Owned(c.Type) {
			conds = append(conds, c)
		}
	}
	toTerminal := !terminal(server.Phase) && terminal(out.Phase)
	for _, c := range out.Conditions {
		switch {
		case own.Owned(c.Type):
			conds = append(conds, c)
		case own.Shared(c.Type) && toTerminal && !couldRun:
			// As the kubelet does, the first condition of the type is the one sent
			// (duplicates send it again, which changes nothing).
			c = *conditions.Get(out.Conditions, c.Type)
			c.LastTransitionTime = conditions.TransitionTime(server.Conditions, c.Type, c.Status, cfg.now)
			if i := conditions.Index(conds, c.Type); i >= 0 {
				conds[i] = c
			} else {
				conds = append(conds, c)
			}
		}
	}
	out.Conditions = conds
	out.ResourceClaimStatuses = server.ResourceClaimStatuses
	out.ExtendedResourceClaimStatus = server.ExtendedResourceClaimStatus
	out.NodeAllocatableResourceClaimStatuses = server.NodeAllocatableResourceClaimStatuses
	if toTerminal && couldRun || cfg.keepTerminal && terminal(server.Phase) && out.Phase != server.Phase {
		out.Phase, out.Reason, out.Message = server.Phase, server.Reason, server.Message
	}
	forceTerminal(&out, server, cfg)
	if cfg.serverLTT {
		serverTransitionTimes(&out, server, own, cfg.now)
	}
	return out
}

// forceTerminal sets ContainersReady and then Ready False in a terminal phase when either
// is True, with the kubelet's UpdatePodCondition rule (replace in place or append; a new
// lastTransitionTime only when the Status changes). out.Conditions is owned by the caller.
func forceTerminal(out *v1.PodStatus, server *v1.PodStatus, cfg *mergeConfig) {
	var reason string
	switch out.Phase {
	case v1.PodFailed:
		reason = readiness.ReasonPodFailed
	case v1.PodSucceeded:
		reason = readiness.ReasonPodCompleted
	default:
		return
	}
	if !isTrue(out.Conditions, v1.PodReady) && !isTrue(out.Conditions, v1.ContainersReady) {
		return
	}
	for _, t := range [...]v1.PodConditionType{v1.ContainersReady, v1.PodReady} {
		c := v1.PodCondition{Type: t, Status: v1.ConditionFalse, Reason: reason}
		switch {
		case cfg.hasGeneration:
			c.ObservedGeneration = observedGeneration(server, cfg.generation, t, cfg.features)
		case conditions.Get(out.Conditions, t) != nil:
			c.ObservedGeneration = conditions.Get(out.Conditions, t).ObservedGeneration
		}
		out.Conditions, _ = conditions.Set(out.Conditions, c, cfg.now)
	}
}

// observedGeneration is the kubelet's CalculatePodConditionObservedGeneration: the pod's
// generation when tracking is on or the old condition already carries one, else 0.
func observedGeneration(old *v1.PodStatus, gen int64, t v1.PodConditionType, f features.Set) int64 {
	if f.ObservedGenerationTracking() {
		return gen
	}
	if c := conditions.Get(old.Conditions, t); c != nil && c.ObservedGeneration != 0 {
		return gen
	}
	return 0
}

func terminal(p v1.PodPhase) bool { return p == v1.PodFailed || p == v1.PodSucceeded }

func isTrue(list []v1.PodCondition, t v1.PodConditionType) bool {
	c := conditions.Get(list, t)
	return c != nil && c.Status == v1.ConditionTrue
}
