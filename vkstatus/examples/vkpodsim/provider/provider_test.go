package provider

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/vkstatus"
)

// TestLifecycle steps one pod through creation, graceful deletion and removal from the
// server, in both write modes, and checks what the provider notifies and lists.
func TestLifecycle(t *testing.T) {
	for _, stock := range []bool{true, false} {
		name := map[bool]string{true: "stock", false: "vkstatus"}[stock]
		t.Run(name, func(t *testing.T) {
			pod, idx, clk, cfg := newFixture(t)
			if !stock {
				cfg.Status = vkstatus.New(fake.NewClientset(pod).CoreV1(), vkstatus.Options{Status: statusOpts(clk)})
			}
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var notified []*v1.Pod
			p.NotifyPods(context.Background(), func(p *v1.Pod) { notified = append(notified, p) })
			ctx := context.Background()
			if err := p.CreatePod(ctx, pod); err != nil {
				t.Fatal(err)
			}
			p.stepDue()
			if len(notified) != 1 || notified[0].Status.Phase != v1.PodRunning {
				t.Fatalf("notified %d pods, first %+v; want one Running", len(notified), notified)
			}
			if pods, _ := p.GetPods(ctx); len(pods) != 1 {
				t.Errorf("GetPods: %d pods, want 1", len(pods))
			}

			// Graceful deletion: the pod stops at once (fast profile) and is no longer listed.
			deleting := pod.DeepCopy()
			now := metav1.NewTime(clk.Now())
			grace := int64(30)
			deleting.DeletionTimestamp, deleting.DeletionGracePeriodSeconds, deleting.ResourceVersion = &now, &grace, "2"
			deleting.Status = notified[0].Status
			if err := idx.Update(deleting); err != nil {
				t.Fatal(err)
			}
			p.stepDue()
			last := notified[len(notified)-1]
			if last.Status.Phase != v1.PodSucceeded {
				t.Errorf("after deletion: phase %s, want Succeeded", last.Status.Phase)
			}
			if pods, _ := p.GetPods(ctx); len(pods) != 0 {
				t.Errorf("GetPods lists a deleted, stopped pod")
			}

			// Gone from the server: forgotten.
			if err := idx.Delete(deleting); err != nil {
				t.Fatal(err)
			}
			p.stepDue()
			if _, err := p.GetPod(ctx, "ns", "web"); err == nil {
				t.Errorf("GetPod still finds a pod gone from the server")
			}
		})
	}
}

func statusOpts(clk *clocktesting.FakeClock) status.Options { return status.Options{Clock: clk} }

// newFixture is one Pending pod "ns/web" on node "n" in a lister's indexer, a fake
// clock, and a Config of the fast profile over them (no Status: the stock write path).
func newFixture(t *testing.T) (*v1.Pod, cache.Indexer, *clocktesting.FakeClock, Config) {
	t.Helper()
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1", ResourceVersion: "1"},
		Spec:       v1.PodSpec{NodeName: "n", Containers: []v1.Container{{Name: "app", Image: "nginx"}}},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := idx.Add(pod); err != nil {
		t.Fatal(err)
	}
	ipam, err := podsim.NewIPAM("10.244.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return pod, idx, clk, Config{Node: podsim.Node{Name: "n", HostIPs: []string{"10.0.0.1"}}, IPAM: ipam, Profile: podsim.Fast(),
		Pods: corev1listers.NewPodLister(idx), Clock: clk}
}

// TestRunTicksOnItsClock: Run looks for due pods on Config.Clock's ticker, so stepping a
// fake clock drives it: a deletion the lister shows (virtual-kubelet does not always hand
// it over) is stepped at the next tick of the fake clock, not of the wall clock.
func TestRunTicksOnItsClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod, idx, clk, cfg := newFixture(t)
		cfg.Period = time.Second
		p, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			phase v1.PodPhase
		)
		last := func() v1.PodPhase { mu.Lock(); defer mu.Unlock(); return phase }
		p.NotifyPods(context.Background(), func(p *v1.Pod) { mu.Lock(); phase = p.Status.Phase; mu.Unlock() })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- p.Run(ctx) }()
		if err := p.CreatePod(ctx, pod); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := last(); got != v1.PodRunning {
			t.Fatalf("after CreatePod: phase %q, want Running", got)
		}

		deleting := pod.DeepCopy()
		now := metav1.NewTime(clk.Now())
		grace := int64(30)
		deleting.DeletionTimestamp, deleting.DeletionGracePeriodSeconds, deleting.ResourceVersion = &now, &grace, "2"
		if err := idx.Update(deleting); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := last(); got != v1.PodRunning {
			t.Fatalf("before a tick: phase %q, want Running still", got)
		}
		clk.Step(time.Second)
		synctest.Wait()
		if got := last(); got != v1.PodSucceeded {
			t.Errorf("after a tick of the fake clock: phase %q, want Succeeded", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}
