package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
		{[]string{"--memory-ratio", "0.5"}, "--memory-ratio"},
		{[]string{"--memory-ratio", "NaN"}, "--memory-ratio"},
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
			err := run(ctx, append(append([]string{}, base...), tc.args...), io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run: %v, want an error naming %s", err, tc.want)
			}
			if ctx.Err() != nil || time.Since(start) > 5*time.Second {
				t.Fatalf("the error came after %v, not at start", time.Since(start))
			}
			if strings.Contains(err.Error(), "Options.") || strings.Contains(err.Error(), "kubeconfig") {
				t.Fatalf("run: %v: names Go fields or the kubeconfig instead of the flag", err)
			}
		})
	}
	// All at once: every problem in one message.
	err = run(context.Background(), []string{"--nodes", "1", "--max-pods", "0", "--node-ip", "x", "--workers", "-1"}, io.Discard, nil)
	for _, f := range []string{"--max-pods", "--node-ip", "--workers"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("run: %v, want it to name %s", err, f)
		}
	}
}

// The metrics address serves /healthz and /livez as the kubelet serves /healthz (200,
// "ok"), and Go's profiles only with --pprof.
func TestMuxHealthAndOptInProfiles(t *testing.T) {
	var running atomic.Bool
	for _, pprof := range []bool{false, true} {
		mux := newMux(prometheus.NewRegistry(), &running, pprof)
		for _, tc := range []struct {
			path string
			code int
			body string
		}{
			{"/healthz", http.StatusOK, "ok"},
			{"/healthz/ping", http.StatusOK, "ok"},
			{"/livez", http.StatusOK, "ok"},
			{"/readyz", http.StatusServiceUnavailable, ""},
			{"/debug/pprof/", map[bool]int{false: http.StatusNotFound, true: http.StatusOK}[pprof], ""},
			{"/debug/pprof/cmdline", map[bool]int{false: http.StatusNotFound, true: http.StatusOK}[pprof], ""},
		} {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if rec.Code != tc.code || tc.body != "" && rec.Body.String() != tc.body {
				t.Errorf("--pprof=%t: %s answered %d %q, want %d %q", pprof, tc.path, rec.Code, rec.Body.String(), tc.code, tc.body)
			}
		}
	}
}

// KWOK's flags that would change which statuses are written are refused before the
// program connects, naming the flag, as a usage error (exit 2); those that configure
// what the agent lacks are accepted with a note on stderr.
func TestKWOKFlags(t *testing.T) {
	base := []string{"--master", "http://127.0.0.1:1", "--nodes", "1"}
	for _, name := range []string{"config", "disregard-status-with-annotation-selector", "disregard-status-with-label-selector"} {
		err := run(context.Background(), append(append([]string{}, base...), "--"+name, "x=y"), io.Discard, nil)
		var u usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "--"+name+": Forbidden") {
			t.Errorf("--%s: run: %v, want a usage error naming the flag", name, err)
		}
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var stderr strings.Builder
	// The busy --metrics-addr ends run after the note, before it connects.
	err = run(context.Background(), append(append([]string{}, base...), "--node-port", "10250", "--metrics-addr", busy.Addr().String()), &stderr, nil)
	if err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Fatalf("run: %v, want the busy --metrics-addr", err)
	}
	if !strings.Contains(stderr.String(), "ignoring KWOK's --node-port") {
		t.Errorf("stderr %q, want a note that --node-port is ignored", stderr.String())
	}
	err = run(context.Background(), append(append([]string{}, base...), "--pprof"), io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "--pprof") {
		t.Errorf("--pprof without --metrics-addr: run: %v, want an error naming --pprof", err)
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

// TestFromFlag: a runtime setting (--procs, --memory-ratio) comes from its flag when given,
// else from its environment variable when set (Go has applied it), else from the flag's
// default.
func TestFromFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "", true},                               // the default
		{nil, "4", false},                             // the environment, which Go applied
		{[]string{"--procs", "3"}, "", true},          // the flag
		{[]string{"--procs", "3"}, "4", true},         // the flag wins
		{[]string{"--memory-ratio", "2"}, "4", false}, // another flag
	} {
		fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
		fs.Int("procs", defaultProcs, "")
		fs.Float64("memory-ratio", defaultMemoryRatio, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := fromFlag(fs, "procs", tc.env); got != tc.want {
			t.Errorf("%v with the variable %q: %v, want %v", tc.args, tc.env, got, tc.want)
		}
	}
}

// sysmonGODEBUG adds schedtrace to GODEBUG unless it is set there already.
func TestSysmonGODEBUG(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		exec     bool
	}{
		{"", schedtraceNever, true},
		{"  ", schedtraceNever, true},
		{"http2debug=1", "http2debug=1," + schedtraceNever, true},
		{"schedtracex=1", "schedtracex=1," + schedtraceNever, true},
		{"schedtrace=0", "", false},
		{"http2debug=1, schedtrace=1000", "", false},
		{schedtraceNever, "", false},
	} {
		got, exec := sysmonGODEBUG(tc.in)
		if got != tc.want || exec != tc.exec {
			t.Errorf("sysmonGODEBUG(%q) = %q, %v; want %q, %v", tc.in, got, exec, tc.want, tc.exec)
		}
	}
}

// The program executes itself again with sysmon kept awake once its flags are checked,
// with --sysmon-awake only: not by default, not with --sysmon-awake=false, nor when GODEBUG sets schedtrace (as it does in the
// program executed again), nor for bad flags. An exec that fails leaves the program
// running, and says so.
func TestRunExecutesItselfWithSysmonAwake(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	// The busy --metrics-addr ends run right after the exec would have happened.
	base := []string{"--master", "http://127.0.0.1:1", "--nodes", "1", "--metrics-addr", busy.Addr().String()}
	for _, tc := range []struct {
		name    string
		godebug string
		args    []string
		want    string // the GODEBUG exec is called with; "" for no call
	}{
		{"by default: off", "", nil, ""},
		{"opted in", "", []string{"--sysmon-awake"}, schedtraceNever},
		{"beside the user's GODEBUG", "http2debug=1", []string{"--sysmon-awake"}, "http2debug=1," + schedtraceNever},
		{"off", "", []string{"--sysmon-awake=false"}, ""},
		{"schedtrace set already", "schedtrace=0", []string{"--sysmon-awake"}, ""},
		{"bad flags", "", []string{"--sysmon-awake", "--workers", "0"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GODEBUG", tc.godebug)
			var got []string
			exec := func(godebug string) error {
				got = append(got, godebug)
				return errors.New("no exec in tests")
			}
			var stderr strings.Builder
			err := run(context.Background(), append(append([]string{}, base...), tc.args...), &stderr, exec)
			if err == nil {
				t.Fatal("run: nil error, want the bad flag's or the busy --metrics-addr's")
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("exec called with %q, want no call", got)
			case tc.want != "" && (len(got) != 1 || got[0] != tc.want):
				t.Errorf("exec called with %q, want once with %q", got, tc.want)
			case tc.want != "" && !strings.Contains(stderr.String(), "running on without it"):
				t.Errorf("stderr %q: the failed exec is not reported", stderr.String())
			case tc.want != "" && !strings.Contains(err.Error(), "--metrics-addr"):
				t.Errorf("run: %v, want it to go on to --metrics-addr after the failed exec", err)
			}
		})
	}
}
