package features_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
)

// A feature set is the Features field of every input and options struct; its zero value
// is the kubelet v1.37.0. The same pod without a sandbox, evaluated as v1.37.0 and as
// v1.34: only the newer kubelet says why PodReadyToStartContainers is False.
func Example() {
	in := readiness.Input{Pod: &v1.Pod{}, InitContainerStatuses: []v1.ContainerStatus{}}
	for _, f := range []features.Set{{}, features.V1_34()} {
		in.Features = f
		r, _ := readiness.Evaluate(in)
		fmt.Printf("sandbox diagnostics %v: reason %q\n", f.SandboxDiagnostics(), r.PodReadyToStartContainers.Reason)
	}
	// Output:
	// sandbox diagnostics true: reason "PodSandboxNotReady"
	// sandbox diagnostics false: reason ""
}
