package main

import (
	"context"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Every flag that can be checked without a server is checked before the program connects
// anywhere: run returns at once (no API server exists here) with an error naming the flag.
func TestBadFlagsFailFastNamingTheFlag(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	// --master points nowhere: reaching the agent would hang in retries, not fail.
	base := []string{"--master", "http://127.0.0.1:1", "--nodes", "1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--node-name-prefix", "Bad_Name"}, "--node-name-prefix"},
		{[]string{"--kube-api-content-type", "text/plain"}, "--kube-api-content-type"},
		{[]string{"--node-ip", "notanip"}, "--node-ip"},
		{[]string{"--cidr", "10.0.0.0/31"}, "--cidr"},
		{[]string{"--cidr", "nope"}, "--cidr"},
		{[]string{"--max-pods", "0"}, "--max-pods"},
		{[]string{"--max-pods", "-5"}, "--max-pods"},
		{[]string{"--max-pods", "2000000"}, "--max-pods"},
		{[]string{"--workers", "0"}, "--workers"},
		{[]string{"--workers", "-5"}, "--workers"},
		{[]string{"--status-workers", "0"}, "--status-workers"},
		{[]string{"--node-lease-duration-seconds", "0"}, "--node-lease-duration-seconds"},
		{[]string{"--profile", "turbo"}, "--profile"},
		{[]string{"--qps", "-1"}, "--qps"},
		{[]string{"--procs", "-1"}, "--procs"},
		{[]string{"--manage-single-node", "Not_A_Node"}, "--manage-single-node"},
		{[]string{"--manage-all-nodes", "--manage-single-node", "n"}, "--manage-all-nodes: Forbidden: cannot be combined with --manage-single-node"},
		{[]string{"--manage-nodes-with-label-selector", "a=b=c"}, "--manage-nodes-with-label-selector"},
		{[]string{"--metrics-addr", "not an address"}, "--metrics-addr"},
		{[]string{"--metrics-addr", busy.Addr().String()}, "--metrics-addr"},
		{[]string{"stray", "--nodes", "2"}, `argument: Invalid value: "stray"`},
		{[]string{"--no-such-flag"}, "no-such-flag"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			err := run(ctx, append(append([]string{}, base...), tc.args...), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run: %v, want an error naming %s", err, tc.want)
			}
			if ctx.Err() != nil || time.Since(start) > 5*time.Second {
				t.Fatalf("the error came after %v, not at start", time.Since(start))
			}
			if strings.Contains(err.Error(), "Config.") || strings.Contains(err.Error(), "kubeconfig") {
				t.Fatalf("run: %v: names Go fields or the kubeconfig instead of the flag", err)
			}
		})
	}
	// All at once: every problem in one message.
	err = run(context.Background(), []string{"--nodes", "1", "--max-pods", "0", "--node-ip", "x", "--workers", "-1"}, io.Discard)
	for _, f := range []string{"--max-pods", "--node-ip", "--workers"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("run: %v, want it to name %s", err, f)
		}
	}
}

// /readyz answers 503 until the agent runs, then 200.
func TestReadyz(t *testing.T) {
	var running atomic.Bool
	h := readyz(&running)
	for _, want := range []int{http.StatusServiceUnavailable, http.StatusOK} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		if rec.Code != want {
			t.Errorf("running=%t: /readyz answered %d, want %d", running.Load(), rec.Code, want)
		}
		running.Store(true)
	}
}

// TestGomaxprocs: --procs when given (0: Go's default), else $GOMAXPROCS when set (Go has
// applied it), else one.
func TestGomaxprocs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want int
	}{
		{nil, "", 1},
		{nil, "4", 0},
		{[]string{"--procs", "3"}, "", 3},
		{[]string{"--procs", "3"}, "4", 3},
		{[]string{"--procs", "0"}, "", 0},
		{[]string{"--procs", "1"}, "4", 1},
	} {
		fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
		procs := fs.Int("procs", defaultProcs, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := gomaxprocs(fs, *procs, tc.env); got != tc.want {
			t.Errorf("%v with GOMAXPROCS=%q: %d, want %d", tc.args, tc.env, got, tc.want)
		}
	}
}
