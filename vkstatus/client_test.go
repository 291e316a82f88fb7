package vkstatus

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/status/statustest"
)

// TestUpdateStatusKubeletConditions: a provider's hand-written Ready (True, twice, with
// the gate False) becomes the kubelet's conditions on the server, in one PATCH without a
// GET; a gate another controller flips moves Ready, and the gate is never lost.
func TestUpdateStatusKubeletConditions(t *testing.T) {
	w := newWorld(t, Options{}, gatedPod("web"))
	ctx := context.Background()
	if _, err := w.srv.SetCondition("ns", "web", v1.PodCondition{Type: gate, Status: v1.ConditionFalse}); err != nil {
		t.Fatal(err)
	}
	w.srv.ResetRequests()
	if _, err := w.c.Pods("ns").UpdateStatus(ctx, providerPod(gatedPod("web")), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	got := w.peek(t, "web")
	for ct, want := range map[v1.PodConditionType]v1.ConditionStatus{
		v1.PodReady: v1.ConditionFalse, v1.ContainersReady: v1.ConditionTrue, gate: v1.ConditionFalse,
		v1.PodInitialized: v1.ConditionTrue, v1.PodReadyToStartContainers: v1.ConditionTrue, v1.PodScheduled: v1.ConditionTrue,
	} {
		if s := condStatus(got, ct); s != want {
			t.Errorf("%s = %s, want %s (conditions %+v)", ct, s, want, got.Status.Conditions)
		}
	}
	if r := cond(got, v1.PodReady); r.Reason != "ReadinessGatesNotReady" {
		t.Errorf("Ready reason %q, want ReadinessGatesNotReady", r.Reason)
	}
	if g, p := w.srv.Requests(statustest.VerbGet), w.srv.Requests(statustest.VerbPatch); g != 0 || p != 1 {
		t.Errorf("requests: %d GET, %d PATCH; want 0 and 1", g, p)
	}

	// Another controller flips the gate: Ready follows from the watch event alone.
	w.srv.ResetRequests()
	if _, err := w.srv.SetCondition("ns", "web", v1.PodCondition{Type: gate, Status: v1.ConditionTrue}); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	got = w.peek(t, "web")
	if condStatus(got, v1.PodReady) != v1.ConditionTrue || condStatus(got, gate) != v1.ConditionTrue {
		t.Errorf("after the gate flipped: Ready %s, gate %s; want True, True", condStatus(got, v1.PodReady), condStatus(got, gate))
	}
	if p := w.srv.Requests(statustest.VerbPatch); p != 1 {
		t.Errorf("%d PATCHes for the gate flip, want 1", p)
	}

	// The provider reports the same status again, with its stale copy of the gate (False):
	// nothing is sent and the gate stays True.
	w.srv.ResetRequests()
	stale := providerPod(gatedPod("web"))
	stale.Status.Conditions = append(stale.Status.Conditions, v1.PodCondition{Type: gate, Status: v1.ConditionFalse})
	if _, err := w.c.Pods("ns").UpdateStatus(ctx, stale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	got = w.peek(t, "web")
	if condStatus(got, gate) != v1.ConditionTrue || condStatus(got, v1.PodReady) != v1.ConditionTrue {
		t.Errorf("after a stale provider copy: gate %s, Ready %s; want True, True", condStatus(got, gate), condStatus(got, v1.PodReady))
	}
	if p := w.srv.Requests(statustest.VerbPatch); p != 0 {
		t.Errorf("%d PATCHes for an unchanged status, want 0", p)
	}
}

// TestDriftRepairedAndForeignConditionsKept: Ready set False by another writer (as the
// node lifecycle controller does) is written back after the watch event; a
// DisruptionTarget another controller wrote survives.
func TestDriftRepairedAndForeignConditionsKept(t *testing.T) {
	pod := gatedPod("web")
	pod.Spec.ReadinessGates = nil
	w := newWorld(t, Options{}, pod)
	ctx := context.Background()
	if _, err := w.c.Pods("ns").UpdateStatus(ctx, providerPod(pod), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	if s := condStatus(w.peek(t, "web"), v1.PodReady); s != v1.ConditionTrue {
		t.Fatalf("Ready %s, want True", s)
	}
	dt := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "EvictionByEvictionAPI", LastTransitionTime: metav1.NewTime(t0)}
	if _, err := w.srv.SetCondition("ns", "web", dt); err != nil {
		t.Fatal(err)
	}
	if _, err := w.srv.SetCondition("ns", "web", v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "NodeNotReady", LastTransitionTime: metav1.NewTime(t0)}); err != nil {
		t.Fatal(err)
	}
	w.srv.ResetRequests()
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	got := w.peek(t, "web")
	if s := condStatus(got, v1.PodReady); s != v1.ConditionTrue {
		t.Errorf("Ready %s after one sync, want True (repaired)", s)
	}
	if c := cond(got, v1.DisruptionTarget); c == nil || c.Reason != dt.Reason {
		t.Errorf("DisruptionTarget lost: %+v", got.Status.Conditions)
	}
	if p, g := w.srv.Requests(statustest.VerbPatch), w.srv.Requests(statustest.VerbGet); p != 1 || g != 0 {
		t.Errorf("repair took %d PATCH, %d GET; want 1, 0", p, g)
	}
}

// TestBadInput: input no status can come from is refused with an error matching
// podstatus.ErrInvalidInput, and nothing is sent.
func TestBadInput(t *testing.T) {
	unknown := providerPod(gatedPod("web"))
	unknown.Status.ContainerStatuses = append(unknown.Status.ContainerStatuses, v1.ContainerStatus{Name: "sidecar"})
	noPhase := providerPod(gatedPod("web"))
	noPhase.Status = v1.PodStatus{}
	noUID := providerPod(gatedPod("web"))
	noUID.UID = ""
	for _, tc := range []struct {
		name  string
		pod   *v1.Pod
		field string
	}{
		{"nil pod", nil, "pod"},
		{"empty status", noPhase, "pod.Status.Phase"},
		{"container not in the spec", unknown, "pod.Status.ContainerStatuses[1].Name"},
		{"no UID", noUID, "pod.ObjectMeta.UID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, Options{}, gatedPod("web"))
			w.srv.ResetRequests()
			_, err := w.c.Pods("ns").UpdateStatus(context.Background(), tc.pod, metav1.UpdateOptions{})
			if !errors.Is(err, podstatus.ErrInvalidInput) {
				t.Fatalf("err = %v, want one matching ErrInvalidInput", err)
			}
			var ie *podstatus.InputError
			if !errors.As(err, &ie) || len(ie.Errs) == 0 || ie.Errs[0].Field != tc.field {
				t.Errorf("err = %v, want the field %s", err, tc.field)
			}
			if err := w.sync(t); err != nil {
				t.Fatal(err)
			}
			if n := len(w.srv.Patches()); n != 0 {
				t.Errorf("%d PATCHes sent for bad input", n)
			}
		})
	}
}

