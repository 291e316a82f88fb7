// Package kubelettest runs a simulated kubelet for the length of a test, in one call, as
// net/http/httptest runs a server: for a test that has an API server but no kubelet (an
// envtest environment, a bare kube-apiserver, kind with its nodes cordoned), where pods
// would stay Pending for ever and a deleted pod that names a node would stay Terminating.
//
//	func TestMyController(t *testing.T) {
//		cfg := testEnv.Config // envtest's *rest.Config
//		k := kubelettest.Start(t, cfg, simkubelet.Options{
//			Nodes:    2,
//			BindPods: true, // envtest runs no scheduler
//			Behaviors: []simkubelet.Behavior{{
//				Match:    simkubelet.MatchLabels(map[string]string{"app": "batch"}),
//				RunTime:  2 * time.Second, // exits 42 after 2 s
//				ExitCode: 42,
//			}},
//		})
//		_ = k // k.SetBehaviors changes how the pods started next behave
//		// ... create your controller's resources and wait for what it reports
//	}
//
// The pods run with the kubelet v1.37.0's exact statuses (simkubelet, podsim): conditions,
// reasons, init containers, probes, restarts, exit codes, readiness gates, and graceful
// deletion that ends with the terminal status and the pod object removed.
//
// It needs a real API server (a *rest.Config), not client-go's fake clientset
// (k8s.io/client-go/kubernetes/fake), on purpose: the statuses would not be exact there.
// The fake's object tracker keeps no resourceVersion, and the status Manager orders the
// copies of a pod it sees by resourceVersion (an older copy never overwrites a newer
// one); it deletes at once, so a graceful deletion never shows a deletionTimestamp; it
// ignores field selectors, so a kubelet watching spec.nodeName sees every pod; and a
// Binding it stores binds nothing. A controller's unit tests on the fake clientset set the
// pod statuses they need by hand; the tests that need the kubelet's lifecycle run here,
// against envtest or an in-process kube-apiserver, in seconds.
package kubelettest

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/simkubelet"
)

// StartTimeout bounds how long Start waits for the kubelet to register its nodes and list
// the pods, and how long the test's cleanup waits for it to stop.
const StartTimeout = time.Minute

// Start runs a simulated kubelet against the API server rc reaches until the test ends,
// and returns it once its nodes are registered and it serves their pods. The test's
// cleanup stops it and waits for it to return (no goroutine of it outlives the test).
//
// opts is simkubelet.Options, with defaults for a test where the library's are for a
// long-running program: Nodes 1 when opts selects no node, Profile "fast" (a pod with no
// probes is Running and Ready in the first status written for it, one PATCH after it is
// seen), no progress lines (ProgressInterval -1), and a 5 s ShutdownTimeout. Everything
// else is as opts says.
//
// Invalid options fail the test at once (t.Fatal), naming the bad fields, before anything
// is created; so does a kubelet that is not serving within StartTimeout.
func Start(t testing.TB, rc *rest.Config, opts simkubelet.Options) *simkubelet.Kubelet {
	t.Helper()
	if opts.Nodes == 0 && !opts.ManageAllNodes && opts.ManageSingleNode == "" &&
		opts.ManageNodesWithLabelSelector == "" && opts.ManageNodesWithAnnotationSelector == "" {
		opts.Nodes = 1
	}
	if opts.Profile == "" {
		opts.Profile = "fast"
	}
	if opts.ProgressInterval == 0 {
		opts.ProgressInterval = -1
	}
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = 5 * time.Second
	}
	running := make(chan struct{})
	onRunning := opts.OnRunning
	opts.OnRunning = func(ev simkubelet.RunningEvent) {
		close(running)
		if onRunning != nil {
			onRunning(ev)
		}
	}
	k, err := simkubelet.New(rc, opts)
	if err != nil {
		t.Fatalf("kubelettest: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("kubelettest: the simulated kubelet stopped with an error: %v", err)
			}
		case <-time.After(StartTimeout):
			t.Errorf("kubelettest: the simulated kubelet did not stop within %v", StartTimeout)
		}
	})
	select {
	case <-running:
		return k
	case err := <-done:
		cancel()
		done <- err // for the cleanup
		t.Fatalf("kubelettest: the simulated kubelet stopped before serving: %v", err)
	case <-time.After(StartTimeout):
		t.Fatalf("kubelettest: the simulated kubelet was not serving within %v (is the API server at %s reachable?)", StartTimeout, rc.Host)
	}
	return nil
}
