package e2e

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/sandbox"
	"github.com/podstatus/podstatus/status"
)

// TestNodeControllerReadyFlip: the node lifecycle controller marks a Ready pod not Ready
// (its node stopped reporting), then the kubelet comes back, sees the server's copy
// (ObservePod, as from its watch) and restores Ready True. With the fix for
// kubernetes#119514 (the default) the restored Ready gets a fresh lastTransitionTime, so
// a watcher sees the times go forward; with Options.UpstreamTransitionTimes the Manager
// behaves as the kubelet does and sends the old time back, which the server stores: the
// time goes backwards. Either way ContainersReady, which the controller does not touch,
// keeps its time, and the restore costs one PATCH and no GET.
func TestNodeControllerReadyFlip(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, upstream := range []bool{false, true} {
		name := "fixed (default)"
		if upstream {
			name = "UpstreamTransitionTimes"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, "ltt-", t0)
			e.mgr = status.NewManager(e.client, status.Options{Clock: e.clock, UpstreamTransitionTimes: upstream})
			created, _ := e.schedule(e.newPod("p", "app"), t0)
			var mu sync.Mutex
			var seen []time.Time // Ready lastTransitionTime, each time it changed
			w := e.watchPod(created, func(p *v1.Pod) {
				if c := cond(p, v1.PodReady); c != nil {
					mu.Lock()
					if n := len(seen); n == 0 || !seen[n-1].Equal(c.LastTransitionTime.Time) {
						seen = append(seen, c.LastTransitionTime.Time)
					}
					mu.Unlock()
				}
			})
			sb := []sandbox.Status{readySandbox(0, "10.244.8.5", t0)}
			e.at(t0.Add(time.Second))
			e.kubelet("p", runtimeState{phase: v1.PodRunning, sandboxes: sb, containers: []v1.ContainerStatus{running("app", 0, t0, true)}})
			e.sync()
			expect(t, e.get("p"), v1.PodReady, want{status: v1.ConditionTrue, ltt: t0.Add(time.Second)})

			// The node lifecycle controller, a minute later.
			e.at(t0.Add(time.Minute))
			flipped := e.patchCondition("p", v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(e.now())})

			// The kubelet is back a minute after that.
			e.at(t0.Add(2 * time.Minute))
			gets, patches, _ := e.client.counts()
			e.mgr.ObservePod(context.Background(), flipped)
			e.sync()
			got := e.get("p")
			g2, p2, _ := e.client.counts()
			if g2 != gets || p2 != patches+1 {
				t.Errorf("restoring Ready took %d GET and %d PATCH, want 0 and 1", g2-gets, p2-patches)
			}
			wantLTT := t0.Add(2 * time.Minute)
			if upstream {
				wantLTT = t0.Add(time.Second) // the kubelet's old time, sent back
			}
			expect(t, got, v1.PodReady, want{status: v1.ConditionTrue, ltt: wantLTT})
			expect(t, got, v1.ContainersReady, want{status: v1.ConditionTrue, ltt: t0.Add(time.Second)})

			w.waitFor(t, got.ResourceVersion)
			mu.Lock()
			defer mu.Unlock()
			wantSeen := []time.Time{t0.Add(time.Second), t0.Add(time.Minute), wantLTT}
			if !slices.EqualFunc(seen, wantSeen, func(a, b time.Time) bool { return a.Equal(b) }) {
				t.Errorf("a watcher saw Ready's lastTransitionTime %v, want %v", seen, wantSeen)
			}
			report(t, "node controller flip: Ready lastTransitionTime on the server after the kubelet's restore %s (the flip was at %s)",
				ts(cond(got, v1.PodReady).LastTransitionTime.Time), ts(t0.Add(time.Minute)))
		})
	}
}
