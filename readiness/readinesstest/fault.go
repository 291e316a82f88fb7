package readinesstest

import (
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// FaultKind names the one thing FaultyInput made not ready.
type FaultKind string

// The faults FaultyInput injects into an otherwise ready input (see ReadyInput). Only
// kinds that the pod's shape allows are drawn: a sidecar fault needs a sidecar, a gate
// fault a readiness gate, and so on.
const (
	// FaultUnknownContainer: a regular container has no status.
	FaultUnknownContainer FaultKind = "UnknownContainer"
	// FaultUnreadyContainer: a regular container is running and started but not Ready.
	FaultUnreadyContainer FaultKind = "UnreadyContainer"
	// FaultUnknownSidecar: a sidecar has no status.
	FaultUnknownSidecar FaultKind = "UnknownSidecar"
	// FaultUnreadySidecar: a sidecar is running and started but not Ready.
	FaultUnreadySidecar FaultKind = "UnreadySidecar"
	// FaultSidecarNotStarted: a sidecar is running but not Started (its startup probe has
	// not passed), and therefore not Ready either.
	FaultSidecarNotStarted FaultKind = "SidecarNotStarted"
	// FaultUnknownInit: a regular init container has no status. The pod is still
	// initializing: every regular container is Waiting (PodInitializing), not started and
	// not ready.
	FaultUnknownInit FaultKind = "UnknownInit"
	// FaultIncompleteInit: a regular init container has a status that is not Ready
	// (running, waiting or failed). The regular containers wait as for FaultUnknownInit.
	FaultIncompleteInit FaultKind = "IncompleteInit"
	// FaultMissingGate: a readiness gate's condition does not exist.
	FaultMissingGate FaultKind = "MissingGate"
	// FaultGateNotTrue: a readiness gate's condition is False, Unknown or "" (Fault.Status).
	FaultGateNotTrue FaultKind = "GateNotTrue"
	// FaultSandbox: the sandboxes need replacing; Fault.Sandbox is the sandbox.Message
	// constant that says why. It holds only PodReadyToStartContainers.
	FaultSandbox FaultKind = "Sandbox"
	// FaultTerminalPhase: the phase is Succeeded or Failed (Fault.Phase).
	FaultTerminalPhase FaultKind = "TerminalPhase"
	// FaultNoStatuses: both container-status lists are nil, so all statuses are unknown.
	FaultNoStatuses FaultKind = "NoStatuses"
)

// Fault says which one thing FaultyInput made not ready.
type Fault struct {
	// Kind is what is wrong.
	Kind FaultKind
	// Container is the container concerned, for the container, sidecar and init kinds.
	Container string
	// Gate is the readiness gate concerned, for FaultMissingGate and FaultGateNotTrue.
	Gate v1.PodConditionType
	// Status is the gate condition's status, for FaultGateNotTrue.
	Status v1.ConditionStatus
	// Sandbox is the sandbox.Message constant, for FaultSandbox.
	Sandbox string
	// Phase is the terminal phase, for FaultTerminalPhase.
	Phase v1.PodPhase
}

// Case is an input together with the fault that was injected into it.
type Case struct {
	// Input is a ready input (as from ReadyInput) with Fault applied.
	Input readiness.Input
	// Fault is the one thing that is not ready.
	Fault Fault
}

// FaultyInput generates inputs that are ready except for exactly one thing, and says
// which. The expectations that follow from a fault hold for the default features (for
// instance, with Features.NoSidecars a sidecar fault is judged as an init-container one).
func FaultyInput() *rapid.Generator[Case] {
	return rapid.Custom(func(t *rapid.T) Case {
		pod := Pod().Draw(t, "pod")
		in := readyInput(t, pod)

		var sidecars, inits []string
		for i := range pod.Spec.InitContainers {
			if isSidecar(&pod.Spec.InitContainers[i]) {
				sidecars = append(sidecars, pod.Spec.InitContainers[i].Name)
			} else {
				inits = append(inits, pod.Spec.InitContainers[i].Name)
			}
		}
		kinds := []FaultKind{FaultSandbox, FaultTerminalPhase, FaultNoStatuses}
		if len(pod.Spec.Containers) > 0 {
			kinds = append(kinds, FaultUnknownContainer, FaultUnreadyContainer)
		}
		if len(sidecars) > 0 {
			kinds = append(kinds, FaultUnknownSidecar, FaultUnreadySidecar, FaultSidecarNotStarted)
		}
		if len(inits) > 0 {
			kinds = append(kinds, FaultUnknownInit, FaultIncompleteInit)
		}
		if len(pod.Spec.ReadinessGates) > 0 {
			kinds = append(kinds, FaultMissingGate, FaultGateNotTrue)
		}
		f := Fault{Kind: rapid.SampledFrom(kinds).Draw(t, "fault")}

		switch f.Kind {
		case FaultUnknownContainer, FaultUnreadyContainer:
			f.Container = rapid.SampledFrom(names(pod.Spec.Containers)).Draw(t, "container")
			i := indexOf(in.ContainerStatuses, f.Container)
			if f.Kind == FaultUnknownContainer {
				in.ContainerStatuses = remove(in.ContainerStatuses, i)
			} else {
				in.ContainerStatuses[i].Ready = false
			}
		case FaultUnknownSidecar, FaultUnreadySidecar, FaultSidecarNotStarted:
			f.Container = rapid.SampledFrom(sidecars).Draw(t, "sidecar")
			i := indexOf(in.InitContainerStatuses, f.Container)
			switch f.Kind {
			case FaultUnknownSidecar:
				in.InitContainerStatuses = remove(in.InitContainerStatuses, i)
			case FaultUnreadySidecar:
				in.InitContainerStatuses[i].Ready = false
			default:
				in.InitContainerStatuses[i].Ready = false
				in.InitContainerStatuses[i].Started = rapid.SampledFrom([]*bool{nil, ptr(false)}).Draw(t, "started")
			}
		case FaultUnknownInit, FaultIncompleteInit:
			f.Container = rapid.SampledFrom(inits).Draw(t, "init")
			i := indexOf(in.InitContainerStatuses, f.Container)
			if f.Kind == FaultUnknownInit {
				in.InitContainerStatuses = remove(in.InitContainerStatuses, i)
			} else {
				s := &in.InitContainerStatuses[i]
				s.Ready = false
				s.State = v1.ContainerState{}
				switch rapid.IntRange(0, 2).Draw(t, "initState") {
				case 0:
					s.State.Running = &v1.ContainerStateRunning{StartedAt: baseTime()}
				case 1:
					s.State.Waiting = &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
				default:
					s.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}
				}
			}
			for j := range in.ContainerStatuses {
				s := &in.ContainerStatuses[j]
				s.Ready, s.Started, s.ContainerID = false, ptr(false), ""
				s.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}
			}
		case FaultMissingGate, FaultGateNotTrue:
			g := rapid.SampledFrom(pod.Spec.ReadinessGates).Draw(t, "gate")
			f.Gate = g.ConditionType
			for j := range in.Conditions {
				if in.Conditions[j].Type != f.Gate {
					continue
				}
				if f.Kind == FaultMissingGate {
					in.Conditions = append(in.Conditions[:j:j], in.Conditions[j+1:]...)
				} else {
					f.Status = rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionFalse, v1.ConditionUnknown, ""}).Draw(t, "gateStatus")
					in.Conditions[j].Status = f.Status
				}
				break
			}
		case FaultSandbox:
			f.Sandbox, in.Sandboxes = badSandboxes(t, pod, in.Sandboxes)
		case FaultTerminalPhase:
			f.Phase = rapid.SampledFrom([]v1.PodPhase{v1.PodSucceeded, v1.PodFailed}).Draw(t, "phase")
			in.Phase = f.Phase
		case FaultNoStatuses:
			in.InitContainerStatuses, in.ContainerStatuses = nil, nil
		}
		return Case{Input: in, Fault: f}
	})
}