// TestRecreatedWhileInFlight: the pod is deleted and recreated under the same name between
// UpdateStatus and the PATCH: nothing lands on the new pod, the sync does not fail or
// requeue, and a later UpdateStatus for the old UID is a NotFound (which
// virtual-kubelet's updatePodStatus drops instead of requeueing, virtual-kubelet#1157).
func TestRecreatedWhileInFlight(t *testing.T) {
	w := newWorld(t, Options{}, gatedPod("web"))
	ctx := context.Background()
	old := providerPod(gatedPod("web"))
	if _, err := w.c.Pods("ns").UpdateStatus(ctx, old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh, err := w.srv.Recreate("ns", "web")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatalf("sync after the recreation: %v", err)
	}
	got := w.peek(t, "web")
	if got.UID != fresh.UID || got.Status.Phase != v1.PodPending || len(got.Status.ContainerStatuses) != 0 {
		t.Errorf("the new pod got the old pod's status: %+v", got.Status)
	}
	_, err = w.c.Pods("ns").UpdateStatus(ctx, old, metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("UpdateStatus for the old UID: err = %v, want NotFound", err)
	}
	w.srv.ResetRequests()
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	if n := len(w.srv.Patches()); n != 0 {
		t.Errorf("%d PATCHes after the recreation", n)
	}
}

// TestUnreachableServer: failed PATCHes are the Manager's to retry (UpdateStatus does not
// fail, so virtual-kubelet's queue never retries), and the status lands once the server
// answers.
func TestUnreachableServer(t *testing.T) {
	w := newWorld(t, Options{}, gatedPod("web"))
	w.srv.FailNext(statustest.VerbPatch, 2, statustest.ServiceUnavailable())
	if _, err := w.c.Pods("ns").UpdateStatus(context.Background(), providerPod(gatedPod("web")), metav1.UpdateOptions{}); err != nil {
		t.Fatalf("UpdateStatus: %v", err)
	}
	for i := range 2 {
		if err := w.sync(t); !containsServiceUnavailable(err) {
			t.Fatalf("sync %d: err = %v, want the 503", i, err)
		}
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	if got := w.peek(t, "web"); got.Status.Phase != v1.PodRunning {
		t.Errorf("phase %s after the server came back, want Running", got.Status.Phase)
	}
}

func containsServiceUnavailable(err error) bool {
	var se *apierrors.StatusError
	return errors.As(err, &se) && apierrors.IsServiceUnavailable(se)
}

// TestTerminatedWinsAndTerminalNotReady: virtual-kubelet's syncProviderWrapper.DeletePod
// reports Succeeded with Terminated added beside Running and Ready left True; the server
// gets a terminated container only and Ready False.
func TestTerminatedWinsAndTerminalNotReady(t *testing.T) {
	pod := gatedPod("web")
	pod.Spec.ReadinessGates = nil
	w := newWorld(t, Options{}, pod)
	ctx := context.Background()
	pp := providerPod(pod)
	if _, err := w.c.Pods("ns").UpdateStatus(ctx, pp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	done := pp.DeepCopy()
	done.Status.Phase = v1.PodSucceeded
	done.Status.Reason = "Terminated"
	done.Status.ContainerStatuses[0].State.Terminated = &v1.ContainerStateTerminated{Reason: "Terminated", FinishedAt: metav1.NewTime(t0)}
	if _, err := w.c.Pods("ns").UpdateStatus(ctx, done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); err != nil {
		t.Fatal(err)
	}
	got := w.peek(t, "web")
	st := got.Status.ContainerStatuses[0].State
	if st.Running != nil || st.Terminated == nil {
		t.Errorf("container state %+v, want Terminated only", st)
	}
	if got.Status.Phase != v1.PodSucceeded || condStatus(got, v1.PodReady) != v1.ConditionFalse || cond(got, v1.PodReady).Reason != "PodCompleted" {
		t.Errorf("phase %s, Ready %+v; want Succeeded, False/PodCompleted", got.Status.Phase, cond(got, v1.PodReady))
	}
}
