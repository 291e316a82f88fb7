package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestExplainGatedPodFromYAMLFile(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"testdata/gated.yaml"}, nil, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, want := range []string{
		"Ready                      False   ContainersNotReady  containers with unready status: [metrics]",
		"containers not ready: metrics",
		`readiness gate "example.com/load-balancer": condition is "False", not "True"`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestExplainReadsJSONListFromStdin(t *testing.T) {
	in := `{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Running","podIP":"10.0.0.1","containerStatuses":[{"name":"c","ready":true,"started":true,"state":{"running":{}}}]}},` +
		`{"kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Pending"}}]}`
	var out bytes.Buffer
	if err := run(nil, strings.NewReader(in), &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	got := out.String()
	if !strings.Contains(got, "pod /a (phase Running)") || !strings.Contains(got, "\nready\n") {
		t.Errorf("pod a should be ready:\n%s", got)
	}
	if !strings.Contains(got, "pod /b (phase Pending)") || !strings.Contains(got, "no container statuses are known") || !strings.Contains(got, "sandbox: no pod sandbox exists") {
		t.Errorf("pod b should be explained as unknown statuses and no sandbox:\n%s", got)
	}
}

func TestExplainRejectsBadInput(t *testing.T) {
	for name, in := range map[string]string{
		"empty":     "  \n",
		"not a pod": "kind: Service\nmetadata:\n  name: x\n",
		"dup names": `{"kind":"Pod","spec":{"containers":[{"name":"c"},{"name":"c"}]}}`,
		"not yaml":  "{[",
	} {
		t.Run(name, func(t *testing.T) {
			if err := run(nil, strings.NewReader(in), &bytes.Buffer{}); err == nil {
				t.Fatalf("run(%q) succeeded, want an error", in)
			}
		})
	}
	if err := run([]string{"a", "b"}, nil, &bytes.Buffer{}); err == nil {
		t.Fatal("two file arguments accepted")
	}
	if _, err := os.Stat("testdata/missing.yaml"); err == nil {
		t.Fatal("fixture unexpectedly exists")
	}
	if err := run([]string{"testdata/missing.yaml"}, nil, &bytes.Buffer{}); err == nil {
		t.Fatal("missing file accepted")
	}
}