// badSandboxes turns a ready sandbox list into one that needs a new sandbox, and says why.
func badSandboxes(t *rapid.T, pod *v1.Pod, ready []sandbox.Status) (string, []sandbox.Status) {
	reasons := []string{sandbox.MessageNoSandbox, sandbox.MessageMultipleReady, sandbox.MessageNotReady, sandbox.MessageNetworkNamespaceChanged}
	if !pod.Spec.HostNetwork {
		reasons = append(reasons, sandbox.MessageNoIP)
	}
	reason := rapid.SampledFrom(reasons).Draw(t, "sandboxFault")
	out := append([]sandbox.Status(nil), ready...)
	switch reason {
	case sandbox.MessageNoSandbox:
		if rapid.Bool().Draw(t, "emptyNotNil") {
			return reason, []sandbox.Status{}
		}
		return reason, nil
	case sandbox.MessageMultipleReady:
		older := out[0]
		older.Attempt, older.ID = 0, "sandbox-older"
		out = append(out[:1], older)
		out[0].Attempt = 1
	case sandbox.MessageNotReady:
		out[0].Ready = false
	case sandbox.MessageNetworkNamespaceChanged:
		out[0].HostNetwork = !pod.Spec.HostNetwork
	case sandbox.MessageNoIP:
		out[0].IP, out[0].NoNetworkStatus = "", false
	}
	return reason, out
}

func names(cs []v1.Container) []string {
	out := make([]string, len(cs))
	for i := range cs {
		out[i] = cs[i].Name
	}
	return out
}

func indexOf(list []v1.ContainerStatus, name string) int {
	for i := range list {
		if list[i].Name == name {
			return i
		}
	}
	panic("readinesstest: no status named " + name)
}

// remove returns list without element i, without writing into list's backing array.
func remove(list []v1.ContainerStatus, i int) []v1.ContainerStatus {
	out := make([]v1.ContainerStatus, 0, len(list)-1)
	out = append(out, list[:i]...)
	return append(out, list[i+1:]...)
}
