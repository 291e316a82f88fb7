package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestFlagsCheckedUpFront: every bad flag is refused before anything connects, and the
// error names it.
func TestFlagsCheckedUpFront(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--node-name", "Bad_Name"}, "--node-name"},
		{[]string{"--write-path", "put"}, "--write-path"},
		{[]string{"--profile", "slow"}, "--profile"},
		{[]string{"--pod-cidr", "10.0.0.0"}, "--pod-cidr"},
		{[]string{"--node-ip", "x"}, "--node-ip"},
		{[]string{"--workers", "0"}, "--workers"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			// No kubeconfig exists at this path: reaching the connection step would fail
			// with --kubeconfig instead.
			args := append([]string{"--kubeconfig", t.TempDir() + "/none"}, tc.args...)
			err := run(context.Background(), args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.flag) || strings.Contains(err.Error(), "--kubeconfig") {
				t.Errorf("run(%v) = %v, want an error naming %s", tc.args, err, tc.flag)
			}
		})
	}
	if _, err := parse(nil, io.Discard); err != nil {
		t.Errorf("the defaults are refused: %v", err)
	}
}

// An unreachable API server is said once at error level, retried with backoff (1 s
// doubling) without more error lines, and its answer is said once.
func TestAwaitServerSaysTheOutageOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		calls := 0
		cs.PrependReactor("get", "version", func(k8stesting.Action) (bool, runtime.Object, error) {
			calls++
			if calls <= 4 {
				return true, nil, errors.New("connection refused")
			}
			return false, nil, nil
		})
		var out bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
		start := time.Now()
		if err := awaitServer(context.Background(), cs, logger); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 15*time.Second { // 1+2+4+8
			t.Errorf("waited %v, want 15s", waited)
		}
		log := out.String()
		if n := strings.Count(log, "level=ERROR"); n != 1 || !strings.Contains(log, "check that it is up") {
			t.Errorf("%d error lines, want 1 saying what to check:\n%s", n, log)
		}
		if !strings.Contains(log, "API server answered") {
			t.Errorf("the recovery is not said:\n%s", log)
		}
	})
}
