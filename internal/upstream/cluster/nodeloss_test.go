package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/podstatus/podstatus/internal/upstream/cluster"
	"github.com/podstatus/podstatus/simkubelet"
)

// lossyNode is the node of the node-loss scenario, run by a simulated kubelet of its own
// that the test stops and starts again.
const lossyNode = "lossy-0"

// startAgent runs a simulated kubelet for lossyNode until the returned stop, which waits
// for it to return.
func startAgent(t *testing.T, cp *cluster.ControlPlane) (stop func()) {
	t.Helper()
	running := make(chan struct{})
	k, err := simkubelet.New(cp.Config, simkubelet.Options{
		Nodes:                    1,
		NodeNamePrefix:           "lossy-",
		NodeLeaseDurationSeconds: leaseSeconds,
		Profile:                  "fast",
		ProgressInterval:         -1,
		ShutdownTimeout:          5 * time.Second,
		OnRunning:                func(simkubelet.RunningEvent) { close(running) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	stop = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("simulated kubelet of %s: %v", lossyNode, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("simulated kubelet of %s did not stop within 30 s", lossyNode)
		}
	}
	select {
	case <-running:
	case err := <-done:
		t.Fatalf("simulated kubelet of %s: %v", lossyNode, err)
	case <-time.After(time.Minute):
		stop()
		t.Fatalf("simulated kubelet of %s not serving within a minute", lossyNode)
	}
	return stop
}

// nodeState is what the node lifecycle controller has made of a node and its pods.
type nodeState struct {
	ready        v1.ConditionStatus
	unreachable  bool // the node.kubernetes.io/unreachable NoExecute taint
	podsReady    int
	podsNotReady int
}

func readNodeState(ctx context.Context, cp *cluster.ControlPlane, ns, name string) (nodeState, error) {
	var s nodeState
	node, err := cp.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return s, err
	}
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			s.ready = c.Status
		}
	}
	for _, taint := range node.Spec.Taints {
		if taint.Key == v1.TaintNodeUnreachable && taint.Effect == v1.TaintEffectNoExecute {
			s.unreachable = true
		}
	}
	pods, err := livePods(ctx, cp.Client, ns, "app=lossy")
	if err != nil {
		return s, err
	}
	for _, p := range pods {
		if podReady(&p) {
			s.podsReady++
		} else {
			s.podsNotReady++
		}
	}
	return s, nil
}

// testNodeLoss: the simulated kubelet of a node stops (no more Lease renewals or
// statuses). The node lifecycle controller must mark the node Ready=Unknown, taint it
// unreachable and mark its pods not Ready; when a kubelet serves the node again, the node
// and its pods must be Ready again. The times of each step are logged. start starts the
// agent of node; with strict false (KWOK) the return is logged, not failed.
func testNodeLoss(t *testing.T, cp *cluster.ControlPlane, ns, node string, start func() (stop func()), strict bool) {
	ctx := t.Context()
	const replicas = 5
	stop := start()
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	d := newDeployment(ns, "lossy", replicas)
	d.Spec.Template.Spec.NodeSelector = map[string]string{v1.LabelHostname: node}
	if _, err := cp.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	runningReady(t, cp.Client, ns, "app=lossy", replicas, time.Minute)

	// The node is lost.
	stop()
	stopped = true
	lost := time.Now()
	var unknownAt, taintedAt, podsNotReadyAt time.Duration
	var last nodeState
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*nodeMonitorGracePeriod+30*time.Second, true, func(ctx context.Context) (bool, error) {
		s, err := readNodeState(ctx, cp, ns, node)
		if err != nil {
			return false, nil
		}
		last = s
		since := time.Since(lost)
		if unknownAt == 0 && s.ready == v1.ConditionUnknown {
			unknownAt = since
		}
		if taintedAt == 0 && s.unreachable {
			taintedAt = since
		}
		if podsNotReadyAt == 0 && s.podsNotReady == replicas {
			podsNotReadyAt = since
		}
		return unknownAt > 0 && taintedAt > 0 && podsNotReadyAt > 0, nil
	})
	if err != nil {
		t.Fatalf("node %s lost: after %v, node Ready %q, unreachable taint %v, %d of %d pods not Ready (Unknown after %v, tainted after %v, pods not Ready after %v)",
			node, time.Since(lost).Round(100*time.Millisecond), last.ready, last.unreachable, last.podsNotReady, replicas, unknownAt, taintedAt, podsNotReadyAt)
	}
	t.Logf("node lost: Ready=Unknown after %v, unreachable:NoExecute taint after %v, %d pods not Ready after %v (node-monitor-grace-period %v, Lease %d s)",
		unknownAt.Round(100*time.Millisecond), taintedAt.Round(100*time.Millisecond), replicas, podsNotReadyAt.Round(100*time.Millisecond), nodeMonitorGracePeriod, leaseSeconds)
	// The pods tolerate the unreachable taint for 300 s (DefaultTolerationSeconds):
	// they are still there, not evicted.
	if last.podsReady+last.podsNotReady != replicas {
		t.Errorf("%d pods on the lost node, want %d (not evicted before their 300 s toleration)", last.podsReady+last.podsNotReady, replicas)
	}

	// The node comes back: a new agent takes it over.
	stopAgain := start()
	defer stopAgain()
	back := time.Now()
	var readyAt, untaintedAt, podsReadyAt time.Duration
	bound := 90 * time.Second
	if !strict {
		bound = 30 * time.Second
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, bound, true, func(ctx context.Context) (bool, error) {
		s, err := readNodeState(ctx, cp, ns, node)
		if err != nil {
			return false, nil
		}
		last = s
		since := time.Since(back)
		if readyAt == 0 && s.ready == v1.ConditionTrue {
			readyAt = since
		}
		if untaintedAt == 0 && !s.unreachable {
			untaintedAt = since
		}
		if podsReadyAt == 0 && s.podsReady == replicas {
			podsReadyAt = since
		}
		return readyAt > 0 && untaintedAt > 0 && podsReadyAt > 0, nil
	})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	summary := fmt.Sprintf("node back: Ready=True after %s, taint removed after %s, %d pods Ready after %s", at(readyAt), at(untaintedAt), replicas, at(podsReadyAt))
	if err != nil && !strict {
		t.Logf("%s; within %v: node Ready %q, unreachable taint %v, %d of %d pods Ready", summary, bound, last.ready, last.unreachable, last.podsReady, replicas)
		return
	}
	if err != nil {
		t.Errorf("%s; within %v: node Ready %q, unreachable taint %v, %d of %d pods Ready", summary, bound, last.ready, last.unreachable, last.podsReady, replicas)
		return
	}
	t.Log(summary)
}

// at formats the time a step was reached, 0 meaning never.
func at(d time.Duration) string {
	if d == 0 {
		return "(not reached)"
	}
	return d.Round(100 * time.Millisecond).String()
}
