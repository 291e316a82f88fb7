package readiness_test

import (
	"encoding/json"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/readiness/readinesstest"
	"github.com/podstatus/podstatus/sandbox"
)

// fuzzInput is the JSON shape FuzzEvaluate decodes: a readiness.Input plus the feature
// set. JSON null (or a missing field) decodes to a nil list and [] to an empty one, so
// the fuzzer reaches both.
type fuzzInput struct {
	Pod                   *v1.Pod              `json:"pod"`
	Phase                 v1.PodPhase          `json:"phase"`
	InitContainerStatuses []v1.ContainerStatus `json:"initContainerStatuses"`
	ContainerStatuses     []v1.ContainerStatus `json:"containerStatuses"`
	Conditions            []v1.PodCondition    `json:"conditions"`
	Sandboxes             []sandbox.Status     `json:"sandboxes"`
	OldStatus             *v1.PodStatus        `json:"oldStatus"`
	Features              features.Set         `json:"features"`
}

// FuzzEvaluate decodes arbitrary bytes into an input and checks that Evaluate never
// panics, fails exactly on malformed input (no pod, or a container name used twice), and
// otherwise returns a result that satisfies the invariants, purely.
func FuzzEvaluate(f *testing.F) {
	seeds := []string{
		`{}`,
		`{"pod":{}}`,
		`{"pod":{},"initContainerStatuses":[]}`,
		`{"pod":{},"containerStatuses":[]}`,
		`{"pod":{"spec":{"containers":[{"name":"b"},{"name":"a"},{"name":"z"}]}},"phase":"Succeeded","containerStatuses":[{"name":"a","ready":true}]}`,
		`{"pod":{"spec":{"containers":[{"name":"a"}]}},"phase":"Failed","containerStatuses":[]}`,
		`{"pod":{"metadata":{"generation":3},"spec":{"initContainers":[{"name":"s","restartPolicy":"Always"},{"name":"i"}],"containers":[{"name":"c"}],` +
			`"readinessGates":[{"conditionType":"example.com/lb"},{"conditionType":"g2"}]}},"phase":"Running",` +
			`"initContainerStatuses":[{"name":"s","ready":true,"started":true,"state":{"running":{}}},{"name":"i","ready":true}],` +
			`"containerStatuses":[{"name":"c","ready":true,"state":{"running":{}}}],` +
			`"conditions":[{"type":"example.com/lb","status":"True"},{"type":"g2","status":""}],` +
			`"sandboxes":[{"ID":"s1","Attempt":1,"Ready":true,"IP":"10.0.0.1"},{"ID":"s0","Ready":true}],` +
			`"oldStatus":{"conditions":[{"type":"Initialized","status":"True","observedGeneration":2}]},"features":{"NoObservedGenerationTracking":true}}`,
		`{"pod":{"spec":{"hostNetwork":true,"containers":[{"name":"a"}],"initContainers":[{"name":"a"}]}}}`,
		`{"pod":{"spec":{"containers":[{"name":"a"}],"ephemeralContainers":[{"name":"a"}]}},"features":{"NoSidecars":true,"NoSandboxDiagnostics":true}}`,
		`{"pod":{"spec":{"initContainers":[{"name":"i"}]}},"oldStatus":{"conditions":[{"type":"Initialized","status":"True"}]},"initContainerStatuses":[{"name":"i","state":{"waiting":{}}}]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fi fuzzInput
		if err := json.Unmarshal(data, &fi); err != nil {
			return
		}
		in := readiness.Input{
			Pod: fi.Pod, Phase: fi.Phase,
			InitContainerStatuses: fi.InitContainerStatuses, ContainerStatuses: fi.ContainerStatuses,
			Conditions: fi.Conditions, Sandboxes: fi.Sandboxes, OldStatus: fi.OldStatus,
			Features: fi.Features,
		}
		r, err := readiness.Evaluate(in)
		if wantErr := malformed(in.Pod); wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("malformed input (%s) gave error %v", wantErr, err)
			}
			if r != (readiness.Result{}) {
				t.Fatalf("a result came with the error: %+v", r)
			}
			return
		}
		if err != nil {
			t.Fatalf("well-formed input rejected: %v", err)
		}
		readinesstest.CheckInvariants(t, in, r)
		readinesstest.CheckPure(t, in)
		if e, err := readiness.Explain(in); err != nil || e.Result != r {
			t.Fatalf("Explain: %v, %+v versus %+v", err, e.Result, r)
		} else {
			_ = e.String()
		}
	})
}

// malformed says why Evaluate must reject pod ("" if it must not), independently of the
// engine's own check.
func malformed(pod *v1.Pod) string {
	if pod == nil {
		return "Input.Pod: Required value"
	}
	seen := map[string]bool{}
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	for _, n := range names {
		if seen[n] {
			return "Duplicate value"
		}
		seen[n] = true
	}
	return ""
}
