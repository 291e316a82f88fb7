package kubeletstatus

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	kubepod "k8s.io/kubernetes/pkg/kubelet/pod"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// This file is a miniature kubelet around a status.Manager: a fake API server
// (client-go's fake clientset, with resourceVersions), the kubelet's own pod manager fed
// like an informer, a pod deletion safety provider, a startup-latency recorder and a
// notifier, and a driver that builds statuses with the kubelet's own condition
// generators (pkg/kubelet/status/generate.go) — the test oracle never calls podstatus.

var podsGVR = v1.SchemeGroupVersion.WithResource("pods")

// fakeSafety is the pod deletion safety provider: containers could run until stopped.
type fakeSafety struct {
	mu      sync.Mutex
	running map[types.UID]bool
}

func (f *fakeSafety) PodCouldHaveRunningContainers(pod *v1.Pod) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running[pod.UID]
}

func (f *fakeSafety) set(uid types.UID, running bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running[uid] = running
}

// fakeLatency records the calls of the pod startup latency tracker.
type fakeLatency struct {
	mu       sync.Mutex
	recorded []string // resourceVersions of the pods RecordStatusUpdated got
	deleted  []types.UID
}

func (f *fakeLatency) RecordStatusUpdated(_ klog.Logger, pod *v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recorded = append(f.recorded, pod.ResourceVersion)
}

func (f *fakeLatency) DeletePodStartupState(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, uid)
}

func (f *fakeLatency) counts() (recorded int, deleted []types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.recorded), slices.Clone(f.deleted)
}

// fakeNotifier records notifications: "updated(added)", "updated" and "removed".
type fakeNotifier struct {
	mu     sync.Mutex
	events []string
}

func (f *fakeNotifier) OnPodUpdated(_ klog.Logger, pod *v1.Pod, s v1.PodStatus, isAdded bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !apiequality.Semantic.DeepEqual(pod.Status, s) {
		f.events = append(f.events, "mismatch")
	}
	if isAdded {
		f.events = append(f.events, "updated(added)")
	} else {
		f.events = append(f.events, "updated")
	}
}

func (f *fakeNotifier) OnPodRemoved(klog.Logger, *v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, "removed")
}

func (f *fakeNotifier) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// world is one node: API server, pod manager, and a status manager under test.
type world struct {
	t       *testing.T
	cs      *fake.Clientset
	pm      kubepod.Manager
	safety  *fakeSafety
	latency *fakeLatency
	m       kubeletstatus.Manager

	// writeMu makes each write to the fake server atomic: the patch reactor's apply and
	// resourceVersion stamp, and another writer's read-modify-write. Without it, a
	// write landing between the two stores of a PATCH would be lost.
	writeMu sync.Mutex
	rv      int64
}

// newWorld makes a node with pod on the server and in the pod manager; newManager builds
// the manager under test from the kubelet's parameters.
func newWorld(t *testing.T, pod *v1.Pod, newManager func(kubeClient *fake.Clientset, pm kubeletstatus.PodManager, safety kubeletstatus.PodDeletionSafetyProvider, latency kubeletstatus.PodStartupLatencyStateHelper) kubeletstatus.Manager) *world {
	t.Helper()
	w := &world{t: t, pm: kubepod.NewBasicPodManager(), safety: &fakeSafety{running: map[types.UID]bool{}}, latency: &fakeLatency{}, rv: 1}
	pod = pod.DeepCopy()
	pod.ResourceVersion = "1"
	w.cs = fake.NewClientset(pod)
	// The fake tracker does not write resourceVersions; an API server does, and the
	// Manager orders the copies it sees by them.
	w.cs.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		w.writeMu.Lock()
		defer w.writeMu.Unlock()
		_, obj, err := k8stesting.ObjectReaction(w.cs.Tracker())(a)
		if err != nil {
			return true, nil, err
		}
		p := obj.(*v1.Pod)
		p.ResourceVersion = w.nextRV()
		if err := w.cs.Tracker().Update(podsGVR, p, p.Namespace, metav1.UpdateOptions{}); err != nil {
			return true, nil, err
		}
		return true, p.DeepCopy(), nil
	})
	w.pm.AddPod(pod)
	w.m = newManager(w.cs, w.pm, w.safety, w.latency)
	return w
}

// nextRV returns the next resourceVersion; w.writeMu must be held.
func (w *world) nextRV() string {
	w.rv++
	return strconv.FormatInt(w.rv, 10)
}

// server returns the server's copy of the pod, nil when it is gone.
func (w *world) server(name string) *v1.Pod {
	w.t.Helper()
	obj, err := w.cs.Tracker().Get(podsGVR, "ns", name)
	if err != nil {
		return nil
	}
	return obj.(*v1.Pod)
}

// informer hands the server's copy to the pod manager as the kubelet's pod config does
// for an update from the API server: with the status and spec of the moment but the
// resourceVersion it first saw (checkAndUpdatePod in pkg/kubelet/config/config.go
// updates its pod in place and never copies the resourceVersion).
func (w *world) informer(name string) *v1.Pod {
	w.t.Helper()
	p := w.server(name)
	if p == nil {
		w.t.Fatalf("pod %s is not on the server", name)
	}
	p = p.DeepCopy()
	if old, ok := w.pm.GetPodByUID(p.UID); ok {
		p.ResourceVersion = old.ResourceVersion
	}
	w.pm.UpdatePod(p)
	return p
}

