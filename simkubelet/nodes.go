package simkubelet

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podstatus/podstatus/podsim"
)

// KubeletVersion is the kubeletVersion the simulated nodes report.
const KubeletVersion = "v1.37.0"

// leaseNamespace is where the kubelet keeps node Leases (pkg/kubelet/nodelease).
const leaseNamespace = v1.NamespaceNodeLease

// nodeState is one managed node: its simulated network, its Lease and when its status
// was last reported. Only the node loops touch lease and lastReport.
type nodeState struct {
	name    string
	uid     types.UID
	created bool // created (or re-created) by this agent: it owns the whole status
	// fill is what the agent adds to the status of an adopted node that lacks it: the
	// InternalIP it synthesised, and capacity and allocatable when the node declares no
	// pod capacity (as KWOK's node-initialize stage fills them in).
	fill map[string]any
	sim  podsim.Node
	ipam *podsim.IPAM
	// labels are the node's labels when it was taken over, for Options.BindPods.
	labels map[string]string
	// admission holds the pods the node runs to the pod capacity it declares (the
	// kubelet's OutOfpods); a node that declares none is bounded by its pod addresses only.
	admission admission

	lease *coordinationv1.Lease
	// owner is the node's Lease ownership as the lease loop sees it (leaseowner.go).
	owner leaseOwner
	// report is what the node status loop knows of the node on the server (see
	// nodestatus.go); only that loop touches it after addNode.
	report nodeReport
}

// nodeSet is the set of managed nodes, read by the pod handlers.
type nodeSet struct {
	mu    sync.RWMutex
	nodes map[string]*nodeState
	next  int // index of the next synthesised CIDR / node IP of an adopted node
	space addrSpace
	// pool hands out the pod addresses of every node without a pod CIDR of its own,
	// from poolCIDR; made when the first such node is managed.
	pool     *podsim.IPAM
	poolCIDR string
}

// sharedPoolBits is the size of the pod address pool the agent picks for the nodes
// without a pod CIDR when Options.CIDR is not set: a /14, 262,141 pods across them.
const sharedPoolBits = 14

// sharedPool returns the pool of the nodes without a pod CIDR, making it from cidr (or a
// range the agent picks, see addrSpace) the first time; overlaps reports that cidr
// overlaps a pod CIDR in use (a node's, or one this agent handed out). The caller holds
// s.mu.
func (s *nodeSet) sharedPool(cidr string) (_ *podsim.IPAM, _ string, overlaps bool) {
	if s.pool == nil {
		if cidr == "" {
			cidr = s.space.takeBlock(sharedPoolBits)
		} else if p, err := netip.ParsePrefix(cidr); err == nil {
			overlaps = s.space.overlapsNodes(p)
			s.space.markPrefix(p)
		}
		pool, err := podsim.NewIPAM(cidr)
		if err != nil { // Options.CIDR was validated; a block the agent picks is valid
			panic(fmt.Sprintf("simkubelet: pod address pool %s: %v", cidr, err))
		}
		s.pool, s.poolCIDR = pool, cidr
	}
	return s.pool, s.poolCIDR, overlaps
}

func (s *nodeSet) get(name string) *nodeState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nodes[name]
}

func (s *nodeSet) list() []*nodeState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*nodeState, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, n)
	}
	return out
}

func (s *nodeSet) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.nodes)
}

// maxMaxPods is the largest Options.MaxPods: a /12 per node.
const maxMaxPods = 1<<20 - 3

// podCIDRBits is the prefix length of a pod CIDR with room for maxPods pods: a /24 (as
// the controller manager's default node CIDR mask) or larger.
func podCIDRBits(maxPods int) int {
	bits := 24
	for bits > 12 && 1<<(32-bits)-3 < maxPods { // podsim keeps the network, gateway and broadcast addresses
		bits--
	}
	return bits
}

// podCIDR is the i-th node's pod CIDR with the given prefix length: the i-th block of that
// size from 10.1.0.0 (for a /24, 10.<1+i/256>.<i%256>.0/24), distinct for as many nodes as
// fit below 11.0.0.0 (65,280 /24s, 255 /16s) and wrapping around after that.
func podCIDR(i, bits int) string {
	const base, end = 10<<24 | 1<<16, 11 << 24
	size := uint32(1) << (32 - bits)
	v := base + uint32(i)%((end-base)/size)*size
	return fmt.Sprintf("%d.%d.%d.%d/%d", byte(v>>24), byte(v>>16), byte(v>>8), byte(v), bits)
}

// nodeIP is the i-th node IP: 172.16.0.2 + i, wrapping around after nodeIPSlots.
func nodeIP(i int) string {
	a := netip.MustParseAddr("172.16.0.2").As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(i % nodeIPSlots)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
}

