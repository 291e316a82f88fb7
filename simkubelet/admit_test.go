package simkubelet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// The kubelet's pod-count admission: the messages are those of
// InsufficientResourceError.Error in pkg/kubelet/lifecycle/predicate.go, written out.
func TestAdmissionAdmitsUpToTheDeclaredCapacity(t *testing.T) {
	for _, tc := range []struct {
		name     string
		bounded  bool
		capacity int64
		active   int64
		want     string // "" admitted
	}{
		{"room left", true, 110, 109, ""},
		{"full", true, 110, 110, "Node didn't have enough resource: pods, requested: 1, used: 110, capacity: 110"},
		{"over (capacity lowered)", true, 3, 5, "Node didn't have enough resource: pods, requested: 1, used: 5, capacity: 3"},
		{"capacity 0", true, 0, 0, "Node didn't have enough resource: pods, requested: 1, used: 0, capacity: 0"},
		{"no capacity declared (KWOK)", false, 0, 1 << 20, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ad := &admission{bounded: tc.bounded, capacity: tc.capacity, active: tc.active}
			got := ad.admit()
			if got != tc.want {
				t.Fatalf("admit() = %q, want %q", got, tc.want)
			}
			wantActive := tc.active
			if tc.want == "" {
				wantActive++
			}
			if ad.active != wantActive {
				t.Fatalf("active = %d after admit, want %d", ad.active, wantActive)
			}
		})
	}
}

func TestDeclaredPods(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name         string
		status       v1.NodeStatus
		want         int64
		wantDeclared bool
	}{
		{"neither (KWOK)", v1.NodeStatus{}, 0, false},
		{"cpu only", v1.NodeStatus{Capacity: v1.ResourceList{v1.ResourceCPU: q("4")}}, 0, false},
		{"capacity only", v1.NodeStatus{Capacity: v1.ResourceList{v1.ResourcePods: q("5")}}, 5, true},
		{"allocatable below capacity", v1.NodeStatus{Capacity: v1.ResourceList{v1.ResourcePods: q("110")},
			Allocatable: v1.ResourceList{v1.ResourcePods: q("100")}}, 100, true},
		{"declared 0", v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: q("0")}}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, declared := declaredPods(&v1.Node{Status: tc.status})
			if got != tc.want || declared != tc.wantDeclared {
				t.Fatalf("declaredPods = %d, %v; want %d, %v", got, declared, tc.want, tc.wantDeclared)
			}
		})
	}
}

// admitPod: terminal pods are neither admitted nor counted, pods an earlier agent
// process ran are counted without a check, new pods are checked.
func TestAdmitPod(t *testing.T) {
	start := metav1.Now()
	for _, tc := range []struct {
		name          string
		status        v1.PodStatus
		active        int64 // on a node of capacity 2
		wantActive    bool
		wantRejection bool
		wantCount     int64
	}{
		{"new, room", v1.PodStatus{}, 1, true, false, 2},
		{"new, full", v1.PodStatus{Phase: v1.PodPending}, 2, false, true, 2},
		{"ran before, full", v1.PodStatus{Phase: v1.PodRunning, StartTime: &start}, 2, true, false, 3},
		{"succeeded", v1.PodStatus{Phase: v1.PodSucceeded, StartTime: &start}, 2, false, false, 2},
		{"rejected before", v1.PodStatus{Phase: v1.PodFailed, Reason: ReasonOutOfPods, StartTime: &start}, 2, false, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &nodeState{admission: admission{bounded: true, capacity: 2, active: tc.active}}
			e := &podEntry{node: n}
			admitPod(e, &v1.Pod{Status: tc.status})
			if e.active != tc.wantActive || (e.rejection != "") != tc.wantRejection || n.admission.active != tc.wantCount {
				t.Fatalf("active %v, rejection %q, node count %d; want %v, rejection %v, %d",
					e.active, e.rejection, n.admission.active, tc.wantActive, tc.wantRejection, tc.wantCount)
			}
			releasePod(e)
			releasePod(e) // once only
			if want := tc.wantCount - map[bool]int64{true: 1}[tc.wantActive]; n.admission.active != want {
				t.Fatalf("node count %d after release, want %d", n.admission.active, want)
			}
		})
	}
}

