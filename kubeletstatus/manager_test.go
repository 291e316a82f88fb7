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
		return NewManagerWithOptions(cs, pm, safety, latency, Options{Status: status.Options{Clock: clk, Retry: status.RetryOptions{Seed: &seed}}})
	}
}

func newUpstream(cs *fake.Clientset, pm kubeletstatus.PodManager, safety kubeletstatus.PodDeletionSafetyProvider, latency kubeletstatus.PodStartupLatencyStateHelper) kubeletstatus.Manager {
	return kubeletstatus.NewManager(cs, pm, safety, latency)
}

// TestKubeletCallSequence drives the adapter through the calls the kubelet makes for one
// pod's life (pod worker SetPodStatus, prober SetContainerReadiness, a readiness gate
// flipped by a controller, deletion: SetPodStatus of the terminal status, TerminatePod,
// then the UID-preconditioned DELETE) with the loops Start runs, and checks the server's
// status, the requests, the latency tracker's and the notifier's calls after each step.
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
	// settle waits for every change to be on the server (Sync returns once Run or it
	// has sent them) and checks the requests made since the last step.
	settle := func(step string, want map[string]int) {
		t.Helper()
		if err := a.inner.Sync(ctx); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		got := w.requests()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: requests %v, want %v", step, got, want)
		}
		patches += want["patch"]
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

	// 4. A controller sets the readiness gate. No call of the interface: the adapter's
	// reconcile reads the pod manager every sync period and Ready follows (the kubelet's
	// own resync would call SetPodStatus; podstatus does not wait for it).
	w.otherWriter("web", func(p *v1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: gate, Status: v1.ConditionTrue, LastTransitionTime: t0})
	})
	eventually(t, "Ready after the gate flip", func() error {
		clk.Step(status.DefaultSyncPeriod)
		if s, _ := w.m.GetPodStatus(uid); condOf(s.Conditions, v1.PodReady) != nil && condOf(s.Conditions, v1.PodReady).Status == v1.ConditionTrue {
			return nil
		}
		return fmt.Errorf("cached Ready is not True")
	})
	settle("gate", map[string]int{"patch": 1})
	cond("gate", v1.PodReady, v1.ConditionTrue)

	// 5. Deletion: the pod worker stops the containers, reports the terminal status and
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
	del, ok := w.deleteAction()
	settle("deletion", map[string]int{"delete": 1, "patch": 1})
	if !ok || del.Name != "web" || del.DeleteOptions.Preconditions == nil || del.DeleteOptions.Preconditions.UID == nil ||
		*del.DeleteOptions.Preconditions.UID != uid || del.DeleteOptions.GracePeriodSeconds == nil || *del.DeleteOptions.GracePeriodSeconds != 0 {
		t.Fatalf("deletion: DELETE %+v (found %v), want web with grace period 0 and UID precondition %s", del, ok, uid)
	}
	if w.server("web") != nil {
		t.Fatal("deletion: pod still on the server")
	}

	// The latency tracker saw every PATCH response and the deletion; the notifier every
	// change the interface made, not the gate's.
	recorded, deleted := w.latency.counts()
	if recorded != patches || !slices.Equal(deleted, []types.UID{uid}) {
		t.Errorf("latency tracker: %d RecordStatusUpdated (want %d), DeletePodStartupState %v (want [%s])", recorded, patches, deleted, uid)
	}
	if got, want := n.list(), []string{"updated(added)", "updated", "updated", "updated", "removed"}; !slices.Equal(got, want) {
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
