package status

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/status/statustest"
)

// TestConcurrentCallers runs SetPodStatus, SetContainerReadiness, ObservePod (fed by the
// server's watch), Sync and Run from several goroutines at once; run it with -race. At the
// end every pod's server status is the last one set. It runs in a synctest bubble: a
// deadlock fails it at once, with the stuck goroutines shown.
func TestConcurrentCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const pods, writers, rounds = 8, 4, 40
		srv := statustest.NewServer()
		m := NewManager(srv, Options{Clock: clocktesting.NewFakeClock(mgrT0), Workers: 3})
		stored := make([]*v1.Pod, pods)
		for i := range stored {
			p := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p" + strconv.Itoa(i), UID: types.UID("u" + strconv.Itoa(i))},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c"}}},
			}
			stored[i] = mgrCreate(t, srv, p)
			m.ObservePod(context.Background(), stored[i])
		}
		srv.OnWrite(func(ev statustest.Event) { m.ObservePod(context.Background(), ev.Pod) })
		srv.FailRandomly(statustest.VerbPatch, 0.1, 3, statustest.Conflict("x"), statustest.InternalError())

		ctx, cancel := context.WithCancel(context.Background())
		var loop sync.WaitGroup
		loop.Add(1)
		go func() { defer loop.Done(); _ = m.Run(ctx) }()

		// Each writer owns some pods, so "the last status set" is well defined per pod.
		var wg sync.WaitGroup
		last := make([]string, pods)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					for i := w; i < pods; i += writers {
						msg := "w" + strconv.Itoa(w) + "-r" + strconv.Itoa(r)
						s := v1.PodStatus{Phase: v1.PodRunning, Message: msg, ContainerStatuses: []v1.ContainerStatus{
							{Name: "c", ContainerID: "test://c" + strconv.Itoa(i), State: mgrRunning()},
						}}
						if err := m.SetPodStatus(ctx, stored[i], s); err != nil {
							t.Error(err)
						}
						last[i] = msg
						if err := m.SetContainerReadiness(ctx, stored[i].UID, "test://c"+strconv.Itoa(i), r%2 == 0); err != nil {
							t.Error(err)
						}
						_, _ = m.GetPodStatus(stored[i].UID)
					}
					if r%5 == 0 {
						_ = m.Sync(ctx)
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				_ = m.Sync(ctx)
			}
		}()
		wg.Wait()
		srv.ClearFaults()
		if err := m.Sync(ctx); err != nil {
			t.Fatalf("final Sync: %v", err)
		}
		cancel()
		loop.Wait()
		for i, p := range stored {
			got, err := srv.Peek("ns", p.Name)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Message != last[i] {
				t.Errorf("pod %s: server message %q, want the last one set, %q", p.Name, got.Status.Message, last[i])
			}
			cached := mgrStatus(t, m, p.UID)
			if got.Status.ContainerStatuses[0].Ready != cached.ContainerStatuses[0].Ready {
				t.Errorf("pod %s: container readiness differs from the cache", p.Name)
			}
		}
	})
}
