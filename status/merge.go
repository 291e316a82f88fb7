package status

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/accept"
)

// MergeInput is what Merge reads. Server, Status and Now are required; the other fields'
// zero values merge as the Manager does: with the fix for kubernetes#119514, a terminal
// server phase kept, v1.37.0 behaviour.
type MergeInput struct {
	// Server is the server's copy of the pod (its status and metadata.generation).
	Server *v1.Pod
	// Status is the kubelet's own status for the pod (the status a Manager caches).
	Status v1.PodStatus
	// Now is the time given to the conditions that transition during the merge (the
	// terminal Ready/ContainersReady override, a new DisruptionTarget). Required: the
	// package never reads the wall clock, and Merge returns a *podstatus.InputError
	// for a zero Now. It is truncated to whole seconds.
	Now metav1.Time
	// Features selects version-dependent behaviour (which condition types the kubelet
	// owns). The zero value is v1.37.0.
	Features features.Set
	// CouldHaveRunningContainers reports that some container of the pod might still run:
	// a terminal phase is then held back (the kubelet's PodCouldHaveRunningContainers).
	CouldHaveRunningContainers bool
	// UpstreamTransitionTimes turns off the fix for kubernetes#119514 and merges the
	// lastTransitionTime of kubelet-owned conditions as the kubelet does; see
	// Options.UpstreamTransitionTimes.
	UpstreamTransitionTimes bool
	// UpstreamTerminalPhase lets a kubelet status with another phase replace a terminal
	// server phase, as the kubelet's mergePodStatus does (the kubelet prevents that
	// where it generates statuses instead). By default a terminal server phase is final:
	// the merged status keeps the server's phase, reason and message.
	UpstreamTerminalPhase bool
}

// Merge computes the status the kubelet would write, given the server's copy of the pod
// and the kubelet's own status, as the kubelet's mergePodStatus
// (pkg/kubelet/status/status_manager.go) does:
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
//     in.CouldHaveRunningContainers is true;
//   - in a terminal phase, Ready and ContainersReady are forced False (PodFailed or
//     PodCompleted, observedGeneration from server's metadata.generation) when either is
//     True.
//
// Beyond the kubelet, and as the Manager does, a terminal server phase is final and the
// lastTransitionTime of kubelet-owned conditions respects the server's copy
// (kubernetes#119514); in.UpstreamTerminalPhase and in.UpstreamTransitionTimes turn
// these off. Neither input is modified.
//
// The error is a *podstatus.InputError when in.Server is nil or in.Now is zero.
func Merge(in MergeInput) (v1.PodStatus, error) {
	server := in.Server
	switch {
	case server == nil:
		return v1.PodStatus{}, fmt.Errorf("status: Merge: %w", &podstatus.InputError{Errs: field.ErrorList{field.Required(field.NewPath("MergeInput", "Server"), "")}})
	case in.Now.IsZero():
		return v1.PodStatus{}, fmt.Errorf("status: Merge: %w", &podstatus.InputError{Pod: server.Namespace + "/" + server.Name,
			Errs: field.ErrorList{field.Required(field.NewPath("MergeInput", "Now"), "the time must be given")}})
	}
	cfg := mergeConfig{
		now: in.Now.Rfc3339Copy(), features: in.Features, generation: server.Generation, hasGeneration: true,
		serverLTT: !in.UpstreamTransitionTimes, keepTerminal: !in.UpstreamTerminalPhase,
	}
	return merge(&server.Status, in.Status, in.CouldHaveRunningContainers, &cfg), nil
}

// mergeConfig is MergeInput resolved, as the Manager's sync passes it.
type mergeConfig struct {
	now           metav1.Time
	features      features.Set
	generation    int64
	hasGeneration bool
	serverLTT     bool
	keepTerminal  bool
}

func merge(server *v1.PodStatus, out v1.PodStatus, couldRun bool, cfg *mergeConfig) v1.PodStatus {
	own := conditions.Ownership{Features: cfg.features}
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
			c.LastTransitionTime = accept.TransitionTime(server.Conditions, c.Type, c.Status, cfg.now)
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
	if toTerminal && couldRun || cfg.keepTerminal && accept.Leaves(server.Phase, out.Phase) {
		out.Phase, out.Reason, out.Message = server.Phase, server.Reason, server.Message
	}
	forceTerminal(&out, server, cfg)
	if cfg.serverLTT {
		serverTransitionTimes(&out, server, own, cfg.now)
	}
	return out
}

// forceTerminal forces Ready and ContainersReady False in a terminal phase with
// accept.ForceTerminal (the kubelet's rule); their observedGeneration is then the
// one the kubelet computes from the pod's generation, when the merge knows it.
// out.Conditions is owned by the caller.
func forceTerminal(out *v1.PodStatus, server *v1.PodStatus, cfg *mergeConfig) {
	if !accept.ForceTerminal(out, cfg.now) || !cfg.hasGeneration {
		return
	}
	for _, t := range [...]v1.PodConditionType{v1.ContainersReady, v1.PodReady} {
		conditions.Get(out.Conditions, t).ObservedGeneration = observedGeneration(server, cfg.generation, t, cfg.features)
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

func terminal(p v1.PodPhase) bool { return accept.Terminal(p) }
