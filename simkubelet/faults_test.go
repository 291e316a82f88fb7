package simkubelet

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/kubeclient"
)

// Failing requests are retried: node creation and status PATCHes that fail with 500 at
// first still land, and the agent keeps running. It runs in a synctest bubble: the
// Manager's backoff (seconds after three failures) passes on the bubble's clock, so the
// test neither waits for it nor depends on the machine's speed.
func TestAgentRetriesFailedRequests(t *testing.T) {
	synctest.Test(t, testAgentRetriesFailedRequests)
}

func testAgentRetriesFailedRequests(t *testing.T) {
	cs := fake.NewClientset()
	var nodeFails, patchFails atomic.Int32
	cs.PrependReactor("create", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if nodeFails.Add(1) <= 2 {
			return true, nil, apierrors.NewInternalError(errFault)
		}
		return false, nil, nil
	})
	cs.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && patchFails.Add(1) <= 3 {
			return true, nil, apierrors.NewServiceUnavailable("the API server is restarting")
		}
		return false, nil, nil
	})
	stop := startFake(t, Options{Nodes: 1, Profile: "fast", ProgressInterval: -1}, cs)
	defer stop()
	ctx := context.Background()
	poll(t, "the node created after two failures", func() bool {
		_, err := cs.CoreV1().Nodes().Get(ctx, DefaultNodeNamePrefix+"0", metav1.GetOptions{})
		return err == nil
	})
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec:       v1.PodSpec{NodeName: DefaultNodeNamePrefix + "0", Containers: []v1.Container{{Name: "app", Image: "app"}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the pod Running and Ready after three failed PATCHes", func() bool {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil || p.Status.Phase != v1.PodRunning {
			return false
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady {
				return c.Status == v1.ConditionTrue
			}
		}
		return false
	})
	if n := patchFails.Load(); n < 4 {
		t.Fatalf("%d status PATCHes reached the server, want the 3 failures and a success", n)
	}
}

var errFault = faultError("injected fault")

type faultError string

func (e faultError) Error() string { return string(e) }

// A delete seen only as a tombstone (the watch missed the final state) still forgets the
// pod and frees its simulation.
func TestPodDeleteTombstone(t *testing.T) {
	r, err := Options{Nodes: 1, Profile: "fast"}.resolve(restConfigForTest())
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(r)
	a.cs = fake.NewClientset()
	a.status = newTestManager(a)
	a.addNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, true)
	a.queue = newQueue()
	defer a.queue.ShutDown()
	a.recorder = record.NewFakeRecorder(10)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "1"},
		Spec:       v1.PodSpec{NodeName: "n", Containers: []v1.Container{{Name: "app"}}},
	}
	a.onPod(pod)
	a.syncPod("u1")
	if _, ok := a.status.GetPodStatus("u1"); !ok {
		t.Fatal("no status cached after a sync")
	}
	if got := a.counts.byPhase[phaseIndex(v1.PodRunning)].Load(); got != 1 {
		t.Fatalf("Running pods = %d, want 1", got)
	}
	a.onPodDelete(cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: pod})
	if a.pods.get("u1") != nil {
		t.Fatal("pod entry kept after a tombstone")
	}
	if _, ok := a.status.GetPodStatus("u1"); ok {
		t.Fatal("status kept after a tombstone")
	}
	if got := a.counts.byPhase[phaseIndex(v1.PodRunning)].Load(); got != 0 {
		t.Fatalf("Running pods = %d after the delete, want 0", got)
	}
}

func restConfigForTest() *rest.Config { return &rest.Config{Host: "fake"} }

func newTestManager(a *agent) *status.Manager {
	return status.NewManager(kubeclient.New(a.cs.CoreV1(), "podstatus-fleet"), status.Options{})
}
