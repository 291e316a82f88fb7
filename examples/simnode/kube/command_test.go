package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/podstatus/podstatus/examples/simnode/sim"
)

// connectTo is an Env whose Connect returns cs, starting the simulated clock at now.
func connectTo(cs *fake.Clientset, now time.Time) Env {
	return Env{Connect: func(string) (kubernetes.Interface, error) { return cs, nil }, Now: now}
}

// simnode-kube refuses what simnode refuses, before it connects, naming the flag.
func TestCommandRefusesBadFlags(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	for _, tc := range []struct {
		args []string
		want string // the flag the error names
	}{
		{[]string{"--kubeconfig", "k", "-pods", "0"}, "-pods"},
		{[]string{"--kubeconfig", "k", "-pods", "100000"}, "-pods"},
		{[]string{"--kubeconfig", "k", "-pods", "2000", "-seconds", "3600"}, "-seconds"},
		{[]string{"--kubeconfig", "k", "-seconds", "-1"}, "-seconds"},
		{[]string{"--kubeconfig", "k", "-speed", "-2"}, "-speed"},
		{[]string{"--kubeconfig", "k", "extra"}, "extra"},
		{[]string{"--kubeconfig", "k", "-nope"}, "-nope"},
		{[]string{"-seconds", "5"}, "--kubeconfig"},
	} {
		var stderr bytes.Buffer
		env := Env{Connect: func(string) (kubernetes.Interface, error) {
			t.Errorf("%q: connected despite bad flags", tc.args)
			return nil, errors.New("no")
		}}
		err := Command(context.Background(), tc.args, &bytes.Buffer{}, &stderr, env)
		if err == nil || !IsUsage(err) {
			t.Errorf("Command(%q) = %v, want a usage error", tc.args, err)
			continue
		}
		if msg := err.Error() + stderr.String(); !strings.Contains(msg, tc.want) {
			t.Errorf("Command(%q) = %v, want it to name %s", tc.args, err, tc.want)
		}
	}
}

