package vkstatus

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/status/statustest"
)

// srvPods serves the requests a Client makes from a statustest.Server: GET, PATCH of
// pods/status and the UID-preconditioned DELETE. Any other call panics (the embedded
// interface is nil), so a test notices a request it did not expect.
type srvPods struct {
	srv *statustest.Server
	ns  string
	corev1client.PodInterface
}

type srvGetter struct{ srv *statustest.Server }

func (g srvGetter) Pods(ns string) corev1client.PodInterface { return &srvPods{srv: g.srv, ns: ns} }

func (p *srvPods) Get(ctx context.Context, name string, _ metav1.GetOptions) (*v1.Pod, error) {
	return p.srv.GetPod(ctx, p.ns, name)
}

func (p *srvPods) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, _ metav1.PatchOptions, sub ...string) (*v1.Pod, error) {
	if pt != types.StrategicMergePatchType || len(sub) != 1 || sub[0] != "status" {
		return nil, apierrors.NewBadRequest("srvPods: only strategic-merge patches of pods/status")
	}
	return p.srv.PatchPodStatus(ctx, p.ns, name, data)
}

func (p *srvPods) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if opts.Preconditions == nil || opts.Preconditions.UID == nil {
		return apierrors.NewBadRequest("srvPods: DELETE without a UID precondition")
	}
	return p.srv.DeletePod(ctx, p.ns, name, *opts.Preconditions.UID)
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// world is a Client on a statustest.Server whose writes reach the Client's event
// handler, as the pod informer's watch would.
type world struct {
	srv *statustest.Server
	c   *Client
	clk *clocktesting.FakeClock
}

func newWorld(t *testing.T, opts Options, pods ...*v1.Pod) *world {
	t.Helper()
	srv := statustest.NewServer(pods...)
	clk := clocktesting.NewFakeClock(t0)
	opts.Status.Clock = clk
	seed := uint64(1)
	opts.Status.Retry.Seed = &seed
	c := New(srvGetter{srv}, opts)
	h := c.EventHandler()
	srv.OnWrite(func(e statustest.Event) {
		switch e.Type {
		case watch.Added:
			h.OnAdd(e.Pod, false)
		case watch.Modified:
			h.OnUpdate(nil, e.Pod)
		case watch.Deleted:
			h.OnDelete(e.Pod)
		}
	})
	for _, p := range pods {
		got, err := srv.Peek(p.Namespace, p.Name)
		if err != nil {
			t.Fatal(err)
		}
		h.OnAdd(got, true)
	}
	return &world{srv: srv, c: c, clk: clk}
}

// sync sends what is pending, bounded.
func (w *world) sync(t *testing.T) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return w.c.Manager().Sync(ctx)
}

func (w *world) peek(t *testing.T, name string) *v1.Pod {
	t.Helper()
	p, err := w.srv.Peek("ns", name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// gatedPod is a scheduled pod with one container and a readiness gate.
func gatedPod(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"),
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"owner": "team-a"}},
		Spec: v1.PodSpec{
			NodeName:       "vk-node",
			Containers:     []v1.Container{{Name: "app", Image: "nginx"}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: gate}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)},
		}},
	}
}

const gate v1.PodConditionType = "lb.example.com/registered"

// providerPod is what a typical provider hands to UpdateStatus: its copy of the pod with
// a hand-written status (Ready True at once, as virtual-kubelet's mock provider writes it).
func providerPod(p *v1.Pod) *v1.Pod {
	pp := p.DeepCopy()
	started := true
	pp.Status = v1.PodStatus{
		Phase: v1.PodRunning, PodIP: "10.0.0.5", PodIPs: []v1.PodIP{{IP: "10.0.0.5"}},
		StartTime: &metav1.Time{Time: t0},
		Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionTrue},
			{Type: v1.PodReady, Status: v1.ConditionTrue},
			{Type: v1.PodInitialized, Status: v1.ConditionTrue},
		},
		ContainerStatuses: []v1.ContainerStatus{{
			Name: "app", Image: "nginx", Ready: true, Started: &started, ContainerID: "vk://app",
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}},
		}},
	}
	return pp
}

func cond(p *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	var found *v1.PodCondition
	n := 0
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			n++
			if found == nil {
				found = &p.Status.Conditions[i]
			}
		}
	}
	if n > 1 {
		panic("two conditions of type " + string(t))
	}
	return found
}

func condStatus(p *v1.Pod, t v1.PodConditionType) v1.ConditionStatus {
	if c := cond(p, t); c != nil {
		return c.Status
	}
	return "<none>"
}
