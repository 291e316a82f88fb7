package statustest_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podstatus/podstatus/status/statustest"

	"github.com/podstatus/podstatus/conditions"
)

// TestConcurrentWriters runs clients patching their own conditions, another controller
// setting its own, readers and a watcher at once (run it with -race). Every write must land,
// each exactly once, and the watcher must see resourceVersions in increasing order.
func TestConcurrentWriters(t *testing.T) {
	s := statustest.NewServer(testPod())
	var mu sync.Mutex
	last, events := 0, 0
	s.OnWrite(func(ev statustest.Event) {
		rv, _ := strconv.Atoi(ev.Pod.ResourceVersion)
		mu.Lock()
		defer mu.Unlock()
		if rv <= last {
			t.Errorf("event resourceVersion %d after %d", rv, last)
		}
		last = rv
		events++
	})
	s.FailRandomly(statustest.VerbPatch, 0.2, 42, statustest.Conflict("p"))
	const writers, rounds = 4, 25
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := range writers {
		wg.Go(func() {
			ctype := v1.PodConditionType(fmt.Sprintf("example.com/w%d", w))
			for r := range rounds {
				for {
					pod, err := s.GetPod(context.Background(), "ns", "p")
					if err != nil {
						t.Error(err)
						return
					}
					next := *pod.Status.DeepCopy()
					next.Conditions = setCond(next.Conditions, v1.PodCondition{Type: ctype, Status: v1.ConditionTrue, Message: strconv.Itoa(r)})
					p := patchTo(t, pod, next)
					if _, err := s.PatchPodStatus(context.Background(), "ns", "p", p); err == nil {
						break
					} else if !apierrors.IsConflict(err) {
						t.Error(err)
						return
					}
					failed.Add(1)
				}
			}
		})
	}
	wg.Go(func() {
		for r := range rounds {
			if _, err := s.SetCondition("ns", "p", v1.PodCondition{Type: "example.com/other", Status: v1.ConditionTrue, Message: strconv.Itoa(r)}); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Go(func() {
		for range rounds {
			if _, err := s.Peek("ns", "p"); err != nil {
				t.Error(err)
			}
			_ = s.Patches()
		}
	})
	wg.Wait()

	got, _ := s.Peek("ns", "p")
	for w := range writers {
		c := conditions.Get(got.Status.Conditions, v1.PodConditionType(fmt.Sprintf("example.com/w%d", w)))
		if c == nil || c.Message != strconv.Itoa(rounds-1) {
			t.Errorf("writer %d's condition = %+v", w, c)
		}
	}
	if c := conditions.Get(got.Status.Conditions, "example.com/other"); c == nil || c.Message != strconv.Itoa(rounds-1) {
		t.Errorf("the other controller's condition = %+v", c)
	}
	wantWrites := 1 + writers*rounds + rounds // create, patches, SetCondition
	if rv, _ := strconv.Atoi(got.ResourceVersion); rv != wantWrites {
		t.Errorf("resourceVersion %d, want %d writes", rv, wantWrites)
	}
	if s.Requests(statustest.VerbPatch) != writers*rounds+int(failed.Load()) {
		t.Errorf("PATCH count %d, want %d", s.Requests(statustest.VerbPatch), writers*rounds+int(failed.Load()))
	}
	mu.Lock()
	defer mu.Unlock()
	if events != wantWrites-1 { // the watcher was registered after the create
		t.Errorf("%d events, want %d", events, wantWrites-1)
	}
}

func setCond(conds []v1.PodCondition, c v1.PodCondition) []v1.PodCondition {
	for i := range conds {
		if conds[i].Type == c.Type {
			conds[i] = c
			return conds
		}
	}
	return append(conds, c)
}
