package features_test

import (
	"fmt"
	"testing"

	"github.com/podstatus/podstatus/features"
)

func TestZeroIsV1_37(t *testing.T) {
	var zero features.Set
	if zero != features.V1_37() {
		t.Fatalf("V1_37() = %+v, want the zero Set", features.V1_37())
	}
	if !zero.ReadyToStartContainers() || !zero.SandboxDiagnostics() || !zero.ObservedGenerationTracking() ||
		!zero.Sidecars() || !zero.RestartAllContainers() || !zero.ContainerRestartRules() ||
		!zero.PodLevelResourcesStatus() {
		t.Fatalf("the zero Set turns something off: %+v", zero)
	}
}

func TestV1_34(t *testing.T) {
	f := features.V1_34()
	// v1.34 defaults: PodReadyToStartContainers on, no sandbox reason (PR #135300 is 1.35),
	// observed-generation tracking beta on, sidecars on, no restart-all (1.35), container
	// restart rules alpha off, no pod-level resources in the status (gate
	// InPlacePodLevelResourcesVerticalScaling is alpha in 1.35, beta in 1.36).
	if !f.ReadyToStartContainers() || f.SandboxDiagnostics() || !f.ObservedGenerationTracking() ||
		!f.Sidecars() || f.RestartAllContainers() || f.ContainerRestartRules() || f.PodLevelResourcesStatus() {
		t.Fatalf("V1_34() = %+v", f)
	}
}

func TestEachFieldTurnsOneBehaviourOff(t *testing.T) {
	for name, tc := range map[string]struct {
		set features.Set
		on  func(features.Set) bool
	}{
		"NoReadyToStartContainers":     {features.Set{NoReadyToStartContainers: true}, features.Set.ReadyToStartContainers},
		"NoSandboxDiagnostics":         {features.Set{NoSandboxDiagnostics: true}, features.Set.SandboxDiagnostics},
		"NoObservedGenerationTracking": {features.Set{NoObservedGenerationTracking: true}, features.Set.ObservedGenerationTracking},
		"NoSidecars":                   {features.Set{NoSidecars: true}, features.Set.Sidecars},
		"NoRestartAllContainers":       {features.Set{NoRestartAllContainers: true}, features.Set.RestartAllContainers},
		"NoContainerRestartRules":      {features.Set{NoContainerRestartRules: true}, features.Set.ContainerRestartRules},
		"NoPodLevelResourcesStatus":    {features.Set{NoPodLevelResourcesStatus: true}, features.Set.PodLevelResourcesStatus},
	} {
		if tc.on(tc.set) {
			t.Errorf("%s: the behaviour is still on", name)
		}
		if !tc.on(features.Set{}) {
			t.Errorf("%s: the behaviour is off in the zero Set", name)
		}
	}
}

// A node agent that imitates a v1.34 kubelet passes V1_34 to the engine and the manager
// (readiness.Input.Features, status.Options.Features); the zero Set is v1.37.0.
func ExampleSet() {
	f := features.V1_34()
	fmt.Println("sandbox reason on PodReadyToStartContainers:", f.SandboxDiagnostics())
	fmt.Println("v1.37.0 gives one:", features.Set{}.SandboxDiagnostics())
	// Output:
	// sandbox reason on PodReadyToStartContainers: false
	// v1.37.0 gives one: true
}
