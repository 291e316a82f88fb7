package simkubelet

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// Agents started independently against one cluster, at the same moment, never hand out
// the same pod IP or node IP: two that create their nodes, and two that adopt nodes
// without spec.podCIDR or an InternalIP (KWOK-style nodes), one pod per node.
func TestIndependentAgentsNeverSharePodOrNodeIPs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var objs []runtime.Object
		for _, p := range []string{"a", "b"} {
			for i := range 2 {
				objs = append(objs, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kwok-%s-%d", p, i), Labels: map[string]string{"pool": p}}})
			}
		}
		// Several informers share this fake's watch events, which NewClientset's objects
		// (with managedFields, which transformPod takes for a real server's private
		// decode) would let the agents intern in place: the simple fake's do not.
		cs := fake.NewSimpleClientset(objs...)
		var nodes []string
		for _, cfg := range []Options{
			{Nodes: 3, NodeNamePrefix: "a-"},
			{Nodes: 3, NodeNamePrefix: "b-"},
			{ManageNodesWithLabelSelector: "pool=a"},
			{ManageNodesWithLabelSelector: "pool=b"},
		} {
			cfg.Profile, cfg.ProgressInterval = "fast", -1
			defer startFake(t, cfg, cs)()
			for i := range cfg.Nodes {
				nodes = append(nodes, fmt.Sprintf("%s%d", cfg.NodeNamePrefix, i))
			}
		}
		for _, o := range objs {
			nodes = append(nodes, o.(*v1.Node).Name)
		}
		for _, n := range nodes {
			pod := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "on-" + n, UID: types.UID("uid-" + n)},
				Spec:       v1.PodSpec{NodeName: n, Containers: []v1.Container{{Name: "app", Image: "app"}}},
			}
			if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		var pods []v1.Pod
		poll(t, "every pod with a pod IP and a host IP", func() bool {
			list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			for _, p := range list.Items {
				if p.Status.PodIP == "" || p.Status.HostIP == "" {
					return false
				}
			}
			pods = list.Items
			return len(pods) == len(nodes)
		})
		podIPs, hostIPs := map[string]string{}, map[string]string{}
		for _, p := range pods {
			if other, dup := podIPs[p.Status.PodIP]; dup {
				t.Errorf("pods %s and %s share pod IP %s", other, p.Name, p.Status.PodIP)
			}
			podIPs[p.Status.PodIP] = p.Name
			if other, dup := hostIPs[p.Status.HostIP]; dup {
				t.Errorf("nodes of %s and %s share node IP %s", other, p.Name, p.Status.HostIP)
			}
			hostIPs[p.Status.HostIP] = p.Name
		}
	})
}

// An agent started after others reads the cluster's nodes first and never gives its nodes
// a pod CIDR or an InternalIP another node carries, even the very ones its numbering
// starts at.
func TestAgentSkipsAddressesOfExistingNodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		cfg := Options{Nodes: 2, NodeNamePrefix: "late-", Profile: "fast", ProgressInterval: -1}
		r, err := cfg.resolve(restConfigForTest())
		if err != nil {
			t.Fatal(err)
		}
		first := newAddrSpace(r.identity(), 24)
		taken := podCIDR(first.cidrBase, 24)
		// A wider CIDR covering the next slot, and the first two node IPs.
		wide := netip.MustParsePrefix(podCIDR(first.cidrBase+1, 24))
		wide = netip.PrefixFrom(wide.Addr(), 23).Masked()
		other := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "other"},
			Spec:       v1.NodeSpec{PodCIDR: taken, PodCIDRs: []string{taken}},
			Status: v1.NodeStatus{Addresses: []v1.NodeAddress{
				{Type: v1.NodeInternalIP, Address: nodeIP(first.ipBase)}, {Type: v1.NodeInternalIP, Address: nodeIP(first.ipBase + 1)}}},
		}
		wider := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "wider"}, Spec: v1.NodeSpec{PodCIDR: wide.String(), PodCIDRs: []string{wide.String()}}}
		cs := fake.NewClientset(other, wider)
		defer startFake(t, cfg, cs)()
		poll(t, "both nodes created", func() bool {
			l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err == nil && len(l.Items) == 4
		})
		used := []netip.Prefix{netip.MustParsePrefix(taken), wide}
		for i := range 2 {
			n, err := cs.CoreV1().Nodes().Get(ctx, fmt.Sprintf("late-%d", i), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p := netip.MustParsePrefix(n.Spec.PodCIDR)
			for _, u := range used {
				if p.Overlaps(u) {
					t.Errorf("node %s got pod CIDR %s, which overlaps %s of an existing node", n.Name, p, u)
				}
			}
			used = append(used, p)
			for _, a := range n.Status.Addresses {
				for _, b := range other.Status.Addresses {
					if a.Address == b.Address {
						t.Errorf("node %s got node IP %s of node other", n.Name, a.Address)
					}
				}
			}
		}
	})
}
