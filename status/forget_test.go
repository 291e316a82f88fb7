package status

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/status/statustest"
)

// heldClient holds every PATCH until its context is done or release is closed, as a
// saturated client does (every connection busy, a client-side rate limit), and counts
// the PATCHes it let through to the server.
type heldClient struct {
	Client
	waiting chan struct{} // one value per PATCH that starts waiting
	release chan struct{}
	mu      sync.Mutex
	sent    int
}

func (c *heldClient) PatchPodStatus(ctx context.Context, ns, name string, patch []byte) (*v1.Pod, error) {
	c.waiting <- struct{}{}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.release:
	}
	c.mu.Lock()
	c.sent++
	c.mu.Unlock()
	return c.Client.PatchPodStatus(ctx, ns, name, patch)
}

// ForgetPod cuts off the request the Manager has on its way for the pod: once the watch
// reported the pod deleted, nothing more reaches the server for it, not even the PATCH a
// worker had already handed to the client; the sync ends as for a pod that is gone, with
// no error, retry or patch reported.
func TestForgetPodCutsOffTheRequestInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := statustest.NewServer()
		c := &heldClient{Client: srv, waiting: make(chan struct{}, 8), release: make(chan struct{})}
		var reported []string
		var mu sync.Mutex
		report := func(what string) { mu.Lock(); reported = append(reported, what); mu.Unlock() }
		m := NewManager(c, Options{Clock: clocktesting.NewFakeClock(mgrT0), Observer: &Observer{
			OnPatch: func(ev PatchEvent) { report("patch") },
			OnRetry: func(RetryEvent) { report("retry") },
		}})
		pod := mgrCreate(t, srv, &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c"}}},
		})
		m.ObservePod(pod)
		ctx, cancel := context.WithCancel(context.Background())
		var loop sync.WaitGroup
		loop.Go(func() { _ = m.Run(ctx) })
		defer func() { cancel(); loop.Wait() }()

		if err := m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning}); err != nil {
			t.Fatal(err)
		}
		<-c.waiting // the PATCH is on its way
		m.ForgetPod(pod.UID)
		synctest.Wait() // the PATCH, cut off, has returned and the sync ended
		close(c.release)
		if err := m.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if c.sent != 0 {
			t.Errorf("%d PATCHes reached the server after ForgetPod, want 0", c.sent)
		}
		if len(reported) != 0 {
			t.Errorf("Observer got %v for a forgotten pod, want nothing", reported)
		}
		if _, ok := m.GetPodStatus(pod.UID); ok {
			t.Error("the forgotten pod has a cached status")
		}
	})
}
