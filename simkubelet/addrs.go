package simkubelet

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/netip"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod CIDRs and node IPs the agent makes up (for the nodes it creates, and for adopted
// nodes without spec.podCIDR or an InternalIP) must not collide with those of other
// agents sharing the cluster, and no one coordinates the agents. Three things keep them
// apart:
//
//   - A node's own spec.podCIDR and InternalIP are always honoured (the cluster's node
//     IPAM, or the agent that created it, chose them).
//   - Before it creates or adopts anything, the agent lists every node of the cluster
//     and marks their pod CIDRs and InternalIPs used: an agent started after another
//     never hands out what the other's nodes carry.
//   - Each agent starts numbering at an offset hashed from what it manages (its node
//     name prefix and selection), not at 10.1.0.0/24 and 172.16.0.2: agents started at
//     the same moment, before either's nodes exist, get disjoint ranges unless their
//     ranges happen to overlap (two agents of 100 nodes: about 0.3% for pod CIDRs, in
//     65,280 /24s).
//
// Pod CIDRs come from 10.1.0.0 to 11.0.0.0 in blocks sized for MaxPods (podCIDR), the
// pool of the nodes without a pod CIDR (when Options.CIDR does not give it) is an aligned
// /14 of the same space (takeBlock), node IPs come from 172.16.0.2 to 172.31.255.254
// (nodeIP). The pool is the one thing other agents cannot see (it is on no node), so two
// agents adopting such nodes at once may pick the same /14; Options.CIDR per agent avoids
// it, and a Options.CIDR overlapping a node's pod CIDR is logged at error level.

// nodeIPSlots is how many node IPs nodeIP numbers before it wraps around.
const nodeIPSlots = 1<<20 - 3

// podCIDRSlots is how many pod CIDRs of prefix length bits podCIDR numbers before it wraps.
func podCIDRSlots(bits int) int {
	const base, end = 10<<24 | 1<<16, 11 << 24
	return (end - base) >> (32 - bits)
}

// addrSpace hands out synthesised pod CIDRs and node IPs, skipping those in use. Not
// safe for concurrent use: nodeSet.mu guards it.
type addrSpace struct {
	bits             int
	cidrBase, ipBase int
	cidrs, ips       map[int]bool   // slots in use
	nodeCIDRs        []netip.Prefix // the pod CIDRs of the cluster's nodes, as they are
}

func newAddrSpace(identity string, bits int) addrSpace {
	h := fnv.New64a()
	h.Write([]byte(identity))
	sum := h.Sum64()
	return addrSpace{
		bits:     bits,
		cidrBase: int(sum % uint64(podCIDRSlots(bits))),
		ipBase:   int((sum >> 32) % nodeIPSlots),
		cidrs:    map[int]bool{},
		ips:      map[int]bool{},
	}
}

// identity is what sets an agent's numbering offset: what it manages.
func (r *resolved) identity() string {
	return fmt.Sprintf("prefix=%s nodes=%t all=%t single=%s labels=%s annotations=%s", r.NodeNamePrefix, r.Nodes > 0,
		r.ManageAllNodes, r.ManageSingleNode, r.ManageNodesWithLabelSelector, r.ManageNodesWithAnnotationSelector)
}

func addrValue(a netip.Addr) int64 {
	b := a.As4()
	return int64(b[0])<<24 | int64(b[1])<<16 | int64(b[2])<<8 | int64(b[3])
}

// markNode marks n's pod CIDRs and InternalIPs used.
func (s *addrSpace) markNode(n *v1.Node) {
	cidrs := n.Spec.PodCIDRs
	if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
		cidrs = []string{n.Spec.PodCIDR}
	}
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err == nil {
			s.markPrefix(p)
			s.nodeCIDRs = append(s.nodeCIDRs, p.Masked())
		}
	}
	for _, addr := range n.Status.Addresses {
		if addr.Type != v1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(addr.Address); err == nil {
			s.markIP(ip)
		}
	}
}

// markPrefix marks the pod CIDR slots p overlaps, and reports whether any of them was
// marked already.
func (s *addrSpace) markPrefix(p netip.Prefix) (overlapped bool) {
	p = p.Masked()
	if !p.Addr().Is4() {
		return false
	}
	const base = 10<<24 | 1<<16
	lo := addrValue(p.Addr())
	hi := lo + 1<<(32-p.Bits()) - 1
	if hi < base {
		return false
	}
	size := int64(1) << (32 - s.bits)
	first, last := (max(lo, base)-base)/size, (hi-base)/size
	if first >= int64(podCIDRSlots(s.bits)) {
		return false
	}
	last = min(last, int64(podCIDRSlots(s.bits))-1)
	for i := first; i <= last; i++ {
		overlapped = overlapped || s.cidrs[int(i)]
		s.cidrs[int(i)] = true
	}
	return overlapped
}

