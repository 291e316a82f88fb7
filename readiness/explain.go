package readiness

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/internal/accept"
	"github.com/podstatus/podstatus/sandbox"
)

// Explanation says, as data, why a pod is or is not ready. Every name list is in spec
// order. It is computed from the same lookups as Evaluate, so it never disagrees with it.
type Explanation struct {
	// Result is what Evaluate returns for the same input.
	Result Result
	// Ready is Result.Ready.Status == True.
	Ready bool
	// Phase is the phase evaluated. In a terminal phase the pod is never ready.
	Phase v1.PodPhase
	// StatusesUnknown is true when no container statuses were given at all (nil lists):
	// every condition then says UnknownContainerStatuses.
	StatusesUnknown bool

	// UnknownContainers are regular containers without a status.
	UnknownContainers []string
	// UnreadyContainers are regular containers whose status is not Ready.
	UnreadyContainers []string
	// NotStartedContainers are regular containers that have a status whose Started is not
	// true (the startup probe has not passed, or the container is not running).
	NotStartedContainers []string

	// UnknownSidecars are restartable init containers without a status.
	UnknownSidecars []string
	// UnreadySidecars are sidecars whose status is not Ready (they hold ContainersReady).
	UnreadySidecars []string
	// NotStartedSidecars are sidecars not yet Started (they hold Initialized).
	NotStartedSidecars []string

	// UnknownInitContainers are regular init containers without a status.
	UnknownInitContainers []string
	// IncompleteInitContainers are regular init containers that have not completed
	// successfully (status not Ready).
	IncompleteInitContainers []string

	// MissingGates are readiness gates whose condition does not exist.
	MissingGates []v1.PodConditionType
	// NotTrueGates are readiness gates whose condition exists but is not True.
	NotTrueGates []GateResult

	// Sandbox is why PodReadyToStartContainers is False, one of the sandbox.Message
	// constants; "" when the sandbox is fine.
	Sandbox string
}

// GateResult is a readiness gate and the status of its condition.
type GateResult struct {
	// Type is the gate's condition type.
	Type v1.PodConditionType
	// Status is the condition's status: False, Unknown or anything else not True.
	Status v1.ConditionStatus
}

// Explain evaluates in like Evaluate and returns why the pod is or is not ready. The error
// is non-nil only for malformed input and is then a *podstatus.InputError, as with
// Evaluate.
func Explain(in Input) (Explanation, error) {
	v, err := newView(&in)
	if err != nil {
		return Explanation{}, fmt.Errorf("readiness: Explain: %w", err)
	}
	r := v.evaluate()
	e := Explanation{Result: r, Ready: r.Ready.Status == v1.ConditionTrue, Phase: in.Phase, StatusesUnknown: !v.known}

	for i := range v.spec.InitContainers {
		c := &v.spec.InitContainers[i]
		s := v.status(c.Name)
		switch {
		case v.sidecar(c) && s == nil:
			e.UnknownSidecars = append(e.UnknownSidecars, c.Name)
		case v.sidecar(c):
			if !s.Ready {
				e.UnreadySidecars = append(e.UnreadySidecars, c.Name)
			}
			if s.Started == nil || !*s.Started {
				e.NotStartedSidecars = append(e.NotStartedSidecars, c.Name)
			}
		case s == nil:
			e.UnknownInitContainers = append(e.UnknownInitContainers, c.Name)
		case !s.Ready:
			e.IncompleteInitContainers = append(e.IncompleteInitContainers, c.Name)
		}
	}
	for i := range v.spec.Containers {
		name := v.spec.Containers[i].Name
		s := v.status(name)
		if s == nil {
			e.UnknownContainers = append(e.UnknownContainers, name)
			continue
		}
		if !s.Ready {
			e.UnreadyContainers = append(e.UnreadyContainers, name)
		}
		if s.Started == nil || !*s.Started {
			e.NotStartedContainers = append(e.NotStartedContainers, name)
		}
	}
	for _, g := range v.spec.ReadinessGates {
		gc := v.gate(g.ConditionType)
		switch {
		case gc == nil:
			e.MissingGates = append(e.MissingGates, g.ConditionType)
		case gc.Status != v1.ConditionTrue:
			e.NotTrueGates = append(e.NotTrueGates, GateResult{Type: g.ConditionType, Status: gc.Status})
		}
	}
	if v.in.Features.ReadyToStartContainers() || len(in.Sandboxes) > 0 {
		e.Sandbox = sandbox.NeedsNew(in.Pod, in.Sandboxes).Message
	}
	return e, nil
}

// String renders the explanation for people, one finding per line; "ready" when the pod
// is ready.
func (e Explanation) String() string {
	if e.Ready {
		return "ready"
	}
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if accept.Terminal(e.Phase) {
		line("pod phase is %s: a finished pod is never ready", e.Phase)
	}
	if e.StatusesUnknown {
		line("no container statuses are known")
	}
	if e.Sandbox != "" {
		line("sandbox: %s", e.Sandbox)
	}
	list := func(what string, names []string) {
		if len(names) > 0 {
			line("%s: %s", what, strings.Join(names, ", "))
		}
	}
	list("init containers with unknown status", e.UnknownInitContainers)
	list("init containers not completed", e.IncompleteInitContainers)
	list("sidecars with unknown status", e.UnknownSidecars)
	list("sidecars not started", e.NotStartedSidecars)
	list("sidecars not ready", e.UnreadySidecars)
	list("containers with unknown status", e.UnknownContainers)
	list("containers not started", e.NotStartedContainers)
	list("containers not ready", e.UnreadyContainers)
	for _, g := range e.MissingGates {
		line("readiness gate %q: condition does not exist", g)
	}
	for _, g := range e.NotTrueGates {
		line("readiness gate %q: condition is %q, not \"True\"", g.Type, g.Status)
	}
	if b.Len() == 0 {
		line("Ready is %s: %s %s", e.Result.Ready.Status, e.Result.Ready.Reason, e.Result.Ready.Message)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
