package kubeletstatus

import (
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/status"
)

// NewManager has exactly the type of the kubelet's status.NewManager: the one-line swap
// in pkg/kubelet/kubelet.go compiles.
var _ = []func(clientset.Interface, kubeletstatus.PodManager, kubeletstatus.PodDeletionSafetyProvider, kubeletstatus.PodStartupLatencyStateHelper) kubeletstatus.Manager{
	kubeletstatus.NewManager,
	NewManager,
}

func newAdapter(clk *clocktesting.FakeClock) func(*fake.Clientset, kubeletstatus.PodManager, kubeletstatus.PodDeletionSafetyProvider, kubeletstatus.PodStartupLatencyStateHelper) kubeletstatus.Manager {
	return func(cs *fake.Clientset, pm kubeletstatus.PodManager, safety kubeletstatus.PodDeletionSafetyProvider, latency kubeletstatus.PodStartupLatencyStateHelper) kubeletstatus.Manager {
		seed := uint64(1)
		return NewManagerWithOptions(cs, pm, safety, latency, Options{Clock: clk, Retry: status.RetryOptions{Seed: &seed}})
	}
}

func newUpstream(cs *fake.Clientset, pm kubeletstatus.PodManager, safety kubeletstatus.PodDeletionSafetyProvider, latency kubeletstatus.PodStartupLatencyStateHelper) kubeletstatus.Manager {
	return kubeletstatus.NewManager(cs, pm, safety, latency)
}

