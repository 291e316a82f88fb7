package cluster_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/podstatus/podstatus/examples/fleet/bench"
	"github.com/podstatus/podstatus/internal/upstream/cluster"
)

// TestClusterKWOK plays the scenarios that KWOK's default stages can express on a
// control plane of its own whose nodes KWOK (sigs.k8s.io/kwok v0.8.0, when a kwok binary
// is on PATH) manages, for the side-by-side figures of README.md. What KWOK's stages do
// not model (readiness gates, never-ready pods, exit codes, sandboxes) is logged, not
// failed: these are KWOK's figures, not podstatus' promises.
func TestClusterKWOK(t *testing.T) {
	bin, err := exec.LookPath("kwok")
	if err != nil {
		t.Skip("kwok is not on PATH; install it with go install sigs.k8s.io/kwok/cmd/kwok@v0.8.0")
	}
	cp := cluster.StartForTest(t, cluster.Options{
		ControllerManagerFlags: []string{
			"--node-monitor-period=1s",
			"--node-monitor-grace-period=" + nodeMonitorGracePeriod.String(),
		},
	})
	dir := t.TempDir()
	stages := filepath.Join(dir, "kwok-fast-stages.yaml")
	if err := os.WriteFile(stages, bench.KWOKFastStages, 0o600); err != nil {
		t.Fatal(err)
	}
	key, val, _ := strings.Cut(bench.FakeNodeAnnotation, "=")
	// kwok-3 is the node-loss scenario's, managed by a kwok process of its own (its value
	// of the annotation differs): stopping it loses that node only, as with the simulated
	// kubelet. (Were every node lost at once, the node lifecycle controller would enter
	// its full-disruption mode and taint none of them.)
	for i := range 4 {
		name := fmt.Sprintf("kwok-%d", i)
		// As KWOK users make them: the annotation and labels; KWOK's node-initialize
		// stage writes capacity, addresses and conditions.
		v := val
		if i == 3 {
			v = "lossy"
		}
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{key: v},
			Labels:      map[string]string{"type": "kwok", v1.LabelHostname: name},
		}}
		if i == 3 { // the node-loss scenario's; the others' pods stay off it
			n.Spec.Taints = []v1.Taint{{Key: "lossy", Effect: v1.TaintEffectNoSchedule}}
		}
		if _, err := cp.Client.CoreV1().Nodes().Create(t.Context(), n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stop := startKWOK(t, bin, cp.Kubeconfig, stages, dir, bench.FakeNodeAnnotation)
	t.Cleanup(stop)
	startLossy := func() (stop func()) { return startKWOK(t, bin, cp.Kubeconfig, stages, dir, key+"=lossy") }
	stopLossy := startLossy()
	if err := cluster.NodesReady(t.Context(), cp.Client, 4); err != nil {
		t.Fatal(err)
	}
	scenario := func(name string, f func(t *testing.T, c kubernetes.Interface, ns string)) {
		runScenario(t, cp.Client, name, " (KWOK)", f)
	}
	scenario("workload-verbs", testWorkloadVerbs)
	scenario("pod-ready-plus-plus", func(t *testing.T, c kubernetes.Interface, ns string) { testPodReadyPlusPlus(t, c, ns, false) })
	scenario("job-pod-failure-policy", func(t *testing.T, c kubernetes.Interface, ns string) { testJobPodFailurePolicy(t, c, ns, false) })
	scenario("sandbox-latency", func(t *testing.T, c kubernetes.Interface, ns string) { testSandboxLatency(t, c, ns, false) })
	scenario("node-loss", func(t *testing.T, c kubernetes.Interface, ns string) {
		// KWOK manages every node: stopping it loses them all.
		untaint := `{"spec":{"taints":null}}`
		if _, err := c.CoreV1().Nodes().Patch(t.Context(), "kwok-3", "application/merge-patch+json", []byte(untaint), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		first := true
		testNodeLoss(t, cp, ns, "kwok-3", func() func() {
			if first { // the kwok started above
				first = false
				return stopLossy
			}
			stopLossy = startLossy()
			return stopLossy
		}, false)
	})
	t.Cleanup(func() { stopLossy() })
}

// startKWOK runs kwok in a process group of its own, its output in dir, until the
// returned stop (idempotent) kills the group and waits for it.
func startKWOK(t *testing.T, bin, kubeconfig, stages, dir, selector string) (stop func()) {
	t.Helper()
	logf, err := os.CreateTemp(dir, "kwok-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--kubeconfig="+kubeconfig,
		"--config="+stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+selector,
		fmt.Sprintf("--node-lease-duration-seconds=%d", leaseSeconds),
		"--node-ip=127.0.0.1",
		"--node-name=localhost",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start kwok: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	stopped := false
	return func() {
		if stopped {
			return
		}
		stopped = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}
