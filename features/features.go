package features

// Set selects version-dependent pod-status behaviour. The zero value is v1.37.0.
//
// Every field is named for what it turns off so that the zero value is the newest
// behaviour; there is no global state, so two evaluators in one process may use different
// sets.
type Set struct {
	// NoReadyToStartContainers turns off the PodReadyToStartContainers condition (gate
	// PodReadyToStartContainersCondition off, or a kubelet older than v1.28). The
	// condition is then neither generated nor owned by the kubelet: a copy on the API
	// object counts as a foreign condition and is kept.
	NoReadyToStartContainers bool

	// NoSandboxDiagnostics makes a False PodReadyToStartContainers carry no Reason and no
	// Message, as before v1.35 (PR #135300). With it unset the condition says
	// "PodSandboxNotReady" and why.
	NoSandboxDiagnostics bool

	// NoObservedGenerationTracking turns off gate PodObservedGenerationTracking (GA in
	// v1.35): a condition's observedGeneration is then propagated only when the previous
	// condition of that type already had a non-zero one, and the pod-level value only
	// when the API object already had one.
	NoObservedGenerationTracking bool

	// NoSidecars treats init containers with restartPolicy Always like ordinary init
	// containers, as an API server with the SidecarContainers gate off would (it strips
	// the field). Kubelets since v1.29 honour sidecars.
	NoSidecars bool

	// NoRestartAllContainers turns off gate RestartAllContainersOnContainerExits (beta,
	// on by default since v1.36): Initialized is then not kept True across an in-place
	// restart of all containers, and AllContainersRestarting is not kubelet-owned.
	NoRestartAllContainers bool

	// NoContainerRestartRules turns off gate ContainerRestartRules (beta, on by default
	// since v1.35): per-container restart policies and rules are then ignored when the
	// phase is derived and when container state transitions are checked.
	NoContainerRestartRules bool

	// NoPodLevelResourcesStatus turns off gate InPlacePodLevelResourcesVerticalScaling
	// (alpha in v1.35, beta and on by default since v1.36): the status then carries no
	// pod-level resources and allocatedResources, as before v1.36.
	NoPodLevelResourcesStatus bool
}

// V1_37 returns the behaviour of the kubelet v1.37.0 with default gates: the zero Set.
func V1_37() Set { return Set{} }

// V1_34 returns the behaviour of the kubelet v1.34 with default gates: no sandbox
// diagnostics on PodReadyToStartContainers, no restart-all-containers support, no
// container restart rules (alpha, off) and no pod-level resources in the status (gate
// InPlacePodLevelResourcesVerticalScaling arrived in v1.35).
func V1_34() Set {
	return Set{NoSandboxDiagnostics: true, NoRestartAllContainers: true, NoContainerRestartRules: true,
		NoPodLevelResourcesStatus: true}
}

// Sidecars reports whether init containers with restartPolicy Always are sidecars.
func (s Set) Sidecars() bool { return !s.NoSidecars }

// ReadyToStartContainers reports whether PodReadyToStartContainers is generated and owned.
func (s Set) ReadyToStartContainers() bool { return !s.NoReadyToStartContainers }

// SandboxDiagnostics reports whether a False PodReadyToStartContainers carries a reason.
func (s Set) SandboxDiagnostics() bool { return !s.NoSandboxDiagnostics }

// ObservedGenerationTracking reports whether gate PodObservedGenerationTracking is on.
func (s Set) ObservedGenerationTracking() bool { return !s.NoObservedGenerationTracking }

// RestartAllContainers reports whether gate RestartAllContainersOnContainerExits is on.
func (s Set) RestartAllContainers() bool { return !s.NoRestartAllContainers }

// ContainerRestartRules reports whether gate ContainerRestartRules is on.
func (s Set) ContainerRestartRules() bool { return !s.NoContainerRestartRules }

// PodLevelResourcesStatus reports whether gate InPlacePodLevelResourcesVerticalScaling is
// on: the status carries pod-level resources and allocatedResources.
func (s Set) PodLevelResourcesStatus() bool { return !s.NoPodLevelResourcesStatus }