// A node that declares a pod capacity (made by the agent with --max-pods, or by its
// creator) rejects the pod beyond it as the kubelet does: phase Failed, reason OutOfpods,
// the kubelet's message, a Warning Event; a pod that finished frees its place. A node
// made as KWOK users make them (no capacity) is not bounded this way: see
// TestKWOKNodeServesMorePodsThanASlash24.
func TestOutOfPodsOnADeclaredCapacity(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Options
		node *v1.Node // an existing node to adopt, or nil
	}{
		{"created with --max-pods 3", Options{Nodes: 1, MaxPods: 3}, nil},
		{"adopted, allocatable 3", Options{ManageNodesWithAnnotationSelector: "kwok.x-k8s.io/node=fake"}, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "fleet-node-0", Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Status: v1.NodeStatus{Capacity: v1.ResourceList{v1.ResourcePods: resource.MustParse("110")},
				Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("3")}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testOutOfPods(t, tc.cfg, tc.node) })
		})
	}
}

func testOutOfPods(t *testing.T, cfg Options, node *v1.Node) {
	ctx := context.Background()
	cs := fake.NewClientset()
	if node != nil {
		cs = fake.NewClientset(node)
	}
	cfg.Profile, cfg.ProgressInterval = "fast", -1
	var log errorLog
	cfg.Logger = log.logger()
	stop := startFake(t, cfg, cs)
	defer func() { stop() }()
	poll(t, "the node", func() bool {
		_, err := cs.CoreV1().Nodes().Get(ctx, "fleet-node-0", metav1.GetOptions{})
		return err == nil
	})
	pods := cs.CoreV1().Pods("default")
	create := func(i int, runTime string) {
		t.Helper()
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec:       v1.PodSpec{NodeName: "fleet-node-0", Containers: []v1.Container{{Name: "app", Image: "app"}}},
			Status:     v1.PodStatus{QOSClass: v1.PodQOSBestEffort},
		}
		if runTime != "" { // a job: its container exits 0 after runTime
			pod.Annotations = map[string]string{"sim.podstatus.io/run-time": runTime}
			pod.Spec.RestartPolicy = v1.RestartPolicyNever
		}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) *v1.Pod {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return &v1.Pod{}
		}
		return p
	}
	phaseIs := func(name string, ph v1.PodPhase) func() bool {
		return func() bool { return get(name).Status.Phase == ph }
	}
	rejectedWith := func(name, msg string) {
		t.Helper()
		poll(t, name+" Failed", phaseIs(name, v1.PodFailed))
		p := get(name)
		if p.Status.Reason != ReasonOutOfPods || p.Status.Message != "Pod was rejected: "+msg ||
			p.Status.QOSClass != v1.PodQOSBestEffort || p.Status.StartTime == nil || len(p.Status.ContainerStatuses) != 0 {
			t.Errorf("%s: reason %q, message %q, qosClass %q, startTime %v, containerStatuses %v; want %q, %q, BestEffort, a start time, none",
				name, p.Status.Reason, p.Status.Message, p.Status.QOSClass, p.Status.StartTime, p.Status.ContainerStatuses, ReasonOutOfPods, "Pod was rejected: "+msg)
		}
		poll(t, "a Warning Event OutOfpods on "+name, func() bool {
			evs, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			for _, ev := range evs.Items {
				if ev.InvolvedObject.Name == name && ev.Reason == ReasonOutOfPods && ev.Type == v1.EventTypeWarning && ev.Message == msg {
					return true
				}
			}
			return false
		})
	}
	const full = "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"

	// Three pods fill the node (p-0 is a job that finishes after 5 s); the fourth is rejected.
	create(0, "5s")
	create(1, "")
	create(2, "")
	for _, name := range []string{"p-0", "p-1", "p-2"} {
		poll(t, name+" Running", phaseIs(name, v1.PodRunning))
	}
	create(3, "")
	rejectedWith("p-3", full)
	if ph := get("p-0").Status.Phase; ph != v1.PodRunning {
		t.Fatalf("p-0 is %s when p-3 was rejected, want Running (the test's timing)", ph)
	}
	// A deleted pod frees its place (the fake clientset deletes at once).
	if err := pods.Delete(ctx, "p-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	create(4, "")
	poll(t, "p-4 Running in p-1's place", phaseIs("p-4", v1.PodRunning))
	create(5, "")
	rejectedWith("p-5", full)
	// The first rejection, and only it, is said with the setting that raises the limit.
	log.mu.Lock()
	var said []string
	for _, m := range log.infos {
		if strings.HasPrefix(m, "Pod rejected") {
			said = append(said, m)
		}
	}
	log.mu.Unlock()
	if len(said) != 1 || !strings.Contains(said[0], "Options.MaxPods (fleet: --max-pods)") {
		t.Errorf("rejections said at V(0): %q; want one, naming the setting that raises the limit", said)
	}
	// A pod that finished (Succeeded, its containers stopped) frees its place too.
	poll(t, "p-0 Succeeded", phaseIs("p-0", v1.PodSucceeded))
	create(6, "")
	poll(t, "p-6 Running in p-0's place", phaseIs("p-6", v1.PodRunning))
	for _, name := range []string{"p-2", "p-3", "p-4", "p-5", "p-6"} {
		want := map[bool]v1.PodPhase{true: v1.PodRunning, false: v1.PodFailed}[name != "p-3" && name != "p-5"]
		if ph := get(name).Status.Phase; ph != want {
			t.Errorf("%s is %s, want %s", name, ph, want)
		}
	}
	// A restarted agent leaves a rejected pod as it is: Failed is final, and the pod
	// never ran.
	stop()
	stop = startFake(t, cfg, cs)
	create(7, "")
	poll(t, "p-7 rejected by the restarted agent", phaseIs("p-7", v1.PodFailed))
	for _, name := range []string{"p-3", "p-5", "p-7"} {
		if p := get(name); p.Status.Reason != ReasonOutOfPods || p.Status.Message != "Pod was rejected: "+full || len(p.Status.ContainerStatuses) != 0 {
			t.Errorf("%s after a restart: reason %q, message %q, container statuses %+v", name, p.Status.Reason, p.Status.Message, p.Status.ContainerStatuses)
		}
	}
	// A rejected pod that is deleted is finished by the agent: a DELETE, as for any
	// terminated pod (the fake clientset's graceful deletion sets the timestamp only).
	p := get("p-3")
	now := metav1.Now()
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, new(int64)
	p.ResourceVersion = "1000" // the fake clientset keeps none; the Manager takes only newer copies
	if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "p-3 deleted by the agent", func() bool {
		_, err := pods.Get(ctx, "p-3", metav1.GetOptions{})
		return err != nil
	})
}

