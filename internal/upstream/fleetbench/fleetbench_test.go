// Package fleetbench runs examples/fleet/bench (fleet-bench) small, against a real
// kube-apiserver v1.37.0 + etcd started in the test: a smoke test of the benchmark
// harness and of the fleet agent's cost per pod. It asserts correctness only — every pod
// Running and Ready, at most one status PATCH per pod, no GET of a pod, every pod
// deleted by the agent without a storm of 404s — never timings; the large runs are
// fleet-bench's job (see examples/fleet/bench/README.md).
package fleetbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podstatus/podstatus/examples/fleet/bench"
	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/simkubelet"
)

// The size of a run: 200 pods on 2 nodes, unless FLEETBENCH_PODS and FLEETBENCH_NODES
// say otherwise (for example to profile the in-process agent at scale with
// go test -run TestFleetAgent -cpuprofile cpu.out).
var (
	pods  = envInt("FLEETBENCH_PODS", 200)
	nodes = envInt("FLEETBENCH_NODES", 2)
)

func envInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		panic(fmt.Sprintf("%s=%q: want a positive integer", name, v))
	}
	return n
}

// logWriter sends the bench's progress lines to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestFleetAgent(t *testing.T) {
	srv := apiserver.Start(t)

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		errc <- runKubelet(ctx, srv.Config, simkubelet.Options{
			ManageNodesWithAnnotationSelector: bench.FakeNodeAnnotation,
			Profile:                           "fast",
			ProgressInterval:                  -1,
		})
	}()
	defer func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil && ctx.Err() == nil {
				t.Errorf("simkubelet Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("simkubelet Run did not return within 30 s of its context's end")
		}
	}()

	rep, err := bench.Run(ctx, bench.Config{
		RESTConfig: srv.Config,
		Agents:     []string{bench.AgentNone},
		Nodes:      nodes,
		Pods:       pods,
		Clients:    10,
		Delete:     true,
		Timeout:    2*time.Minute + time.Duration(pods)*10*time.Millisecond,
		Progress:   logWriter{t},
	})
	if err != nil {
		t.Fatalf("bench.Run: %v", err)
	}
	checkReport(t, rep, float64(pods)/100, float64(pods)) // exactly one final DELETE per pod
}

// TestKWOK runs the same against KWOK, when a kwok binary is on PATH (CI does not
// install it: `go install sigs.k8s.io/kwok/cmd/kwok@v0.8.0`).
func TestKWOK(t *testing.T) {
	kwok, err := exec.LookPath("kwok")
	if err != nil {
		t.Skip("kwok is not on PATH; install it with go install sigs.k8s.io/kwok/cmd/kwok@v0.8.0")
	}
	srv := apiserver.Start(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := apiserver.WriteKubeconfig(kubeconfig, srv.Config); err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(t.Context(), bench.Config{
		RESTConfig: srv.Config,
		Kubeconfig: kubeconfig,
		Agents:     []string{bench.AgentKWOK},
		KWOKBin:    kwok,
		Nodes:      nodes,
		Pods:       pods,
		Clients:    10,
		Delete:     true,
		Timeout:    2*time.Minute + time.Duration(pods)*10*time.Millisecond,
		Progress:   logWriter{t},
	})
	if err != nil {
		t.Fatalf("bench.Run: %v", err)
	}
	checkReport(t, rep, float64(pods), 2*float64(pods))
	if r := rep.Results[0]; r.AgentProcess == nil || r.AgentProcess.CPUSeconds <= 0 || r.AgentProcess.PeakRSSBytes <= 0 {
		t.Errorf("no CPU time or peak RSS for the kwok process the bench started: %+v", r.AgentProcess)
	}
}

// checkReport checks the one run of rep; maxNotFound bounds the agent's DELETEs of pods
// answered 404 and maxOK those answered 200 (at least one per pod). KWOK's fast
// pod-delete stage may delete a pod twice: the second DELETE is answered 404 when the pod
// is gone, and 200 when it lands before the first one finished.
func checkReport(t *testing.T, rep *bench.Report, maxNotFound, maxOK float64) {
	t.Helper()
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", md.String())
	if len(rep.Results) != 1 {
		t.Fatalf("got %d results, want 1", len(rep.Results))
	}
	r := rep.Results[0]
	// bench.Run returns without error only once every pod was seen Running and Ready
	// and then gone; what is left to check is what it cost.
	if r.ReadySeconds <= 0 || r.DeleteSeconds <= 0 {
		t.Errorf("ready after %vs, gone after %vs: want both measured", r.ReadySeconds, r.DeleteSeconds)
	}
	if r.StatusPatchesPerPodToReady < 1.0/float64(pods) || r.StatusPatchesPerPodToReady > 1.0 {
		t.Errorf("%.3f status PATCHes per pod until all were Running and Ready, want at least one in all and at most 1.0 per pod", r.StatusPatchesPerPodToReady)
	}
	// Deletion: at most the terminal status, once (the kubelet's last PATCH before its
	// DELETE; KWOK's fast stages send none).
	if r.StatusPatchesPerPodToGone > 1.0 {
		t.Errorf("%.3f status PATCHes per pod during deletion, want at most 1.0", r.StatusPatchesPerPodToGone)
	}
	if r.PodGETsPerPod != 0 {
		t.Errorf("%.3f GETs per pod, want none (the informer's copy is the merge base)", r.PodGETsPerPod)
	}
	var deleted, notFound float64
	for _, row := range r.AgentRequests {
		if row.Resource == "pods" && row.Subresource == "" && row.Verb == "DELETE" {
			switch row.Code {
			case "200":
				deleted += row.Count
			case "404":
				notFound += row.Count
			}
		}
	}
	if deleted < float64(pods) || deleted > maxOK {
		t.Errorf("the agent's DELETEs of pods answered 200: %v, want from %d (one final DELETE per pod) to %v", deleted, pods, maxOK)
	}
	if notFound > maxNotFound {
		t.Errorf("%v DELETEs of pods answered 404, want at most %v", notFound, maxNotFound)
	}
}