// newNode is the Node the agent creates, with the status a kubelet registers.
func (a *agent) newNode(name, cidr, ip string) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				v1.LabelHostname:   name,
				v1.LabelOSStable:   "linux",
				v1.LabelArchStable: runtime.GOARCH,
				"type":             "fleet",
			},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
		},
		Spec: v1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
	}
	n.Status = nodeStatus(name, ip, a.cfg.MaxPods, metav1.NewTime(a.cfg.Clock.Now()))
	return n
}

// nodeResources is the capacity (and allocatable) of a simulated node with room for
// maxPods pods.
func nodeResources(maxPods int) v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("32"),
		v1.ResourceMemory:           resource.MustParse("256Gi"),
		v1.ResourcePods:             *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
		v1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
}

// podAddresses is how many pod addresses podsim.IPAM hands out from cidr, at most
// maxMaxPods.
func podAddresses(cidr string) int {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return 0
	}
	host := p.Addr().BitLen() - p.Bits()
	if host > 21 {
		return maxMaxPods
	}
	n := 1<<host - 2 // the network address and the gateway
	if p.Addr().Is4() {
		n-- // the broadcast address
	}
	return min(max(n, 0), maxMaxPods)
}

// nodeStatus is the full status of a node the agent created.
func nodeStatus(name, ip string, maxPods int, now metav1.Time) v1.NodeStatus {
	res := nodeResources(maxPods)
	return v1.NodeStatus{
		Capacity:    res,
		Allocatable: res.DeepCopy(),
		Phase:       v1.NodeRunning,
		Conditions:  kubeletConditions(nil, now),
		Addresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: ip},
			{Type: v1.NodeHostName, Address: name},
		},
		DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: 10250}},
		NodeInfo: v1.NodeSystemInfo{
			MachineID:               name,
			SystemUUID:              name,
			BootID:                  name,
			KernelVersion:           "6.8.0-podstatus-fleet",
			OSImage:                 "podstatus fleet (simulated)",
			ContainerRuntimeVersion: "podsim://v1.37.0",
			KubeletVersion:          KubeletVersion,
			OperatingSystem:         "linux",
			Architecture:            runtime.GOARCH,
		},
	}
}