// otherWriter changes the server's copy as another client would (a controller flipping a
// readiness gate, a user deleting the pod): not through the clientset, so the change is
// not counted as the node's request. The pod manager hears of it.
func (w *world) otherWriter(name string, change func(*v1.Pod)) *v1.Pod {
	w.t.Helper()
	w.writeMu.Lock()
	p := w.server(name).DeepCopy()
	change(p)
	p.ResourceVersion = w.nextRV()
	err := w.cs.Tracker().Update(podsGVR, p, p.Namespace, metav1.UpdateOptions{})
	w.writeMu.Unlock()
	if err != nil {
		w.t.Fatalf("other writer: %v", err)
	}
	return w.informer(name)
}

// requests counts the node's requests by verb since the last call.
func (w *world) requests() map[string]int {
	out := map[string]int{}
	for _, a := range w.cs.Actions() {
		if a.GetResource().Resource == "pods" {
			out[a.GetVerb()]++
		}
	}
	w.cs.ClearActions()
	return out
}

// deleteAction returns the node's DELETE of the pod, if it made one.
func (w *world) deleteAction() (k8stesting.DeleteActionImpl, bool) {
	for _, a := range w.cs.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			return d, true
		}
	}
	return k8stesting.DeleteActionImpl{}, false
}

// kubeletStatus is what the kubelet's generateAPIPodStatus (pkg/kubelet/kubelet_pods.go)
// would hand SetPodStatus for pod in this phase with these container statuses: the
// conditions come from the kubelet's own generators, conditions the kubelet does not own
// (readiness gates) are copied from the pod's status.
func kubeletStatus(pod *v1.Pod, phase v1.PodPhase, initStatuses, statuses []v1.ContainerStatus) v1.PodStatus {
	s := v1.PodStatus{
		Phase: phase, HostIP: "10.0.0.1", HostIPs: []v1.HostIP{{IP: "10.0.0.1"}},
		PodIP: "10.1.0.5", PodIPs: []v1.PodIP{{IP: "10.1.0.5"}},
		InitContainerStatuses: initStatuses, ContainerStatuses: statuses, QOSClass: v1.PodQOSBestEffort,
	}
	for _, c := range pod.Status.Conditions {
		if !kubetypes.PodConditionByKubelet(c.Type) || c.Type == v1.PodScheduled {
			s.Conditions = append(s.Conditions, c)
		}
	}
	all := append(slices.Clone(initStatuses), statuses...)
	s.Conditions = append(s.Conditions,
		kubeletstatus.GeneratePodInitializedCondition(pod, &pod.Status, all, phase),
		kubeletstatus.GenerateContainersReadyCondition(pod, &pod.Status, all, phase),
		kubeletstatus.GeneratePodReadyCondition(pod, &pod.Status, s.Conditions, all, phase),
	)
	return s
}

var t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

func running(name, id string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, Image: name + ":1", ImageID: name + "@sha256:1", ContainerID: id,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t0}}}
}

func exited(name, id string, code int32) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, Image: name + ":1", ImageID: name + "@sha256:1", ContainerID: id,
		State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, Reason: "Completed", StartedAt: t0, FinishedAt: t0, ContainerID: id}}}
}

func waiting(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, Image: name + ":1", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}}
}

const gate = v1.PodConditionType("example.com/load-balancer")

// webPod has an init container, a sidecar, an app container and a readiness gate.
func webPod() *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-web", Generation: 1},
		Spec: v1.PodSpec{
			NodeName:       "node",
			InitContainers: []v1.Container{{Name: "init", Image: "init:1"}, {Name: "sidecar", Image: "sidecar:1", RestartPolicy: &always}},
			Containers:     []v1.Container{{Name: "app", Image: "app:1"}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: gate}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: t0}}},
	}
}

var appID = kubecontainer.ContainerID{Type: "containerd", ID: "app1"}

// comparableStatus strips what legitimately differs between two managers' copies of one
// status: times stamped from different clocks, and the order of conditions (the
// kubelet's merge puts foreign conditions first, podstatus's patch keeps the server's
// order).
func comparableStatus(s v1.PodStatus) v1.PodStatus {
	s = *s.DeepCopy()
	s.StartTime = nil
	for i := range s.Conditions {
		s.Conditions[i].LastTransitionTime, s.Conditions[i].LastProbeTime = metav1.Time{}, metav1.Time{}
	}
	slices.SortFunc(s.Conditions, func(a, b v1.PodCondition) int {
		switch {
		case a.Type < b.Type:
			return -1
		case a.Type > b.Type:
			return 1
		}
		return 0
	})
	return s
}

// eventually polls cond every 5 ms until it holds, for at most 10 s: the bound on how
// long a background loop may take to act, far beyond what it needs.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s: %v", what, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sameAs returns a check that the server's pod status equals want (comparable).
func (w *world) sameAs(name string, want *v1.Pod) func() error {
	return func() error {
		got := w.server(name)
		switch {
		case got == nil && want == nil:
			return nil
		case got == nil || want == nil:
			return fmt.Errorf("pod present: %v, want %v", got != nil, want != nil)
		}
		if g, e := comparableStatus(got.Status), comparableStatus(want.Status); !apiequality.Semantic.DeepEqual(g, e) {
			return fmt.Errorf("status differs (-want +got):\n%s", diff.Diff(e, g))
		}
		return nil
	}
}

// testContext returns a context cancelled at the end of the test.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
