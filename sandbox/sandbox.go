package sandbox

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Status is one pod sandbox as the runtime reports it (CRI PodSandboxStatus, reduced to
// what the kubelet's decision reads). Lists of Status are ordered newest first, as the
// kubelet's runtime manager lists them.
type Status struct {
	// ID is the runtime's sandbox ID.
	ID string
	// Attempt is the sandbox's creation attempt number (CRI metadata.attempt).
	Attempt uint32
	// Ready is true when the runtime reports the sandbox SANDBOX_READY.
	Ready bool
	// CreatedAt is when the runtime created the sandbox. Informational: the decision reads
	// only the list order.
	CreatedAt time.Time
	// HostNetwork is true when the sandbox runs in the node's network namespace (CRI
	// namespace mode NODE); false means its own namespace (POD, the default).
	HostNetwork bool
	// IP is the sandbox's primary IP address, "" when it has none.
	IP string
	// NoNetworkStatus is true when the runtime reported no network status at all (CRI
	// Network == nil). The kubelet only requires an IP when a network status is present,
	// so such a sandbox passes the IP check.
	NoNetworkStatus bool
}

// The messages NeedsNew gives for why a new sandbox is needed, identical to the kubelet
// v1.37.0's PodSandboxNotReadyMsg constants (pkg/kubelet/types/constants.go). The
// readiness engine writes them as the Message of a False PodReadyToStartContainers.
const (
	// MessageNoSandbox: the runtime reports no sandbox for the pod.
	MessageNoSandbox = "no pod sandbox exists"
	// MessageMultipleReady: more than one sandbox is ready.
	MessageMultipleReady = "multiple pod sandboxes are ready and need to be reconciled"
	// MessageNotReady: the newest sandbox is not ready.
	MessageNotReady = "pod sandbox is not ready"
	// MessageNetworkNamespaceChanged: the sandbox's network namespace mode does not match
	// the pod's spec.hostNetwork.
	MessageNetworkNamespaceChanged = "network namespace mode changed and sandbox needs to be recreated"
	// MessageNoIP: a pod-network sandbox has a network status without an IP.
	MessageNoIP = "pod sandbox has no IP address"
)

// Decision is the outcome of NeedsNew.
type Decision struct {
	// Create is true when a new sandbox must be created.
	Create bool
	// Attempt is the attempt number of the sandbox to create (newest attempt + 1), or, when
	// no new one is needed, the attempt of the current sandbox. 0 when there is none.
	Attempt uint32
	// SandboxID is the sandbox the decision is about: the current one when no new sandbox
	// is needed, the one to replace otherwise. It is empty when there is no sandbox and,
	// as in the kubelet, when the network namespace mode changed.
	SandboxID string
	// Message says why a new sandbox is needed, one of the Message constants; "" when
	// none is.
	Message string
}

// NeedsNew decides, as the kubelet's PodSandboxChanged does, whether pod needs a new
// sandbox given the runtime's sandboxes, newest first. The checks, in order: no sandbox;
// more than one ready; the newest not ready; the newest's network namespace mode differs
// from spec.hostNetwork; a pod-network sandbox with a network status but no IP. A nil pod
// is treated as a pod-network pod. NeedsNew does not allocate.
func NeedsNew(pod *v1.Pod, sandboxes []Status) Decision {
	msg := problem(pod, sandboxes)
	if len(sandboxes) == 0 {
		return Decision{Create: true, Message: msg}
	}
	newest := &sandboxes[0]
	switch msg {
	case "":
		return Decision{Attempt: newest.Attempt, SandboxID: newest.ID}
	case MessageNetworkNamespaceChanged:
		// The kubelet names no sandbox here: the old one is not reused in any way.
		return Decision{Create: true, Attempt: newest.Attempt + 1, Message: msg}
	}
	return Decision{Create: true, Attempt: newest.Attempt + 1, SandboxID: newest.ID, Message: msg}
}

// problem returns why pod needs a new sandbox, one of the Message constants in the order
// NeedsNew checks them, or "" when the newest sandbox serves.
func problem(pod *v1.Pod, sandboxes []Status) string {
	if len(sandboxes) == 0 {
		return MessageNoSandbox
	}
	newest := &sandboxes[0]
	if newest.Ready {
		for i := 1; i < len(sandboxes); i++ {
			if sandboxes[i].Ready {
				return MessageMultipleReady
			}
		}
	} else {
		// The newest is not ready; several others being ready is checked first.
		ready := 0
		for i := 1; i < len(sandboxes); i++ {
			if sandboxes[i].Ready {
				ready++
			}
		}
		if ready > 1 {
			return MessageMultipleReady
		}
		return MessageNotReady
	}
	hostNetwork := pod != nil && pod.Spec.HostNetwork
	switch {
	case newest.HostNetwork != hostNetwork:
		return MessageNetworkNamespaceChanged
	case !hostNetwork && !newest.NoNetworkStatus && newest.IP == "":
		return MessageNoIP
	}
	return ""
}
