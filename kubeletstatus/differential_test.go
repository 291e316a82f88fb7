package kubeletstatus

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
)

// step is one thing the kubelet does, on the world of either manager.
type step struct {
	name string
	do   func(w *world)
}

var logger = klog.Background()

// setStatus is the pod worker's SetPodStatus with the status the kubelet would build
// from the pod manager's copy.
func setStatus(phase v1.PodPhase, initStatuses, statuses []v1.ContainerStatus) func(w *world) {
	return func(w *world) {
		pod := w.informer("web")
		w.m.SetPodStatus(logger, pod, kubeletStatus(pod, phase, initStatuses, statuses))
	}
}

func readySidecar() v1.ContainerStatus {
	s := running("sidecar", "containerd://side1")
	s.Ready, s.Started = true, new(true)
	return s
}

var (
	initDone = []v1.ContainerStatus{exited("init", "containerd://init1", 0), readySidecar()}
	appUp    = []v1.ContainerStatus{running("app", appID.String())}
)

// running steps bring the pod to Running with its sidecar ready.
var toRunning = []step{
	{"init running", setStatus(v1.PodPending, []v1.ContainerStatus{running("init", "containerd://init1"), waiting("sidecar")}, []v1.ContainerStatus{waiting("app")})},
	{"running", setStatus(v1.PodRunning, initDone, appUp)},
}

func flipGate(s v1.ConditionStatus) step {
	return step{"gate " + string(s), func(w *world) {
		w.otherWriter("web", func(p *v1.Pod) {
			for i := range p.Status.Conditions {
				if p.Status.Conditions[i].Type == gate {
					p.Status.Conditions[i].Status = s
					return
				}
			}
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: gate, Status: s, LastTransitionTime: t0})
		})
		// The kubelet's HandlePodReconcile resyncs a pod whose Ready disagrees with its
		// gates (NeedToReconcilePodReadiness): the pod worker sets the status again.
		setStatus(v1.PodRunning, initDone, appUp)(w)
	}}
}

func readiness(ready bool) step {
	return step{fmt.Sprintf("readiness %v", ready), func(w *world) { w.m.SetContainerReadiness(logger, "uid-web", appID, ready) }}
}

// deleteAndTerminate is the pod's deletion: the API server sets the deletionTimestamp,
// the pod worker stops the containers, reports the terminal status and terminates.
var deleteAndTerminate = step{"delete, stop, terminate", func(w *world) {
	w.otherWriter("web", func(p *v1.Pod) {
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &metav1.Time{Time: t0.Add(time.Minute)}, new(int64(30))
	})
	w.safety.set("uid-web", false)
	pod := w.informer("web")
	st := kubeletStatus(pod, v1.PodSucceeded, []v1.ContainerStatus{exited("init", "containerd://init1", 0), exited("sidecar", "containerd://side1", 0)},
		[]v1.ContainerStatus{exited("app", appID.String(), 0)})
	w.m.SetPodStatus(logger, pod, st)
	w.m.TerminatePod(logger, w.informer("web"))
}}

