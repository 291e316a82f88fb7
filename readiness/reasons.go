package readiness

// Condition reasons, identical to the kubelet's.
const (
	// ReasonUnknownContainerStatuses: no container statuses are known at all.
	ReasonUnknownContainerStatuses = "UnknownContainerStatuses"
	// ReasonPodCompleted: the pod Succeeded.
	ReasonPodCompleted = "PodCompleted"
	// ReasonPodFailed: the pod Failed.
	ReasonPodFailed = "PodFailed"
	// ReasonContainersNotReady: some containers or sidecars are unknown or not ready.
	ReasonContainersNotReady = "ContainersNotReady"
	// ReasonContainersNotInitialized: some init containers are unknown or incomplete.
	ReasonContainersNotInitialized = "ContainersNotInitialized"
	// ReasonReadinessGatesNotReady: containers are ready but a readiness gate is not True.
	ReasonReadinessGatesNotReady = "ReadinessGatesNotReady"
	// ReasonPodSandboxNotReady: PodReadyToStartContainers is False (v1.35 and later).
	ReasonPodSandboxNotReady = "PodSandboxNotReady"
)

// Container-status reasons the kubelet writes when it gives up on a container it cannot
// find; podstate.Generate and status.Manager.TerminatePod both write them.
const (
	// ReasonContainerStatusUnknown is the reason of a terminated state the kubelet
	// invents for a container the runtime no longer reports (kubecontainer's
	// ContainerReasonStatusUnknown), with exit code 137.
	ReasonContainerStatusUnknown = "ContainerStatusUnknown"
	// MessageContainerNotLocated is its message when the pod was terminated.
	MessageContainerNotLocated = "The container could not be located when the pod was terminated"
)
