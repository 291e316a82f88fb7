package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

func TestDefaultRunPrintsTimelineAndSummary(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(nil, &out, &errb); err != nil {
		t.Fatalf("run: %v (%s)", err, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		"TIME  POD", "PodReadyToStartContainers", "lb.example.com/registered  True    Registered",
		"(lb-controller)", "(scheduler)", "PATCH  ", "summary\n", "requests per change   1.00",
		"sandbox-creation latency", "slow-sandbox-1",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestJSONOutput(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-json", "-pods", "3", "-seconds", "20"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	var rep struct {
		Timeline []map[string]any `json:"timeline"`
		Summary  struct {
			Pods   int `json:"pods"`
			PerPod []struct {
				Name string `json:"name"`
			} `json:"perPod"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if rep.Summary.Pods != 3 || len(rep.Summary.PerPod) != 3 || len(rep.Timeline) == 0 {
		t.Fatalf("unexpected report: %d pods, %d per-pod rows, %d events", rep.Summary.Pods, len(rep.Summary.PerPod), len(rep.Timeline))
	}
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the flag the error names
	}{
		{[]string{"-pods", "0"}, "-pods"},
		{[]string{"-pods", "100000"}, "-pods"}, // minutes of CPU: refused up front
		{[]string{"-pods", "2000", "-seconds", "3600"}, "-seconds"},
		{[]string{"-seconds", "-1"}, "-seconds"},
		{[]string{"-speed", "-2"}, "-speed"},
		{[]string{"extra"}, "extra"},
		{[]string{"-nope"}, "-nope"},
	} {
		var stderr bytes.Buffer
		err := run(tc.args, &bytes.Buffer{}, &stderr)
		if err == nil {
			t.Errorf("run(%q) succeeded, want an error", tc.args)
			continue
		}
		if msg := err.Error() + stderr.String(); !strings.Contains(msg, tc.want) {
			t.Errorf("run(%q) = %v, want it to name %s", tc.args, err, tc.want)
		}
	}
}

// Every run length prints a summary, also one that ends before every pod was created.
func TestEveryShortRun(t *testing.T) {
	for seconds := 1; seconds <= 7; seconds++ {
		var out bytes.Buffer
		if err := run([]string{"-seconds", fmt.Sprint(seconds)}, &out, &bytes.Buffer{}); err != nil {
			t.Fatalf("-seconds %d: %v", seconds, err)
		}
		if !strings.Contains(out.String(), "summary\n") {
			t.Errorf("-seconds %d: no summary in\n%s", seconds, out.String())
		}
	}
}

func TestJSONSummaryOnly(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-json", "-summary-only", "-seconds", "20"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	var rep map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if _, ok := rep["timeline"]; ok {
		t.Errorf("-summary-only printed the timeline")
	}
	if _, ok := rep["summary"]; !ok {
		t.Errorf("no summary")
	}
}

// -h prints the help on stdout (the program exits 0: flag.ErrHelp), and it explains "~".
func TestHelpExplainsTheDigest(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"-h"}, &out, &errb); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run(-h) = %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(out.String(), `"~" marks a condition`) || !strings.Contains(out.String(), "-pods") {
		t.Errorf("help does not list the flags or explain ~:\n%s", out.String())
	}
	if errb.Len() > 0 {
		t.Errorf("-h wrote on stderr: %q", errb.String())
	}
}

// A bad value is one line naming the flag and the value, with a hint, and nothing more.
func TestBadValueIsOneLine(t *testing.T) {
	var out, errb bytes.Buffer
	err := run([]string{"-pods", "abc"}, &out, &errb)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run = %v, want an error", err)
	}
	msg := err.Error()
	for _, want := range []string{"-pods", `"abc"`, "-h"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %s", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || out.Len()+errb.Len() > 0 {
		t.Errorf("error %q, output %q%q: want one line and no output", msg, out.String(), errb.String())
	}
}

func TestTextSummaryOnly(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-summary-only", "-patches"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	s := out.String()
	if !strings.HasPrefix(s, "summary\n") || strings.Contains(s, "PATCH  ") || strings.Contains(s, "lastTransitionTime=") {
		t.Errorf("-summary-only printed more than the summary:\n%s", s)
	}
}