// ensureNodes creates the configured nodes, retrying until ctx is done. A node that
// already exists (an earlier run) is taken over as it is. A node the API server rejects
// (see rejected) is left out, logged at error level; when every node is rejected and no
// selection can bring others, ensureNodes returns the first rejection.
func (a *agent) ensureNodes(ctx context.Context, existing map[string]*v1.Node) error {
	// Addresses first, in node order, so that node i gets the i-th free ones whatever
	// order the creations finish in. A node that exists already keeps its own.
	type plan struct{ cidr, ip string }
	plans := make([]plan, a.cfg.Nodes)
	a.nodes.mu.Lock()
	for i := range plans {
		if existing[fmt.Sprintf("%s%d", a.cfg.NodeNamePrefix, i)] != nil {
			continue
		}
		plans[i].cidr = a.nodes.space.takeCIDR(i)
		plans[i].ip = cmp.Or(a.cfg.NodeIP, a.nodes.space.takeIP(i))
	}
	a.nodes.mu.Unlock()
	limit := make(chan struct{}, 16)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		firstErr  error
		nRejected int
	)
	for i := range a.cfg.Nodes {
		name := fmt.Sprintf("%s%d", a.cfg.NodeNamePrefix, i)
		wg.Add(1)
		limit <- struct{}{}
		go func() {
			defer func() { <-limit; wg.Done() }()
			var got *v1.Node
			err := a.retry(ctx, "create node "+name, func() error {
				if plans[i].cidr == "" { // it existed at the start: take it over
					n, err := a.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
					if !apierrors.IsNotFound(err) {
						got = n
						return err
					}
					a.nodes.mu.Lock()
					plans[i].cidr = a.nodes.space.takeCIDR(i)
					plans[i].ip = cmp.Or(a.cfg.NodeIP, a.nodes.space.takeIP(i))
					a.nodes.mu.Unlock()
				}
				n, err := a.cs.CoreV1().Nodes().Create(ctx, a.newNode(name, plans[i].cidr, plans[i].ip), metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) {
					n, err = a.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
				}
				got = n
				return err
			})
			if err == nil && got != nil {
				a.addNode(got, true)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if ctx.Err() == nil {
				nRejected++
				if firstErr == nil {
					firstErr = err
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if nRejected > 0 && nRejected == a.cfg.Nodes && !a.cfg.adoptNodes {
		return fmt.Errorf("simkubelet: the API server rejected every node: %w", firstErr)
	}
	return nil
}

// addNode starts managing n (idempotent). Its spec.podCIDR and InternalIPs are honoured;
// what it lacks is synthesised (see addrSpace).
func (a *agent) addNode(n *v1.Node, created bool) {
	a.nodes.mu.Lock()
	if _, ok := a.nodes.nodes[n.Name]; ok {
		a.nodes.mu.Unlock()
		return
	}
	a.nodes.space.markNode(n)
	idx := -1
	slot := func() int { // the node's slot for synthesised addresses, after the created nodes'
		if idx < 0 {
			idx = a.cfg.Nodes + a.nodes.next
			a.nodes.next++
		}
		return idx
	}
	// Pod addresses: the node's own pod CIDR, else the pool shared by the nodes without
	// one (Options.CIDR, KWOK's --cidr, or a range the agent picks).
	cidr := n.Spec.PodCIDR
	var ipam *podsim.IPAM
	if cidr != "" {
		var err error
		if ipam, err = podsim.NewIPAM(cidr); err != nil {
			a.log.Error(err, "Node has an unusable pod CIDR; using the shared pod address pool", "node", n.Name, "podCIDR", cidr)
		}
	}
	if ipam == nil {
		var overlaps bool
		ipam, cidr, overlaps = a.nodes.sharedPool(a.cfg.CIDR)
		if overlaps {
			a.log.Error(nil, "The pod address range overlaps pod CIDRs of the cluster's nodes: pods may share IPs with theirs", "cidr", cidr)
		}
	}
	ns := &nodeState{name: n.Name, uid: n.UID, created: created, ipam: ipam, labels: n.Labels}
	var ips []string
	for _, addr := range n.Status.Addresses {
		if addr.Type == v1.NodeInternalIP {
			ips = append(ips, addr.Address)
		}
	}
	if len(ips) == 0 {
		ips = []string{cmp.Or(a.cfg.NodeIP, a.nodes.space.takeIP(slot()))}
		if !created {
			// On the server, so that agents started later see it taken.
			ns.fill = map[string]any{"addresses": []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: ips[0]}, {Type: v1.NodeHostName, Address: n.Name}}}
		}
	}
	ns.sim = podsim.Node{Name: n.Name, HostIPs: ips}
	if created {
		ns.admission.bounded, ns.admission.capacity = true, int64(a.cfg.MaxPods)
	} else if pods, declared := declaredPods(n); declared {
		ns.admission.bounded, ns.admission.capacity = true, pods
	} else {
		// A node that declares no pod capacity (a KWOK user's node) holds as many pods
		// as it has pod addresses; the kubelet's OutOfpods needs a declared capacity.
		res := nodeResources(podAddresses(cidr))
		for k := range n.Status.Capacity {
			delete(res, k) // what the node declares stays
		}
		if ns.fill == nil {
			ns.fill = map[string]any{}
		}
		ns.fill["capacity"], ns.fill["allocatable"] = res, res
	}
	ns.report.observe(n)
	a.nodes.nodes[n.Name] = ns
	a.nodes.mu.Unlock()
	a.log.V(1).Info("Managing node", "node", n.Name, "created", created, "podCIDR", cidr, "hostIPs", ips)
	a.nodeAdded(n.Name)
}

func findNodeCondition(cs []v1.NodeCondition, t v1.NodeConditionType) (int, *v1.NodeCondition) {
	for i := range cs {
		if cs[i].Type == t {
			return i, &cs[i]
		}
	}
	return -1, nil
}

// updateLease PUTs a Lease the agent holds: through the leaseWriter when Run made one,
// else through the clientset.
func (a *agent) updateLease(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if a.leases != nil {
		return a.leases.update(ctx, l)
	}
	return a.cs.CoordinationV1().Leases(leaseNamespace).Update(ctx, l, metav1.UpdateOptions{})
}

// nodeLoop runs fn for every managed node every interval (and once at once), with at most
// 16 requests in flight: one ticker for all nodes, not a goroutine per node. Failures are
// retried at the next round, as the kubelet retries its Lease and node status; each round
// with failures logs one error line (how many nodes failed, and the first error), not one
// per node: at 10,000 nodes and a server that is down, a line per node would drown the log.
func (a *agent) nodeLoop(ctx context.Context, what string, interval time.Duration, fn func(context.Context, *nodeState) error) {
	t := a.cfg.Clock.NewTicker(interval)
	defer t.Stop()
	for {
		a.forEachNode(ctx, what, fn)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

func (a *agent) forEachNode(ctx context.Context, what string, fn func(context.Context, *nodeState) error) {
	limit := make(chan struct{}, 16)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failed   int
		firstErr error
	)
	nodes := a.nodes.list()
	for _, n := range nodes {
		if ctx.Err() != nil {
			break
		}
		limit <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-limit; wg.Done() }()
			if err := fn(ctx, n); err != nil && ctx.Err() == nil {
				mu.Lock()
				failed++
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failed > 0 {
		a.counts.errors.Add(int64(failed))
		a.log.Error(firstErr, "Node requests failed; retrying at the next round", "what", what, "failed", failed, "nodes", len(nodes), "rejected", rejected(firstErr))
	}
}
