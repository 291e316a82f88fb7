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