// TestKubeletCallSequence drives the adapter through the calls the kubelet makes for one
// pod's life (pod worker SetPodStatus, prober SetContainerReadiness, a readiness gate
// flipped by a controller, Ready drifting on the server, deletion: SetPodStatus of the
// terminal status, TerminatePod, then the UID-preconditioned DELETE) with the loops
// Start runs, and checks the server's status, the requests, the latency tracker's and
// the notifier's calls after each step.
func TestKubeletCallSequence(t *testing.T) {
	ctx := testContext(t)
	logger := klog.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := newWorld(t, webPod(), newAdapter(clk))
	a := w.m.(*adapter)
	n := &fakeNotifier{}
	w.m.AddPodUpdateNotifier(n)
	uid := types.UID("uid-web")
	w.safety.set(uid, true)
	w.m.Start(ctx)
	patches := 0
	// settleTicks waits for every change to be on the server (Sync returns once Run or
	// it has sent them), hands the server's copy to the pod manager as the informer
	// would, and checks the requests made since the last step. Steps that stepped the
	// clock may have left one tick of the reconcile pending, which may read the pod
	// manager before the informer caught up with the last PATCH and cost one GET (and no
	// PATCH): extraGets allows for it.
	settleTicks := func(step string, want map[string]int, extraGets int) {
		t.Helper()
		if err := a.inner.Sync(ctx); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if w.server("web") != nil {
			w.informer("web")
		}
		got := w.requests()
		gets := got["get"]
		if gets >= want["get"] && gets <= want["get"]+extraGets {
			got["get"] = want["get"]
		}
		if got["get"] == 0 {
			delete(got, "get")
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: requests %v (GETs %d), want %v (GETs up to %d more)", step, got, gets, want, extraGets)
		}
		patches += want["patch"]
	}
	settle := func(step string, want map[string]int) {
		t.Helper()
		settleTicks(step, want, 0)
	}
	cond := func(step string, ct v1.PodConditionType, want v1.ConditionStatus) {
		t.Helper()
		c := condOf(w.server("web").Status.Conditions, ct)
		if c == nil || c.Status != want {
			t.Fatalf("%s: server's %s = %+v, want %s", step, ct, c, want)
		}
	}

	// 1. The pod worker's first status: init container running.
	pod := w.informer("web")
	st := kubeletStatus(pod, v1.PodPending, []v1.ContainerStatus{running("init", "containerd://init1"), waiting("sidecar")}, []v1.ContainerStatus{waiting("app")})
	got, changed := w.m.SetPodStatus(logger, pod, st)
	if !changed || got.Phase != v1.PodPending || got.ObservedGeneration != 1 {
		t.Fatalf("first SetPodStatus = phase %s, observedGeneration %d, changed %v; want Pending, 1, true", got.Phase, got.ObservedGeneration, changed)
	}
	settle("first status", map[string]int{"patch": 1}) // no GET: the pod passed is the base
	cond("first status", v1.PodInitialized, v1.ConditionFalse)
	if s := w.server("web").Status; len(s.InitContainerStatuses) != 2 || s.InitContainerStatuses[0].State.Running == nil {
		t.Fatalf("first status: server's init statuses = %+v", s.InitContainerStatuses)
	}

	// 2. Init done, sidecar started and ready, app running but not ready yet.
	pod = w.informer("web")
	sidecar := running("sidecar", "containerd://side1")
	sidecar.Ready, sidecar.Started = true, new(true)
	st = kubeletStatus(pod, v1.PodRunning, []v1.ContainerStatus{exited("init", "containerd://init1", 0), sidecar}, []v1.ContainerStatus{running("app", appID.String())})
	if _, changed := w.m.SetPodStatus(logger, pod, st); !changed {
		t.Fatal("running: changed = false")
	}
	settle("running", map[string]int{"patch": 1})
	cond("running", v1.PodInitialized, v1.ConditionTrue)
	cond("running", v1.ContainersReady, v1.ConditionFalse)
	if ph := w.server("web").Status.Phase; ph != v1.PodRunning {
		t.Fatalf("running: server phase %s", ph)
	}

	// The same status again: no change, no request.
	if _, changed := w.m.SetPodStatus(logger, w.informer("web"), st); changed {
		t.Fatal("same status: changed = true")
	}
	settle("same status", map[string]int{})

	// 3. The prober: app ready. ContainersReady True; Ready False, the gate is missing.
	w.m.SetContainerReadiness(logger, uid, appID, true)
	settle("readiness", map[string]int{"patch": 1})
	cond("readiness", v1.ContainersReady, v1.ConditionTrue)
	cond("readiness", v1.PodReady, v1.ConditionFalse)
	// Unknown containers and pods are dropped, as in the kubelet, with no request.
	w.m.SetContainerReadiness(logger, uid, appID, true)
	w.m.SetContainerReadiness(logger, uid, kubecontainerID("nope"), false)
	w.m.SetContainerStartup(logger, "no-such-uid", appID, true)
	settle("no-ops", map[string]int{})

	// 4. A controller sets the readiness gate; the kubelet's HandlePodReconcile resyncs the
	// pod and the pod worker sets the status again.
	pod = w.otherWriter("web", func(p *v1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: gate, Status: v1.ConditionTrue, LastTransitionTime: t0})
	})
	appReady := running("app", appID.String())
	appReady.Ready = true
	st = kubeletStatus(pod, v1.PodRunning, []v1.ContainerStatus{exited("init", "containerd://init1", 0), sidecar}, []v1.ContainerStatus{appReady})
	if _, changed := w.m.SetPodStatus(logger, pod, st); !changed {
		t.Fatal("gate: changed = false")
	}
	settle("gate", map[string]int{"patch": 1})
	cond("gate", v1.PodReady, v1.ConditionTrue)

	// 5. Drift: the node lifecycle controller sets Ready False on the server. No call of
	// the interface: the reconcile that reads the pod manager every sync period finds it,
	// GETs the pod and restores Ready, as the kubelet's needsReconcile does.
	w.otherWriter("web", func(p *v1.Pod) {
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == v1.PodReady {
				p.Status.Conditions[i].Status, p.Status.Conditions[i].Reason = v1.ConditionFalse, "NodeNotReady"
			}
		}
	})
	eventually(t, "Ready restored after drift", func() error {
		clk.Step(status.DefaultSyncPeriod)
		if c := condOf(w.server("web").Status.Conditions, v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
			return fmt.Errorf("server's Ready = %+v", c)
		}
		return nil
	})
	settleTicks("drift", map[string]int{"get": 1, "patch": 1}, 1)

	// 6. Deletion: the pod worker stops the containers, reports the terminal status and
	// terminates the pod; the status goes out, then the DELETE.
	w.otherWriter("web", func(p *v1.Pod) {
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &metav1.Time{Time: t0.Add(time.Minute)}, new(int64(30))
	})
	w.safety.set(uid, false)
	pod = w.informer("web")
	st = kubeletStatus(pod, v1.PodSucceeded, []v1.ContainerStatus{exited("init", "containerd://init1", 0), exited("sidecar", "containerd://side1", 0)}, []v1.ContainerStatus{exited("app", appID.String(), 0)})
	if _, changed := w.m.SetPodStatus(logger, pod, st); !changed {
		t.Fatal("terminal status: changed = false (a pod with a deletionTimestamp always changes)")
	}
	w.m.TerminatePod(logger, pod)
	if err := a.inner.Sync(ctx); err != nil {
		t.Fatalf("deletion: %v", err)
	}
	for _, ac := range w.cs.Actions() {
		t.Logf("DEBUG %s %s", ac.GetVerb(), ac.GetSubresource())
	}
	del, ok := w.deleteAction()
	// The deletionTimestamp reaches the Manager on the kubelet's copy, which cannot be
	// a patch base: one GET first, as the kubelet's syncPod makes one.
	settleTicks("deletion", map[string]int{"delete": 1, "get": 1, "patch": 1}, 1)
	if !ok || del.Name != "web" || del.DeleteOptions.Preconditions == nil || del.DeleteOptions.Preconditions.UID == nil ||
		*del.DeleteOptions.Preconditions.UID != uid || del.DeleteOptions.GracePeriodSeconds == nil || *del.DeleteOptions.GracePeriodSeconds != 0 {
		t.Fatalf("deletion: DELETE %+v (found %v), want web with grace period 0 and UID precondition %s", del, ok, uid)
	}
	if w.server("web") != nil {
		t.Fatal("deletion: pod still on the server")
	}

	// The latency tracker saw every PATCH response and the deletion; the notifier every
	// change made through the interface, not the drift repair.
	recorded, deleted := w.latency.counts()
	if recorded != patches || !slices.Equal(deleted, []types.UID{uid}) {
		t.Errorf("latency tracker: %d RecordStatusUpdated (want %d), DeletePodStartupState %v (want [%s])", recorded, patches, deleted, uid)
	}
	if got, want := n.list(), []string{"updated(added)", "updated", "updated", "updated", "updated", "removed"}; !slices.Equal(got, want) {
		t.Errorf("notifications %v, want %v", got, want)
	}

	// RemoveOrphanedStatuses, as the kubelet's HandlePodCleanups calls it, forgets the pod.
	w.m.RemoveOrphanedStatuses(logger, map[types.UID]bool{})
	if _, ok := w.m.GetPodStatus(uid); ok {
		t.Error("GetPodStatus after RemoveOrphanedStatuses: still cached")
	}
}

// condOf is the condition of type t in conds, read with the Kubernetes helper.
func condOf(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	_, c := podutil.GetPodConditionFromList(conds, t)
	return c
}

func kubecontainerID(id string) kubecontainer.ContainerID {
	return kubecontainer.ContainerID{Type: "containerd", ID: id}
}
