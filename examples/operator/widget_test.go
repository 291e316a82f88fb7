package operator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/podstatus/podstatus/examples/operator"
	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/simkubelet"
	"github.com/podstatus/podstatus/simkubelet/kubelettest"
)

// TestWidgets is an operator author's test: the operator, a real API server, and a
// simulated kubelet whose pods behave as each case says. envtest users pass
// testEnv.Config where this test passes srv.Config.
func TestWidgets(t *testing.T) {
	// controller-runtime's logger is process-wide; a test that wants the operator's logs
	// sets a real one here.
	ctrl.SetLogger(logr.Discard())
	srv := apiserver.Start(t) // a kube-apiserver + etcd in this process; envtest works the same
	cfg := srv.Config

	// The simulated kubelet: two nodes, binding the pods no scheduler binds, with the
	// behaviours this test needs chosen by the pods' labels (the operator's pods carry
	// no test annotations).
	kubelettest.Start(t, cfg, simkubelet.Options{
		Nodes:    2,
		BindPods: true,
		Behaviors: []simkubelet.Behavior{{
			Match:                  simkubelet.MatchLabels(map[string]string{"widget": "never-ready"}),
			Profile:                "default", // probes on the spec's schedule
			ReadinessProbeFailures: 1000,
		}, {
			Match:    simkubelet.MatchLabels(map[string]string{"widget": "crashes"}),
			RunTime:  time.Second,
			ExitCode: 42,
		}},
	})

	// The operator, as its main would run it.
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&operator.Reconciler{Client: mgr.GetClient(), Image: "example.com/widget:1"}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the manager did not stop within 30 s")
		}
	})

	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := srv.CreateNamespace(t, "widgets-").Name
	create := func(name string, data map[string]string) {
		t.Helper()
		w := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{operator.ManagedLabel: "true"}},
			Data:       data,
		}
		if err := c.Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	create("ready", nil)
	create("never-ready", nil)
	create("crashes", nil)
	create("gated", map[string]string{operator.KeyGate: "example.com/lb"})

	// A pod with no test behaviour is Running and Ready: its Widget is Ready.
	waitState(t, c, ns, "ready", operator.StateReady)
	// Exit code 42 after a second (the kubelet restarts it, with its back-off): the
	// Widget is Failed.
	w := waitState(t, c, ns, "crashes", operator.StateFailed)
	if want := "container widget exited with code 42 (Error)"; w.Data[operator.KeyMessage] != want {
		t.Errorf("crashes: message %q, want %q", w.Data[operator.KeyMessage], want)
	}

	// Never ready: the pod runs, its readiness probe fails; the Widget stays NotReady.
	waitState(t, c, ns, "never-ready", operator.StateNotReady)
	waitPod(t, c, ns, "never-ready-pod", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	stays(t, c, ns, "never-ready", operator.StateNotReady, 3*time.Second)

	// Gated: containers ready, Ready False (ReadinessGatesNotReady) until the "load
	// balancer" (this test) sets the gate True; then the Widget is Ready.
	w = waitState(t, c, ns, "gated", operator.StateNotReady)
	waitPod(t, c, ns, "gated-pod", func(p *corev1.Pod) bool {
		return cond(p, corev1.ContainersReady) == corev1.ConditionTrue && cond(p, corev1.PodReady) == corev1.ConditionFalse
	})
	stays(t, c, ns, "gated", operator.StateNotReady, time.Second)
	var pod corev1.Pod
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "gated-pod"}, &pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: "example.com/lb", Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now(),
	})
	if err := c.Status().Update(t.Context(), &pod); err != nil {
		t.Fatalf("setting the gate: %v (widget %v)", err, w.Data)
	}
	waitState(t, c, ns, "gated", operator.StateReady)

	// Deleting a Widget: its pod is deleted gracefully, the simulated kubelet writes the
	// terminal status and removes the object, and then the Widget is gone too.
	var ready corev1.ConfigMap
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "ready"}, &ready); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), &ready); err != nil {
		t.Fatal(err)
	}
	gone(t, c, types.NamespacedName{Namespace: ns, Name: "ready-pod"}, &corev1.Pod{})
	gone(t, c, types.NamespacedName{Namespace: ns, Name: "ready"}, &corev1.ConfigMap{})
}

// timeout bounds every wait of the test.
const timeout = 30 * time.Second

func waitState(t *testing.T, c client.Client, ns, name, state string) *corev1.ConfigMap {
	t.Helper()
	var w corev1.ConfigMap
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &w); err != nil {
			return false, err
		}
		return w.Data[operator.KeyState] == state, nil
	})
	if err != nil {
		t.Fatalf("widget %s: state %q (%s), want %q: %v", name, w.Data[operator.KeyState], w.Data[operator.KeyMessage], state, err)
	}
	return &w
}

func waitPod(t *testing.T, c client.Client, ns, name string, ok func(*corev1.Pod) bool) {
	t.Helper()
	var p corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &p); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(&p), nil
	})
	if err != nil {
		t.Fatalf("pod %s: %v; status %+v", name, err, p.Status)
	}
}

// stays fails the test if the Widget's state is anything but state during d.
func stays(t *testing.T, c client.Client, ns, name, state string, d time.Duration) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		var w corev1.ConfigMap
		if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, &w); err != nil {
			t.Fatal(err)
		}
		if got := w.Data[operator.KeyState]; got != state {
			t.Fatalf("widget %s: state %q (%s), want it to stay %q", name, got, w.Data[operator.KeyMessage], state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func gone(t *testing.T, c client.Client, key types.NamespacedName, o client.Object) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key, o)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("%T %s still there: %v", o, key, err)
	}
}

func cond(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}
