package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With the default --agent none the bench says up front that it waits for an agent the
// user started, before it tries the API server (here a kubeconfig that does not exist).
func TestSaysUpFrontItWaitsForYourAgent(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"--kubeconfig", "/nonexistent/kubeconfig"}, &bytes.Buffer{}, &stderr)
	if err == nil {
		t.Fatal("a missing kubeconfig was accepted")
	}
	if !strings.Contains(stderr.String(), "an agent you started yourself") || !strings.Contains(stderr.String(), "--agent fleet") {
		t.Errorf("stderr %q does not say that it waits for an agent you started, nor how to have one started", stderr.String())
	}
	stderr.Reset()
	_ = run(context.Background(), []string{"--kubeconfig", "/nonexistent/kubeconfig", "--agent", "fleet"}, &bytes.Buffer{}, &stderr)
	if strings.Contains(stderr.String(), "yourself") {
		t.Errorf("with --agent fleet it still says it waits for your agent: %q", stderr.String())
	}
}

func TestStrayArgumentIsNamed(t *testing.T) {
	err := run(context.Background(), []string{"--kubeconfig", "x", "stray"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "stray") {
		t.Fatalf("run with a stray argument = %v, want an error naming it", err)
	}
}

// kubemark without a usable --kubemark-bin is refused before anything else (here a
// kubeconfig that does not exist would fail next), naming the flag.
func TestKubemarkBinRefusedUpFront(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "kubemark")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--agent", "kubemark"},
		{"--compare", "fleet,kubemark", "--kubemark-bin", "/nonexistent/kubemark"},
		{"--agent", "kubemark", "--kubemark-bin", notExec},
		{"--agent", "kubemark", "--kubemark-bin", t.TempDir()},
	} {
		err := run(context.Background(), append([]string{"--kubeconfig", "/nonexistent/kubeconfig"}, args...), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "--kubemark-bin") {
			t.Errorf("%q: err = %v, want one naming --kubemark-bin", args, err)
		}
	}
	// Without kubemark the flag is not needed: the next error is the kubeconfig's.
	err := run(context.Background(), []string{"--kubeconfig", "/nonexistent/kubeconfig", "--agent", "fleet"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || strings.Contains(err.Error(), "--kubemark-bin") {
		t.Errorf("--agent fleet: err = %v, want one about the kubeconfig", err)
	}
}