// markIP marks ip used as a node IP, and the pod CIDR slot holding it (a real node whose
// address lies in the pod range must not share it with a pod).
func (s *addrSpace) markIP(ip netip.Addr) {
	if !ip.Is4() {
		return
	}
	s.markPrefix(netip.PrefixFrom(ip, 32))
	if i := addrValue(ip) - addrValue(netip.MustParseAddr("172.16.0.2")); i >= 0 && i < nodeIPSlots {
		s.ips[int(i)] = true
	}
}

// overlapsNodes reports whether p overlaps a pod CIDR of the cluster's nodes.
func (s *addrSpace) overlapsNodes(p netip.Prefix) bool {
	for _, q := range s.nodeCIDRs {
		if q.Overlaps(p) {
			return true
		}
	}
	return false
}

// takeCIDR returns the first free pod CIDR from the agent's offset plus from, marking it
// used. When every slot is used it returns the one at the offset (a collision is then
// unavoidable).
func (s *addrSpace) takeCIDR(from int) string {
	n := podCIDRSlots(s.bits)
	i := take(s.cidrs, (s.cidrBase+from)%n, n)
	return podCIDR(i, s.bits)
}

// takeBlock returns a free pod range of prefix length bits (wider than the pod CIDRs'
// slots), aligned, in 10.1.0.0 to 11.0.0.0, starting the search at the agent's offset,
// and marks all its slots used. A range no wider than a slot is one slot (takeCIDR).
// When no range is free it returns the one at the offset.
func (s *addrSpace) takeBlock(bits int) string {
	if bits >= s.bits {
		return s.takeCIDR(0)
	}
	const base = 10<<24 | 1<<16
	slotsPer := 1 << (s.bits - bits)
	size := int64(1) << (32 - s.bits)
	blockSize := int64(1) << (32 - bits)
	var starts []int // slot index of every aligned block inside the slot space
	for i := 0; i+slotsPer <= podCIDRSlots(s.bits); i++ {
		if (base+int64(i)*size)%blockSize == 0 {
			starts = append(starts, i)
			i += slotsPer - 1
		}
	}
	if len(starts) == 0 {
		return s.takeCIDR(0)
	}
	pick := starts[s.cidrBase%len(starts)]
	for k := range starts {
		start := starts[(s.cidrBase+k)%len(starts)]
		free := true
		for i := start; i < start+slotsPer && free; i++ {
			free = !s.cidrs[i]
		}
		if free {
			pick = start
			break
		}
	}
	for i := pick; i < pick+slotsPer; i++ {
		s.cidrs[i] = true
	}
	a := base + int64(pick)*size
	return fmt.Sprintf("%d.%d.%d.%d/%d", byte(a>>24), byte(a>>16), byte(a>>8), byte(a), bits)
}

// takeIP is takeCIDR for node IPs.
func (s *addrSpace) takeIP(from int) string {
	return nodeIP(take(s.ips, (s.ipBase+from)%nodeIPSlots, nodeIPSlots))
}

func take(used map[int]bool, start, n int) int {
	for k := range n {
		if i := (start + k) % n; !used[i] {
			used[i] = true
			return i
		}
	}
	return start
}

// markClusterNodes lists every node of the cluster and marks its addresses used, so that
// the agent never synthesises what another agent's (or the cluster's) nodes carry. A list
// that fails for good (a Role without "list nodes") is logged and the agent goes on
// without it. It returns the nodes listed, by name.
func (a *agent) markClusterNodes(ctx context.Context) map[string]*v1.Node {
	var list *v1.NodeList
	err := a.retry(ctx, "list nodes", func() error {
		var err error
		list, err = a.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			a.log.Error(err, "Cannot list the cluster's nodes; synthesised pod CIDRs and node IPs may collide with other nodes'")
		}
		return nil
	}
	byName := make(map[string]*v1.Node, len(list.Items))
	a.nodes.mu.Lock()
	defer a.nodes.mu.Unlock()
	for i := range list.Items {
		n := &list.Items[i]
		a.nodes.space.markNode(n)
		byName[n.Name] = n
	}
	return byName
}
