package simkubelet

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/podstatus/podstatus/podstate"
)

func TestStatusOnlyUpdatesAreObservedNotStepped(t *testing.T) {
	synctest.Test(t, testStatusOnlyUpdatesAreObservedNotStepped)
}

// A copy of a pod that differs from the one before it in its status alone (the watch
// event of the agent's own PATCH, another controller's readiness-gate condition) reaches
// the status Manager (ObservePod: the gate makes the pod Ready) without stepping the pod;
// a copy whose metadata changed is stepped.
func testStatusOnlyUpdatesAreObservedNotStepped(t *testing.T) {
	const gate = v1.PodConditionType("example.com/gate")
	cs := fake.NewClientset()
	tr := &rvTracker{ObjectTracker: cs.Tracker()}
	cs.PrependReactor("*", "*", clienttesting.ObjectReaction(tr))
	var steps atomic.Int64
	stop := startFake(t, Options{Nodes: 1, Profile: "fast", ProgressInterval: -1,
		OnStatus: func(*v1.Pod, podstate.Input, v1.PodStatus) { steps.Add(1) }}, cs)
	defer stop()
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: v1.PodSpec{NodeName: DefaultNodeNamePrefix + "0", Containers: []v1.Container{{Name: "app", Image: "app"}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: gate}}},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// ready reads the server's copy into cur and its ContainersReady and Ready statuses.
	var cur *v1.Pod
	ready := func() (containers, pod v1.ConditionStatus) {
		p, err := pods.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return "", ""
		}
		cur = p
		for _, c := range p.Status.Conditions {
			switch c.Type {
			case v1.ContainersReady:
				containers = c.Status
			case v1.PodReady:
				pod = c.Status
			}
		}
		return containers, pod
	}
	poll(t, "the pod's containers ready, the pod not (its gate is unset)", func() bool {
		c, r := ready()
		return c == v1.ConditionTrue && r == v1.ConditionFalse
	})
	synctest.Wait()
	before := steps.Load()

	// Another controller sets the gate: a status-only change, as is the agent's PATCH of
	// Ready that follows it.
	p := cur.DeepCopy()
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: gate, Status: v1.ConditionTrue})
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the pod Ready once its gate is True", func() bool {
		_, r := ready()
		return r == v1.ConditionTrue
	})
	synctest.Wait()
	if got := steps.Load(); got != before {
		t.Errorf("status-only updates stepped the pod %d times, want 0", got-before)
	}

	// A label is the pod's worker's business: the pod is stepped.
	p = cur.DeepCopy()
	p.Labels = map[string]string{"tier": "web"}
	if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "a step after a label change", func() bool { return steps.Load() > before })
}

// rvTracker is a fake clientset's object tracker that gives every object it stores a new
// resourceVersion, as an API server does (the fake's own leaves it as the writer sent
// it).
type rvTracker struct {
	clienttesting.ObjectTracker
	rv atomic.Int64
}

func (t *rvTracker) stamp(obj runtime.Object) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(strconv.FormatInt(t.rv.Add(1), 10))
	}
}

func (t *rvTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	t.stamp(obj)
	return t.ObjectTracker.Create(gvr, obj, ns, opts...)
}

func (t *rvTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	t.stamp(obj)
	return t.ObjectTracker.Update(gvr, obj, ns, opts...)
}

func (t *rvTracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	t.stamp(obj)
	return t.ObjectTracker.Patch(gvr, obj, ns, opts...)
}

// podChanged is the kubelet's podsDifferSemantically plus the generation, with the spec
// compared through the generation where there is one.
func TestPodChanged(t *testing.T) {
	base := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u", ResourceVersion: "1", Generation: 1,
			Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"b": "2"}},
		Spec:   v1.PodSpec{NodeName: "n", Containers: []v1.Container{{Name: "c", Image: "i"}}},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	now := metav1.Now()
	grace := int64(30)
	for _, tc := range []struct {
		name   string
		change func(old, cur *v1.Pod)
		want   bool
	}{
		{"nothing", func(_, _ *v1.Pod) {}, false},
		{"status and resourceVersion", func(_, p *v1.Pod) {
			p.ResourceVersion = "2"
			p.Status.Phase = v1.PodRunning
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
		}, false},
		{"managedFields", func(_, p *v1.Pod) { p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}} }, false},
		{"empty labels for none", func(old, cur *v1.Pod) { old.Labels, cur.Labels = map[string]string{}, nil }, false},
		{"a label", func(_, p *v1.Pod) { p.Labels = map[string]string{"a": "2"} }, true},
		{"an annotation", func(_, p *v1.Pod) { p.Annotations = map[string]string{"b": "2", "c": "3"} }, true},
		{"the generation", func(_, p *v1.Pod) { p.Generation = 2 }, true},
		{"deletionTimestamp", func(_, p *v1.Pod) { p.DeletionTimestamp = &now }, true},
		{"deletionGracePeriodSeconds", func(_, p *v1.Pod) { p.DeletionGracePeriodSeconds = &grace }, true},
		{"the spec and its generation", func(_, p *v1.Pod) { p.Spec.Containers[0].Image = "j"; p.Generation = 2 }, true},
		// Where the API server keeps a generation, it follows the spec: the spec itself is
		// not compared.
		{"the spec alone, generation kept", func(_, p *v1.Pod) { p.Spec.Containers[0].Image = "j" }, false},
		{"the spec, no generation kept", func(old, cur *v1.Pod) {
			old.Generation, cur.Generation = 0, 0
			cur.Spec.Containers[0].Image = "j"
		}, true},
		{"nothing, no generation kept", func(old, cur *v1.Pod) { old.Generation, cur.Generation = 0, 0 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := base.DeepCopy()
			cur := base.DeepCopy()
			tc.change(old, cur)
			if got := podChanged(old, cur); got != tc.want {
				t.Errorf("podChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
