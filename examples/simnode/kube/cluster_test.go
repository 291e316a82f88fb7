package kube

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/podstatus/podstatus/examples/simnode/sim"
)

// fakeClientset is a fake clientset that behaves as an API server where the simulation
// needs it to: it assigns UIDs, and deletes a pod gracefully (a deletionTimestamp) unless
// the grace period is 0.
func fakeClientset(objs ...runtime.Object) *fake.Clientset {
	cs := fake.NewClientset(objs...)
	// The fake clientset does not assign UIDs as a real API server does.
	n := 0
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n++
		a.(k8stesting.CreateAction).GetObject().(*v1.Pod).UID = types.UID(fmt.Sprintf("uid-%d", n))
		return false, nil, nil
	})
	// Nor does it delete gracefully: a real API server only marks a pod bound to a node
	// with a deletionTimestamp and leaves it to the node's agent to finish, with a DELETE
	// of grace period 0.
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		if g := d.GetDeleteOptions().GracePeriodSeconds; g != nil && *g == 0 {
			return false, nil, nil // the tracker deletes it
		}
		obj, err := cs.Tracker().Get(v1.SchemeGroupVersion.WithResource("pods"), d.GetNamespace(), d.GetName())
		if err != nil {
			return true, nil, err
		}
		p := obj.(*v1.Pod).DeepCopy()
		now := metav1.Now()
		p.DeletionTimestamp = &now
		p.Generation++ // a graceful deletion bumps the generation
		return true, nil, cs.Tracker().Update(v1.SchemeGroupVersion.WithResource("pods"), p, d.GetNamespace())
	})
	return cs
}

// TestRunAgainstFakeClientset runs the simulation through client-go (a fake clientset that
// applies strategic-merge patches like a server) and checks it ends as in memory. The run
// against a real kube-apiserver is in internal/upstream.
func TestRunAgainstFakeClientset(t *testing.T) {
	ctx := context.Background()
	c := New(fakeClientset())
	if err := c.Prepare(ctx, "simnode-1", "simnode-1"); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if err := c.Prepare(ctx, "simnode-1", "simnode-1"); err != nil {
		t.Fatalf("Prepare twice: %v", err)
	}
	rep, err := sim.Run(ctx, c, sim.Config{Seed: 1, Namespace: "simnode-1", Node: "simnode-1"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	mem, err := sim.Run(ctx, sim.NewMemory(), sim.Config{Seed: 1, Namespace: "simnode-1", Node: "simnode-1"})
	if err != nil {
		t.Fatalf("Run in memory: %v", err)
	}
	if len(rep.Summary.PerPod) != len(mem.Summary.PerPod) {
		t.Fatalf("%d pods, in memory %d", len(rep.Summary.PerPod), len(mem.Summary.PerPod))
	}
	for i, p := range rep.Summary.PerPod {
		if m := mem.Summary.PerPod[i]; p != m {
			t.Errorf("pod %d ends as %+v through client-go, %+v in memory", i, p, m)
		}
	}
	if rep.Summary.StatusChanges != mem.Summary.StatusChanges {
		t.Errorf("%d status changes through client-go, %d in memory", rep.Summary.StatusChanges, mem.Summary.StatusChanges)
	}
}