func concat(lists ...[]step) []step {
	var out []step
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// TestDifferentialAgainstKubeletManager runs the same kubelet call sequences on the
// kubelet's own status manager (status.NewManager, v1.37.0) and on the adapter, each with
// its own fake API server and pod manager, and after every step checks that both servers
// hold the same pod status (times and condition order aside) and both caches the same
// status (GetPodStatus); at the end, that the adapter made no more PATCHes and no GET
// but one before a DELETE.
// The scenarios are those pkg/kubelet/status/status_manager_test.go covers at the
// interface: new, changed and unchanged statuses, readiness and startup, foreign
// conditions, a terminal phase held while containers could run, TerminatePod's defaults
// and the deletion.
func TestDifferentialAgainstKubeletManager(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
		gone  bool // the pod is deleted at the end
	}{
		{name: "lifecycle with a readiness gate", gone: true, steps: concat(toRunning, []step{
			{"same status again", setStatus(v1.PodRunning, initDone, appUp)},
			readiness(true), flipGate(v1.ConditionTrue), flipGate(v1.ConditionFalse), flipGate(v1.ConditionTrue),
			readiness(false), readiness(true),
			deleteAndTerminate,
		})},
		{name: "startup and unknown containers", steps: concat(toRunning, []step{
			{"startup", func(w *world) { w.m.SetContainerStartup(logger, "uid-web", appID, true) }},
			{"startup again", func(w *world) { w.m.SetContainerStartup(logger, "uid-web", appID, true) }},
			{"unknown container", func(w *world) { w.m.SetContainerReadiness(logger, "uid-web", kubecontainerID("nope"), true) }},
			{"unknown pod", func(w *world) { w.m.SetContainerStartup(logger, "no-such-uid", appID, true) }},
		})},
		{name: "foreign condition survives", steps: concat(toRunning, []step{
			{"controller adds a condition", func(w *world) {
				w.otherWriter("web", func(p *v1.Pod) {
					p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: "example.com/other", Status: v1.ConditionTrue, LastTransitionTime: t0})
				})
			}},
			readiness(true),
			{"status from a stale pod copy", func(w *world) {
				pod := w.informer("web").DeepCopy()
				pod.Status.Conditions = nil // generated before the controller's write
				w.m.SetPodStatus(logger, pod, kubeletStatus(pod, v1.PodRunning, initDone, []v1.ContainerStatus{func() v1.ContainerStatus {
					s := running("app", appID.String())
					s.RestartCount = 1
					return s
				}()}))
			}},
		})},
		{name: "terminal phase held while containers could run", steps: concat(toRunning, []step{
			{"failed, containers still running", func(w *world) {
				w.safety.set("uid-web", true)
				setStatus(v1.PodFailed, initDone, []v1.ContainerStatus{exited("app", appID.String(), 1)})(w)
			}},
			{"stopped and terminated", func(w *world) {
				w.safety.set("uid-web", false)
				w.m.TerminatePod(logger, w.informer("web"))
			}},
		})},
		{name: "terminate during init", steps: []step{
			{"init running", setStatus(v1.PodPending, []v1.ContainerStatus{running("init", "containerd://init1"), waiting("sidecar")}, []v1.ContainerStatus{waiting("app")})},
			{"terminate", func(w *world) { w.m.TerminatePod(logger, w.informer("web")) }},
		}},
		{name: "terminate without a status", steps: []step{
			{"terminate", func(w *world) { w.m.TerminatePod(logger, w.informer("web")) }},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			clk := clocktesting.NewFakeClock(time.Now())
			up := newWorld(t, webPod(), newUpstream)
			ours := newWorld(t, webPod(), newAdapter(clk))
			// The kubelet's manager runs its loop forever (wait.Forever in its Start): its
			// goroutine outlives the test, as in the kubelet's own tests.
			up.m.Start(ctx)
			ours.m.Start(ctx)
			for _, s := range tc.steps {
				s.do(up)
				s.do(ours)
				if err := ours.m.(*adapter).inner.Sync(ctx); err != nil {
					t.Fatalf("%s: Sync: %v", s.name, err)
				}
				want := ours.server("web")
				eventually(t, s.name+": the kubelet's server copy equals ours", up.sameAs("web", want))
				us, uok := up.m.GetPodStatus("uid-web")
				ourSt, ook := ours.m.GetPodStatus("uid-web")
				if uok != ook {
					t.Fatalf("%s: GetPodStatus found: kubelet %v, ours %v", s.name, uok, ook)
				}
				if g, e := comparableStatus(ourSt), comparableStatus(us); !apiequality.Semantic.DeepEqual(g, e) {
					t.Fatalf("%s: cached status differs (-kubelet +ours):\n%s", s.name, diff.Diff(e, g))
				}
			}
			if gone := ours.server("web") == nil; gone != tc.gone {
				t.Fatalf("pod deleted: %v, want %v", gone, tc.gone)
			}
			ur, or := up.requests(), ours.requests()
			t.Logf("requests: kubelet's manager %v, adapter %v", ur, or)
			if or["get"] > or["delete"] || or["patch"] > ur["patch"] || or["delete"] != ur["delete"] {
				t.Errorf("adapter requests %v, want a GET only before a DELETE, at most the kubelet's %d PATCHes and its %d DELETEs", or, ur["patch"], ur["delete"])
			}
		})
	}
}
