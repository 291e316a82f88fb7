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

func TestWaitsOnTerminal(t *testing.T) {
	tty, err := os.Open(os.DevNull) // a character device, as a terminal is
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name  string
		args  []string
		stdin *os.File
		want  bool
	}{
		{"no argument, terminal", nil, tty, true},
		{"- on a terminal", []string{"-"}, tty, true},
		{"a file named", []string{"pod.yaml"}, tty, false},
		{"a pipe", nil, r, false},
	} {
		if got := waitsOnTerminal(tc.args, tc.stdin); got != tc.want {
			t.Errorf("%s: waitsOnTerminal = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestErrorNamesThePodOnce(t *testing.T) {
	err := run(nil, strings.NewReader(`{"kind":"Pod","metadata":{"namespace":"ns","name":"x"},"spec":{"containers":[{"name":"c"},{"name":"c"}]}}`), &bytes.Buffer{})
	if err == nil || strings.Count(err.Error(), "ns/x") != 1 {
		t.Fatalf("error %q, want the pod named exactly once", err)
	}
}
