package status

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/status/statustest"
)

// TestQueueIfDrifted: copies whose resourceVersion is the first one seen (the kubelet's pod
// manager) are compared, never adopted: agreeing or absent copies cost nothing, a copy
// that lags costs one GET and no PATCH, drift on the server one GET and one PATCH.
func TestQueueIfDrifted(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{})
	first := mgrCreate(t, srv, mgrPod())
	// The pod manager's copy: the first resourceVersion, the status of the moment.
	podManagerCopy := func() *v1.Pod {
		p := mgrServerPod(t, srv).DeepCopy()
		p.ResourceVersion = first.ResourceVersion
		return p
	}
	m.QueueIfDrifted(context.Background(), first) // no cached status: nothing
	mgrSync(t, m)
	mgrWant(t, srv, "get=0 patch=0")

	m.ObservePod(context.Background(), first)
	mgrSet(t, m, mgrPod(), v1.PodStatus{Phase: v1.PodRunning, Message: "one"})
	mgrSync(t, m)
	mgrWant(t, srv, "get=0 patch=1")

	steps := []struct {
		name string
		copy func() *v1.Pod
		want string // cumulative requests
	}{
		{"copy agrees", podManagerCopy, "get=0 patch=1"},
		{"copy lags behind the PATCH", func() *v1.Pod { return first }, "get=1 patch=1"},
		{"server drifted", func() *v1.Pod {
			if _, err := srv.Update("new", "foo", func(p *v1.Pod) { p.Status.Message = "someone else" }); err != nil {
				t.Fatal(err)
			}
			return podManagerCopy()
		}, "get=2 patch=2"},
		{"agrees again", podManagerCopy, "get=2 patch=2"},
	}
	for _, s := range steps {
		m.QueueIfDrifted(context.Background(), s.copy())
		mgrSync(t, m)
		if got := mgrCounts(srv); got != s.want {
			t.Fatalf("%s: requests %s, want %s", s.name, got, s.want)
		}
		if got := mgrServerPod(t, srv).Status.Message; got != "one" {
			t.Fatalf("%s: server's message %q, want the kubelet's %q", s.name, got, "one")
		}
	}
}

// TestReconcileDeletion: a terminated pod whose terminal status is already on the server
// is deleted once a copy shows its deletionTimestamp, though the Manager's base (its last
// PATCH response) predates the deletion.
func TestReconcileDeletion(t *testing.T) {
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{Deleter: srv})
	first := mgrCreate(t, srv, mgrPod())
	m.ObservePod(context.Background(), first)
	if err := m.TerminatePod(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	mgrSync(t, m)
	mgrWant(t, srv, "get=0 patch=1")
	del, err := srv.Update("new", "foo", func(p *v1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: mgrT0} })
	if err != nil {
		t.Fatal(err)
	}
	stale := del.DeepCopy()
	stale.ResourceVersion = first.ResourceVersion
	m.QueueIfDrifted(context.Background(), stale)
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=1")
	if _, err := srv.Peek("new", "foo"); err == nil {
		t.Fatal("pod not deleted")
	}
}
