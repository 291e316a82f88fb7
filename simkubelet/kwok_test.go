package simkubelet

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// A node made as KWOK users make them (the kwok.x-k8s.io/node=fake annotation, no pod
// CIDR, no capacity, no address) serves more pods than a /24 holds under KWOK's own
// command line, from the range --cidr gives (or one the agent picks), and is given the
// capacity of its pod addresses and an InternalIP. A node that declares its capacity
// keeps it.
func TestKWOKNodeServesMorePodsThanASlash24(t *testing.T) {
	for _, cidr := range []string{"", "192.168.0.0/22"} {
		t.Run("cidr="+cidr, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testKWOKNode(t, cidr) })
		})
	}
}

func testKWOKNode(t *testing.T, cidr string) {
	ctx := context.Background()
	const pods = 300
	kwok := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-node-0", Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}}
	declared := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "kwok-node-1", Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
		Status: v1.NodeStatus{Capacity: v1.ResourceList{v1.ResourcePods: resource.MustParse("5")},
			Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.9"}}},
	}
	cs := fake.NewClientset(kwok, declared)
	// NodeStatusUpdateFrequency 1 s: a node adopted after the node loops started is
	// reported at their next round, which must come well within poll's bound.
	defer startFake(t, Options{ManageNodesWithAnnotationSelector: "kwok.x-k8s.io/node=fake", CIDR: cidr, Profile: "fast", ProgressInterval: -1,
		NodeStatusUpdateFrequency: time.Second}, cs)()
	for i := range pods {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec:       v1.PodSpec{NodeName: kwok.Name, Containers: []v1.Container{{Name: "app", Image: "app"}}},
		}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var ips map[string]bool
	poll(t, fmt.Sprintf("%d pods Running with distinct pod IPs", pods), func() bool {
		list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		ips = map[string]bool{}
		for _, p := range list.Items {
			if p.Status.Phase != v1.PodRunning || p.Status.PodIP == "" {
				return false
			}
			ips[p.Status.PodIP] = true
		}
		return len(ips) == pods
	})
	if cidr != "" {
		want := netip.MustParsePrefix(cidr)
		for ip := range ips {
			if !want.Contains(netip.MustParseAddr(ip)) {
				t.Fatalf("pod IP %s outside --cidr %s", ip, cidr)
			}
		}
	}
	poll(t, "the KWOK node's capacity and InternalIP filled in", func() bool {
		n, err := cs.CoreV1().Nodes().Get(ctx, kwok.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		c, a := n.Status.Capacity[v1.ResourcePods], n.Status.Allocatable[v1.ResourcePods]
		internal := false
		for _, addr := range n.Status.Addresses {
			internal = internal || addr.Type == v1.NodeInternalIP && addr.Address != ""
		}
		return c.Value() >= pods && a.Value() == c.Value() && internal
	})
	poll(t, "the other node Ready", func() bool {
		n, err := cs.CoreV1().Nodes().Get(ctx, declared.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		_, c := findNodeCondition(n.Status.Conditions, v1.NodeReady)
		return c != nil && c.Status == v1.ConditionTrue
	})
	n, err := cs.CoreV1().Nodes().Get(ctx, declared.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := n.Status.Capacity[v1.ResourcePods]; c.Value() != 5 || len(n.Status.Addresses) != 1 {
		t.Errorf("a node that declares 5 pods and an address now has capacity %v, addresses %v", c.String(), n.Status.Addresses)
	}
}

func TestTakeBlockIsAlignedAndFree(t *testing.T) {
	s := newAddrSpace("x", 24)
	seen := map[string]bool{}
	for range 3 {
		b := s.takeBlock(14)
		p := netip.MustParsePrefix(b)
		if p.Masked() != p || p.Bits() != 14 || seen[b] {
			t.Fatalf("takeBlock(14) = %s (seen %v)", b, seen)
		}
		seen[b] = true
		if c := s.takeCIDR(0); p.Overlaps(netip.MustParsePrefix(c)) {
			t.Fatalf("takeCIDR gave %s inside the block %s", c, b)
		}
	}
}

// --cidr overlapping a node's pod CIDR is a misuse the agent detects: it says so at
// error level (the pods would share IPs with that node's).
func TestCIDROverlappingANodeIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		owner := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "real"}, Spec: v1.NodeSpec{PodCIDR: "192.168.1.0/24", PodCIDRs: []string{"192.168.1.0/24"}}}
		kwok := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-node-0", Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}}
		cs := fake.NewClientset(owner, kwok)
		var log errorLog
		defer startFake(t, Options{ManageNodesWithAnnotationSelector: "kwok.x-k8s.io/node=fake", CIDR: "192.168.0.0/22", ProgressInterval: -1, Logger: log.logger()}, cs)()
		poll(t, "an error line about the overlap", func() bool { return log.count("overlaps pod CIDRs") == 1 })
	})
}
