package status

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/podstate"
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
		m.ObservePod(context.Background(), pod)
		ctx, cancel := context.WithCancel(context.Background())
		var loop sync.WaitGroup
		loop.Go(func() { _ = m.Run(ctx) })
		defer func() { cancel(); loop.Wait() }()

		if err := m.SetPodStatus(ctx, pod, v1.PodStatus{Phase: v1.PodRunning}); err != nil {
			t.Fatal(err)
		}
		<-c.waiting // the PATCH is on its way
		m.ForgetPod(ctx, pod.UID)
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

// heldDeleter holds the Manager's DELETE until release is closed, and records whether its
// context was cancelled meanwhile.
type heldDeleter struct {
	PodDeleter
	waiting   chan struct{}
	release   chan struct{}
	cancelled bool
}

func (d *heldDeleter) DeletePod(ctx context.Context, ns, name string, uid types.UID) error {
	d.waiting <- struct{}{}
	<-d.release
	d.cancelled = ctx.Err() != nil
	return d.PodDeleter.DeletePod(ctx, ns, name, uid)
}

// The Manager's own DELETE is not cut off by the ForgetPod its success causes: the
// watch's DELETED event often arrives before the DELETE's answer, and cutting the request
// off then would only make the server record it as timed out.
func TestForgetPodLeavesTheDeleteInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := statustest.NewServer()
		d := &heldDeleter{PodDeleter: srv, waiting: make(chan struct{}, 1), release: make(chan struct{})}
		m := NewManager(srv, Options{Clock: clocktesting.NewFakeClock(mgrT0), Deleter: d})
		pod := mgrCreate(t, srv, &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c"}}},
		})
		deleting, err := srv.Update("ns", "p", func(p *v1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: mgrT0} })
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := m.SyncPod(ctx, SyncPodInput{Pod: deleting, Runtime: podstate.Runtime{Terminal: true}, Stopped: true}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- m.Sync(ctx) }()
		<-d.waiting // the DELETE is on its way
		m.ForgetPod(ctx, pod.UID)
		close(d.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if d.cancelled {
			t.Error("ForgetPod cancelled the Manager's own DELETE in flight")
		}
		if _, err := srv.Peek("ns", "p"); err == nil {
			t.Error("the pod object is still there")
		}
	})
}
