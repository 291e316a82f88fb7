package vkstatus

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podstatus/podstatus/status/statustest"
)

// forceDelete is virtual-kubelet's force delete (PodController.deletePodsFromKubernetesHandler,
// node/pod.go): grace period 0 and a UID precondition.
func forceDelete(ctx context.Context, w *world, name string, uid types.UID) error {
	zero := int64(0)
	return w.c.Pods("ns").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
		Preconditions: &metav1.Preconditions{UID: &uid}})
}

// TestPodClientOnlyDeletion: for a provider that only reports statuses through
// UpdateStatus, virtual-kubelet's force delete of a deleted pod (at once for a pod whose
// containers never started, at the end of the grace period for one whose containers
// still run) is held until the pod's terminal status is on the server, as the kubelet's
// status manager deletes a pod only then (canBeDeleted,
// pkg/kubelet/status/status_manager.go): the last version before the DELETE is Failed
// with every container terminated and Ready False.
func TestPodClientOnlyDeletion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status func(*v1.Pod) *v1.Pod
	}{
		{"deleted before its containers started", creatingPod},
		{"containers outlive the grace period", providerPod},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := gatedPod("web")
			pod.Spec.ReadinessGates = nil
			w := newWorld(t, Options{}, pod)
			ctx := context.Background()
			if _, err := w.c.Pods("ns").UpdateStatus(ctx, tc.status(pod), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := w.sync(t); err != nil {
				t.Fatal(err)
			}
			if _, err := w.srv.Update("ns", "web", func(p *v1.Pod) {
				now := metav1.NewTime(t0)
				grace := int64(30)
				p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &grace
			}); err != nil {
				t.Fatal(err)
			}
			// The provider still reports its last status: nothing new.
			if _, err := w.c.Pods("ns").UpdateStatus(ctx, tc.status(w.peek(t, "web")), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := w.sync(t); err != nil {
				t.Fatal(err)
			}
			var writes []statustest.Event
			w.srv.OnWrite(func(e statustest.Event) { writes = append(writes, e) })
			w.srv.ResetRequests()
			if err := forceDelete(ctx, w, "web", pod.UID); err != nil {
				t.Fatal(err)
			}
			if d := w.srv.Requests(statustest.VerbDelete); d != 0 {
				t.Fatalf("virtual-kubelet's force delete before the terminal status sent %d DELETEs", d)
			}
			if err := w.sync(t); err != nil {
				t.Fatal(err)
			}
			if _, err := w.srv.Peek("ns", "web"); err == nil {
				t.Fatal("pod still there after its terminal status was written")
			}
			if len(writes) != 2 {
				t.Fatalf("%d writes, want the terminal PATCH and the DELETE", len(writes))
			}
			last := writes[0].Pod
			if last.Status.Phase != v1.PodFailed || condStatus(last, v1.PodReady) != v1.ConditionFalse || condStatus(last, v1.ContainersReady) != v1.ConditionFalse {
				t.Errorf("last status before the DELETE: phase %s, Ready %s, ContainersReady %s; want Failed, False, False",
					last.Status.Phase, condStatus(last, v1.PodReady), condStatus(last, v1.ContainersReady))
			}
			for _, cs := range last.Status.ContainerStatuses {
				if term := cs.State.Terminated; term == nil || term.ExitCode != 137 || term.Reason != "ContainerStatusUnknown" {
					t.Errorf("container %s: state %+v, want terminated with 137, ContainerStatusUnknown", cs.Name, cs.State)
				}
			}
			if d := w.srv.Requests(statustest.VerbDelete); d != 1 {
				t.Errorf("%d DELETEs, want 1", d)
			}
		})
	}
}

// TestDeletePassedThrough: a delete that is not virtual-kubelet's force delete of a
// known pod without a terminal phase goes to the wrapped client at once: another grace
// period, another UID, a pod already terminal on the server, a pod the Client never saw.
func TestDeletePassedThrough(t *testing.T) {
	ctx := context.Background()
	grace := int64(30)
	for _, tc := range []struct {
		name   string
		uid    types.UID
		grace  *int64
		status v1.PodPhase
		seen   bool
	}{
		{"graceful", "web-uid", &grace, v1.PodRunning, true},
		{"another UID", "other", nil, v1.PodRunning, true},
		{"terminal on the server", "web-uid", nil, v1.PodSucceeded, true},
		{"unknown pod", "web-uid", nil, v1.PodRunning, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := gatedPod("web")
			pod.Status.Phase = tc.status
			w := newWorld(t, Options{}, pod)
			if !tc.seen {
				// A Client whose event handler never saw the pod.
				w.c = New(srvGetter{w.srv}, Options{})
			}
			zero := int64(0)
			g := &zero
			if tc.grace != nil {
				g = tc.grace
			}
			uid := w.peek(t, "web").UID
			if tc.uid == "other" {
				uid = "other"
			}
			_ = w.c.Pods("ns").Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: g, Preconditions: &metav1.Preconditions{UID: &uid}})
			if d := w.srv.Requests(statustest.VerbDelete); d != 1 {
				t.Errorf("%d DELETEs sent, want 1", d)
			}
		})
	}
}
