package bench

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"

	"k8s.io/client-go/kubernetes/fake"
)

// The pod watch's informer has ended, goroutines and all, when stop returns (not some
// time later); synctest.Test also fails if one is left blocked.
func TestPodWatchStopLeavesNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &runner{cfg: Config{Namespace: "bench"}, cs: fake.NewClientset()}
		before := runtime.NumGoroutine()
		w, err := r.watchPods(context.Background(), "run-1", "pod-0")
		if err != nil {
			t.Fatal(err)
		}
		w.stop()
		if n := runtime.NumGoroutine(); n != before {
			t.Errorf("%d goroutines after stop, %d before the watch", n, before)
		}
		w.stop() // twice is fine
	})
}
