package main

import (
	"context"
	"io"
	"strings"
	"testing"
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
