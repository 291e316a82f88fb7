package simkubelet

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// An agent that manages only the nodes of Options.Nodes keeps only their pods in its
// informer, listed or watched; with a node selection (nodes adopted later) it keeps every
// bound pod, as it cannot know which will be its own.
func TestOwnPodsOnly(t *testing.T) {
	for _, tc := range []struct {
		cfg  Options
		want bool
	}{
		{Options{Nodes: 2}, true},
		{Options{Nodes: 1}, true},
		{Options{Nodes: 2, ManageNodesWithLabelSelector: "a=b"}, false},
		{Options{ManageAllNodes: true}, false},
		{Options{Nodes: 3, ManageSingleNode: "n"}, false},
	} {
		r, err := tc.cfg.resolve(&rest.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.ownPodsOnly(); got != tc.want {
			t.Errorf("%+v: ownPodsOnly %t, want %t", tc.cfg, got, tc.want)
		}
	}
}

func TestOwnPodInformerKeepsOnlyTheAgentsPods(t *testing.T) {
	r, err := Options{Nodes: 2, NodeNamePrefix: "s0-node-"}.resolve(&rest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(r)
	for _, name := range []string{"s0-node-0", "s0-node-1"} {
		a.addNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, true)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := fake.NewClientset()
	create := func(name, node string) {
		t.Helper()
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID("uid-" + name)}, Spec: v1.PodSpec{NodeName: node}}
		if _, err := cs.CoreV1().Pods("ns").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Listed at start: one pod of each own node, one of another replica's node (whose name
	// the agent's prefix is a prefix of), one of a node no agent has.
	create("own-0", "s0-node-0")
	create("own-1", "s0-node-1")
	create("other-0", "s0-node-10")
	create("other-1", "s1-node-0")
	inf := a.newOwnPodInformer("spec.nodeName!=")(cs, 0)
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer never synced")
	}
	keys := func() []string {
		k := inf.GetStore().ListKeys()
		slices.Sort(k)
		return k
	}
	if got, want := keys(), []string{"ns/own-0", "ns/own-1"}; !slices.Equal(got, want) {
		t.Fatalf("listed: the informer holds %v, want %v", got, want)
	}
	// Watched: created and deleted later.
	create("other-2", "s1-node-1")
	create("own-2", "s0-node-1")
	if err := cs.CoreV1().Pods("ns").Delete(ctx, "own-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"ns/own-1", "ns/own-2"}
	for !slices.Equal(keys(), want) {
		select {
		case <-ctx.Done():
			t.Fatalf("watched: the informer holds %v, want %v", keys(), want)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
