package fleet

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/simkubelet"
)

// runKubelet runs a simulated kubelet until ctx is done (simkubelet.New, then Run).
func runKubelet(ctx context.Context, rc *rest.Config, opts simkubelet.Options) error {
	k, err := simkubelet.New(rc, opts)
	if err != nil {
		return err
	}
	return k.Run(ctx)
}

// startKubelet runs a simulated kubelet in the background until the test ends: the test's
// cleanup cancels it and waits, at most 30 s, for Run to return, reporting Run's error
// or a kubelet that did not stop.
func startKubelet(t *testing.T, ctx context.Context, rc *rest.Config, opts simkubelet.Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runKubelet(ctx, rc, opts) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("agent Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("the agent did not stop within 30 s of its context being cancelled")
		}
	})
}