// The simulated clock starts at the wall-clock time of the start (here a fixed one,
// given through Env.Now), not at simnode's fixed 2026-01-01, so that condition times
// follow the server's own timestamps; it advances one second per simulated second.
func TestCommandTimesStartAtTheStart(t *testing.T) {
	start := time.Date(2031, 5, 6, 7, 8, 9, 500e6, time.UTC)
	cs := fakeClientset()
	var out bytes.Buffer
	err := Command(context.Background(), []string{"--kubeconfig", "k", "-json", "-seconds", "20", "-keep"}, &out, &bytes.Buffer{}, connectTo(cs, start))
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	var rep struct {
		Start    time.Time `json:"start"`
		Timeline []struct {
			LastTransitionTime string `json:"lastTransitionTime"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	first := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC) // whole seconds, as the server stores them
	if !rep.Start.Equal(first) {
		t.Errorf("report start %v, want %v", rep.Start, first)
	}
	n := 0
	for _, e := range rep.Timeline {
		if e.LastTransitionTime == "" {
			continue
		}
		n++
		ts, err := time.Parse(time.RFC3339, e.LastTransitionTime)
		if err != nil || ts.Before(first) || ts.After(first.Add(20*time.Second)) {
			t.Errorf("lastTransitionTime %s outside the run [%v, +20s]", e.LastTransitionTime, first)
		}
	}
	if n == 0 {
		t.Fatal("no condition transitions in the timeline")
	}
	pods, err := cs.CoreV1().Pods("simnode-1").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("-keep left no pods: %v", err)
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if ltt := c.LastTransitionTime.Time; ltt.Before(first) || ltt.After(first.Add(20*time.Second)) {
				t.Errorf("pod %s: %s at %v, outside the run [%v, +20s]", p.Name, c.Type, ltt, first)
			}
		}
	}
}

// gone reports whether the run's namespace, node and pods are gone from cs.
func gone(t *testing.T, cs *fake.Clientset) {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "simnode-1", metav1.GetOptions{}); err == nil {
		t.Error("the namespace the run created is still there")
	}
	if _, err := cs.CoreV1().Nodes().Get(ctx, "simnode-1", metav1.GetOptions{}); err == nil {
		t.Error("the node the run created is still there")
	}
	if pods, err := cs.CoreV1().Pods("simnode-1").List(ctx, metav1.ListOptions{}); err != nil || len(pods.Items) != 0 {
		t.Errorf("pods left: %v (%v)", pods, err)
	}
}

// What the run created is deleted at the end; a namespace that existed before is kept
// (without the run's pods).
func TestCommandCleansUp(t *testing.T) {
	cs := fakeClientset()
	var stderr bytes.Buffer
	if err := Command(context.Background(), []string{"--kubeconfig", "k", "-summary-only", "-seconds", "12"}, &bytes.Buffer{}, &stderr, connectTo(cs, time.Now())); err != nil {
		t.Fatalf("Command: %v", err)
	}
	gone(t, cs)
	if want := "deleted 7 pods, namespace simnode-1, node simnode-1 (-keep leaves them)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not say %q", stderr.String(), want)
	}

	cs = fakeClientset(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "simnode-1"}})
	if err := Command(context.Background(), []string{"--kubeconfig", "k", "-summary-only", "-seconds", "12"}, &bytes.Buffer{}, &bytes.Buffer{}, connectTo(cs, time.Now())); err != nil {
		t.Fatalf("Command: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "simnode-1", metav1.GetOptions{}); err != nil {
		t.Errorf("a namespace the run did not create was deleted: %v", err)
	}
	if pods, err := cs.CoreV1().Pods("simnode-1").List(context.Background(), metav1.ListOptions{}); err != nil || len(pods.Items) != 0 {
		t.Errorf("pods left in the existing namespace: %d (%v)", len(pods.Items), err)
	}
}

// -speed paces the run as simnode's does (here on a synctest bubble's clock: 20
// simulated seconds at 4 per second take 5 s), and an interrupt (ctx cancelled, as
// SIGINT does) ends it at once and still deletes what it created.
func TestCommandSpeedAndInterrupt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fakeClientset()
		begin := time.Now()
		if err := Command(context.Background(), []string{"--kubeconfig", "k", "-speed", "4", "-seconds", "20"}, &bytes.Buffer{}, &bytes.Buffer{}, connectTo(cs, begin)); err != nil {
			t.Fatalf("Command: %v", err)
		}
		// 21 steps (seconds 0 to 20), each followed by a quarter-second pause.
		if took := time.Since(begin); took != 21*250*time.Millisecond {
			t.Errorf("-speed 4 -seconds 20 took %v, want 5.25s", took)
		}
		gone(t, cs)

		cs = fakeClientset()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		begin = time.Now()
		go func() {
			done <- Command(ctx, []string{"--kubeconfig", "k", "-speed", "1", "-seconds", "3600"}, &bytes.Buffer{}, &bytes.Buffer{}, connectTo(cs, begin))
		}()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if pods, _ := cs.CoreV1().Pods("simnode-1").List(context.Background(), metav1.ListOptions{}); len(pods.Items) == 0 {
			t.Fatal("no pods after 5 s")
		}
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) {
			t.Errorf("interrupted run returned %v, want context.Canceled", err)
		}
		if took := time.Since(begin); took > 6*time.Second {
			t.Errorf("the interrupted run ended %v after its start, want at once after 5 s", took)
		}
		gone(t, cs)
	})
}

// A namespace of the same seed still being deleted (an earlier run's clean-up) is waited
// for, saying so, and the run goes on once it is gone; one that is never deleted ends the
// run with an error that says to use another -seed.
func TestCommandWaitsForTheSeedsNamespace(t *testing.T) {
	terminating := func() *v1.Namespace {
		now := metav1.Now()
		return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "simnode-1", DeletionTimestamp: &now, Finalizers: []string{"kubernetes"}}}
	}
	synctest.Test(t, func(t *testing.T) {
		cs := fakeClientset(terminating())
		var stderr bytes.Buffer
		err := Command(context.Background(), []string{"--kubeconfig", "k", "-seconds", "5"}, &bytes.Buffer{}, &stderr, connectTo(cs, time.Now()))
		if err == nil || !strings.Contains(err.Error(), "-seed") || IsUsage(err) {
			t.Errorf("Command on a namespace that stays terminating = %v, want a run error naming -seed", err)
		}
		if !strings.Contains(stderr.String(), "still being deleted") {
			t.Errorf("no word of the wait on stderr: %q", stderr.String())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		cs := fakeClientset(terminating())
		go func() {
			time.Sleep(5 * time.Second)
			_ = cs.CoreV1().Namespaces().Delete(context.Background(), "simnode-1", metav1.DeleteOptions{})
		}()
		if err := Command(context.Background(), []string{"--kubeconfig", "k", "-seconds", "5"}, &bytes.Buffer{}, &bytes.Buffer{}, connectTo(cs, time.Now())); err != nil {
			t.Errorf("Command after the namespace went: %v", err)
		}
		gone(t, cs)
	})
}

// simnode-kube runs the same simulation as simnode: for the same flags, its timeline is
// simnode's in-memory one (examples/simnode runs sim.Run on sim.NewMemory with the same
// sim.Flags), every condition time shifted by the difference of their starts. (The fake
// clientset's strategic-merge patch keeps fields a real server deletes, so reasons and
// patch digests are left out; internal/upstream/simnode compares more against a real
// kube-apiserver.)
func TestCommandTimelineIsSimnodes(t *testing.T) {
	args := []string{"-seed", "3", "-seconds", "30", "-json"}
	cs := fakeClientset()
	var out bytes.Buffer
	if err := Command(context.Background(), append([]string{"--kubeconfig", "k"}, args...), &out, &bytes.Buffer{}, connectTo(cs, time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC))); err != nil {
		t.Fatalf("Command: %v", err)
	}
	var got sim.Report
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("simnode", flag.ContinueOnError)
	var f sim.Flags
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	want, err := sim.Run(context.Background(), sim.NewMemory(), f.Config(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	shift := func(r *sim.Report, e sim.Event) sim.Event {
		if e.LastTransitionTime != "" {
			ts, err := time.Parse(time.RFC3339, e.LastTransitionTime)
			if err != nil {
				t.Fatal(err)
			}
			e.LastTransitionTime = ts.Sub(r.Start).String()
		}
		e.Patch, e.Summary, e.Reason = nil, "", ""
		return e
	}
	if len(got.Timeline) != len(want.Timeline) {
		t.Fatalf("simnode-kube: %d events, simnode: %d", len(got.Timeline), len(want.Timeline))
	}
	for i := range got.Timeline {
		if g, w := shift(&got, got.Timeline[i]), shift(want, want.Timeline[i]); !reflect.DeepEqual(g, w) {
			t.Errorf("event %d: simnode-kube %+v, simnode %+v", i, g, w)
		}
	}
	if !reflect.DeepEqual(got.Summary, want.Summary) {
		t.Errorf("summaries differ:\nsimnode-kube %+v\nsimnode      %+v", got.Summary, want.Summary)
	}
}

// The client is not paced at client-go's default 5 requests a second: --qps and --burst
// set its limit (500 and 1000 by default), --qps 0 removes it.
func TestRestConfigRateLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		qps     float32
		burst   int
		limiter bool // a rate limiter that never waits
	}{{DefaultQPS, DefaultBurst, false}, {20, 40, false}, {0, 1, true}} {
		cfg, err := restConfig(path, tc.qps, tc.burst)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.QPS != tc.qps || cfg.Burst != tc.burst || (cfg.RateLimiter != nil) != tc.limiter {
			t.Errorf("restConfig(%v, %d): QPS %v, Burst %d, limiter %T", tc.qps, tc.burst, cfg.QPS, cfg.Burst, cfg.RateLimiter)
		}
	}
}

// A run says how far it got on stderr every --progress simulated seconds and at its end;
// -h prints the help on stdout and asks for exit 0 (flag.ErrHelp), not a usage error.
func TestCommandProgressAndHelp(t *testing.T) {
	var stderr bytes.Buffer
	err := Command(context.Background(), []string{"--kubeconfig", "k", "-seconds", "25", "-summary-only", "-keep"}, &bytes.Buffer{}, &stderr, connectTo(fakeClientset(), time.Now()))
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	want := "simnode-kube: 10/25 simulated seconds\nsimnode-kube: 20/25 simulated seconds\nsimnode-kube: 25/25 simulated seconds\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	var out bytes.Buffer
	err = Command(context.Background(), []string{"-h"}, &out, &bytes.Buffer{}, Env{})
	if !errors.Is(err, flag.ErrHelp) || IsUsage(err) || !strings.Contains(out.String(), "--qps") && !strings.Contains(out.String(), "-qps") {
		t.Errorf("Command(-h) = %v, help %q; want flag.ErrHelp and the help on stdout", err, out.String())
	}
}
