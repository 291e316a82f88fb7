// Package kubelettest_test runs simkubelet/kubelettest on a real kube-apiserver with no
// scheduler and no controller manager, as an operator author's envtest suite has it: pods
// are bound by the simulated kubelet, run with the kubelet's statuses, follow the
// behaviours the test chose from Go, and graceful deletion removes them.
package kubelettest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/simkubelet"
	"github.com/podstatus/podstatus/simkubelet/kubelettest"
)

const ns = "default"

const gate = "example.com/load-balancer"

func pod(name string, mutate func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func TestKubeletInATest(t *testing.T) {
	srv := apiserver.Start(t)
	cs := srv.Client
	ctx := t.Context()
	kubelettest.Start(t, srv.Config, simkubelet.Options{
		Nodes:    2,
		BindPods: true,
		Behaviors: []simkubelet.Behavior{
			{Match: simkubelet.MatchLabels(map[string]string{"app": "batch"}), RunTime: 2 * time.Second, ExitCode: 42},
			{Match: simkubelet.MatchName(ns, "slow"), ImagePullDelay: 10000 * time.Hour},
		},
	})
	create := func(p *v1.Pod) {
		t.Helper()
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create(pod("web", nil))
	create(pod("batch", func(p *v1.Pod) {
		p.Labels = map[string]string{"app": "batch"}
		p.Spec.RestartPolicy = v1.RestartPolicyNever
	}))
	create(pod("gated", func(p *v1.Pod) { p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}} }))
	create(pod("other-scheduler", func(p *v1.Pod) { p.Spec.SchedulerName = "my-scheduler" }))
	create(pod("no-node-fits", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} }))
	create(pod("slow", nil))

	// waitFor polls the pod until cond holds, for at most 30 s.
	waitFor := func(name, what string, cond func(*v1.Pod) bool) *v1.Pod {
		t.Helper()
		var last *v1.Pod
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			last = p
			return cond(p), nil
		})
		if err != nil {
			t.Fatalf("pod %s: %s: %v; last seen: phase %s, node %q, conditions %+v", name, what, err, last.Status.Phase, last.Spec.NodeName, last.Status.Conditions)
		}
		return last
	}
	is := func(p *v1.Pod, ct v1.PodConditionType, s v1.ConditionStatus) bool {
		c := conditions.Get(p.Status.Conditions, ct)
		return c != nil && c.Status == s
	}

	web := waitFor("web", "bound, Running and Ready", func(p *v1.Pod) bool {
		return p.Spec.NodeName != "" && p.Status.Phase == v1.PodRunning && is(p, v1.PodReady, v1.ConditionTrue)
	})
	if !is(web, v1.PodScheduled, v1.ConditionTrue) {
		t.Errorf("web: PodScheduled is not True after the binding: %+v", web.Status.Conditions)
	}

	batch := waitFor("batch", "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if cs := batch.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 42 {
		t.Errorf("batch: container statuses %+v, want one terminated with exit code 42", cs)
	}

	gated := waitFor("gated", "Running, containers ready, not Ready", func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodRunning && is(p, v1.ContainersReady, v1.ConditionTrue)
	})
	if !is(gated, v1.PodReady, v1.ConditionFalse) {
		t.Errorf("gated: Ready is not False while its gate is unset: %+v", gated.Status.Conditions)
	}
	// The test's load balancer sets the gate: the pod turns Ready.
	patch := []byte(`{"status":{"conditions":[{"type":"` + gate + `","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "gated", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	waitFor("gated", "Ready once its gate is True", func(p *v1.Pod) bool { return is(p, v1.PodReady, v1.ConditionTrue) })

	// A graceful deletion ends with the pod object gone.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Errorf("web: still there 30 s after its deletion: %v", err)
	}

	// By now (seconds after they were created) the pods the kubelet must leave alone
	// are as they were, and the slow one is still pulling.
	for _, name := range []string{"other-scheduler", "no-node-fits"} {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" || p.Status.Phase != v1.PodPending {
			t.Errorf("%s: bound to %q, phase %s; want unbound and Pending", name, p.Spec.NodeName, p.Status.Phase)
		}
	}
	slow := waitFor("slow", "bound and its sandbox ready", func(p *v1.Pod) bool { return is(p, v1.PodReadyToStartContainers, v1.ConditionTrue) })
	if cs := slow.Status.ContainerStatuses; slow.Status.Phase != v1.PodPending || len(cs) != 1 || cs[0].State.Waiting == nil || cs[0].State.Waiting.Reason != "ContainerCreating" {
		t.Errorf("slow: phase %s, container statuses %+v; want Pending, waiting in ContainerCreating", slow.Status.Phase, cs)
	}
}

func TestStartRefusesBadOptions(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		kubelettest.Start(ft, nil, simkubelet.Options{})
	}()
	if ft.msg == "" || !strings.Contains(ft.msg, "restConfig: Required value") {
		t.Errorf("Start(nil config) failed the test with %q, want a message naming restConfig", ft.msg)
	}
}

// fatalRecorder records Fatalf instead of ending the test (it panics to stop Start, as
// FailNow's Goexit would).
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}

func (f *fatalRecorder) Helper() {}

// startAPIServer is the README's stand-in for envtest: a kube-apiserver + etcd for the
// test.
func startAPIServer(t *testing.T) *rest.Config { return apiserver.Start(t).Config }

// TestMyController is the README's example, run as it is written there: Start fails it
// unless the kubelet serves its two nodes, and its cleanup unless it stops cleanly.
func TestMyController(t *testing.T) {
	cfg := startAPIServer(t) // envtest's testEnv.Config, or any *rest.Config
	kubelettest.Start(t, cfg, simkubelet.Options{
		Nodes:    2,
		BindPods: true, // envtest runs no scheduler
		Behaviors: []simkubelet.Behavior{{
			Match:    simkubelet.MatchLabels(map[string]string{"app": "batch"}),
			RunTime:  2 * time.Second, // runs 2 s, then exits 42
			ExitCode: 42,
		}},
	})
	// Create your controller's objects: its pods are bound, run, turn Ready (one PATCH
	// after they are seen), fail with exit code 42, and go away when deleted.
}