// Pods that wait for a node when the agent starts are admitted in order of creation, as
// the kubelet admits the pods it is given at once: on a full node the newest are
// rejected, whatever the order of their names (the order of the informer's first list).
func TestPodsWaitingAtStartAreAdmittedOldestFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Options
		node *v1.Node
	}{
		{"created node taken over, --max-pods 2", Options{Nodes: 1, MaxPods: 2}, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "fleet-node-0"}}},
		{"adopted node, allocatable 2", Options{ManageNodesWithAnnotationSelector: "kwok.x-k8s.io/node=fake"}, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "fleet-node-0", Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Status:     v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("2")}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				objs := []runtime.Object{tc.node}
				base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
				for i, name := range []string{"a", "b", "c", "d"} { // a is the newest
					objs = append(objs, &v1.Pod{
						ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name),
							CreationTimestamp: metav1.NewTime(base.Add(time.Duration(10-i) * time.Minute))},
						Spec: v1.PodSpec{NodeName: "fleet-node-0", Containers: []v1.Container{{Name: "app", Image: "app"}}},
					})
				}
				cs := fake.NewClientset(objs...)
				cfg := tc.cfg
				cfg.Profile, cfg.ProgressInterval = "fast", -1
				defer startFake(t, cfg, cs)()
				want := map[string]v1.PodPhase{"a": v1.PodFailed, "b": v1.PodFailed, "c": v1.PodRunning, "d": v1.PodRunning}
				poll(t, "c, d Running and a, b rejected", func() bool {
					for name, ph := range want {
						p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
						if err != nil || p.Status.Phase != ph {
							return false
						}
					}
					return true
				})
			})
		})
	}
}
