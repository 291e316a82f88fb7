package simkubelet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Two agents (or an agent and a kubelet, or KWOK) that run the same node both renew its
// Lease and write its status and its pods' statuses: a node with two kubelets. The agent
// marks the Lease of every node it runs with its Identity and a token of its run, and
// reads them back:
//
//   - On taking a node (the first renewal of its Lease in this run), a Lease still live
//     (renewTime + leaseDurationSeconds not past) that another Identity renews, or that
//     carries no agent mark (a kubelet, KWOK, an agent older than the mark), means the node
//     is run by someone else: Run returns a *NodeHeldError for a node of Options.Nodes;
//     an adopted node is left alone (no Lease, no status; logged at error level and
//     counted), and taken when its Lease expires. A Lease of the same Identity is the
//     agent's own from before a restart (killed, or its process replaced): it is taken at
//     once, as a restarted kubelet does (TestKilledAgentAdoptsItsPods). An expired Lease
//     is taken whoever held it.
//   - While running, a renewal refused because the Lease changed (409) and a Lease whose
//     renewal is not the agent's (another run's token, or a renewTime it did not write)
//     means another writer. The agent logs it and counts it
//     (podstatus_fleet_node_lease_conflicts_total), renews over it once (a killed agent's
//     last request can land after its successor's first), and gives the node up
//     (stops renewing the Lease and writing the status, taken again once the Lease
//     expires) if it meets the same writer again within a lease duration: of two agents
//     renewing one Lease, the one that conflicts twice first gives way, and the other
//     stops conflicting, so they do not flap.
//
// Why the Identity and not the holderIdentity: the kubelet writes its node's name there
// (pkg/kubelet/nodelease), which other tools read; the mark is two annotations beside
// it. Why an Identity that outlives the process (the host name by default, stable for a
// StatefulSet's pod) and not the run's token alone: a restarted agent must take its nodes
// at once, while its previous run's Lease is still live; the token alone would make it
// wait a lease duration. The cost: two processes with the same Identity (two agents on
// one host without Options.Identity) are not refused at start, only caught while running.
const (
	// LeaseAnnotationAgent is the annotation of a node Lease naming the Identity of the
	// agent that renews it.
	LeaseAnnotationAgent = "sim.podstatus.io/agent"
	// LeaseAnnotationAgentRun is the annotation of a node Lease naming the run of that
	// agent (a random token per Run).
	LeaseAnnotationAgentRun = "sim.podstatus.io/agent-run"
)

// NodeHeldError is a node whose Lease another agent or kubelet renews: Run returns one
// (wrapped) when a node of Options.Nodes is held at start.
type NodeHeldError struct {
	// Node is the node's name.
	Node string
	// Holder is the other agent's Identity, or the Lease's holderIdentity when it
	// carries no agent mark (a kubelet or another simulator).
	Holder string
	// Agent says Holder is an agent's Identity; Run is then the token of its run when
	// the agent met it while running (another run of its own Identity).
	Agent bool
	Run   string
	// RenewedAgo is how long before the check the Lease was renewed, and
	// LeaseDuration its leaseDurationSeconds.
	RenewedAgo, LeaseDuration time.Duration
}

func (e *NodeHeldError) Error() string {
	who := fmt.Sprintf("another simulated kubelet, Identity %q", e.Holder)
	if e.Run != "" {
		who += " (run " + e.Run + ")"
	}
	if !e.Agent {
		who = fmt.Sprintf("a kubelet or another simulator (Lease holderIdentity %q, no %s annotation)", e.Holder, LeaseAnnotationAgent)
	}
	return fmt.Sprintf("node %s is run by %s: its Lease was renewed %v ago (lease duration %v); stop that one, "+
		"give this one other nodes, or (if it is this agent restarted elsewhere) the same Identity",
		e.Node, who, e.RenewedAgo.Round(time.Millisecond), e.LeaseDuration)
}

// leaseOwner is one node's Lease ownership. Only the lease loop writes it, but for held,
// which the node status loop reads.
type leaseOwner struct {
	claimed bool // the agent has renewed the Lease in this run
	// renewals are the renewTimes the agent last sent and last had accepted: a Lease
	// that shows another was renewed by someone else.
	sent, acked metav1.MicroTime
	// rival is the other writer met last, and when: met again within a lease duration,
	// the agent gives the node up.
	rival   string
	rivalAt time.Time
	held    atomic.Pointer[NodeHeldError] // non-nil: given up to another
}

// owns reports whether the agent writes n's Lease and status (it has not given the node
// up to another writer).
func (a *agent) owns(n *nodeState) bool { return n.owner.held.Load() == nil }

// defaultIdentity is Options.Identity's default: the host name.
func defaultIdentity() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "simkubelet"
}

// newRunToken is a random token naming one Run.
func newRunToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// holderOf reads l's holder: the agent's Identity and run when it carries the mark, else
// its holderIdentity; and how long ago it was renewed and whether it is still live at now.
func holderOf(l *coordinationv1.Lease, now time.Time) (holder, run string, agent bool, ago, duration time.Duration, live bool) {
	holder, agent = l.Annotations[LeaseAnnotationAgent]
	run = l.Annotations[LeaseAnnotationAgentRun]
	if !agent {
		holder = ptr.Deref(l.Spec.HolderIdentity, "")
	}
	if l.Spec.LeaseDurationSeconds != nil {
		duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if l.Spec.RenewTime == nil {
		return holder, run, agent, 0, duration, false
	}
	ago = now.Sub(l.Spec.RenewTime.Time)
	return holder, run, agent, ago, duration, ago < duration
}

// mark sets the agent's holder fields on l: the kubelet's (holderIdentity, the node's
// name; leaseDurationSeconds) and the agent's mark.
func (a *agent) mark(l *coordinationv1.Lease, renew metav1.MicroTime) {
	l.Spec.HolderIdentity = ptr.To(l.Name)
	l.Spec.LeaseDurationSeconds = ptr.To(a.cfg.NodeLeaseDurationSeconds)
	l.Spec.RenewTime = &renew
	if l.Annotations[LeaseAnnotationAgent] != a.cfg.Identity || l.Annotations[LeaseAnnotationAgentRun] != a.runToken {
		ann := make(map[string]string, len(l.Annotations)+2)
		for k, v := range l.Annotations {
			ann[k] = v
		}
		ann[LeaseAnnotationAgent], ann[LeaseAnnotationAgentRun] = a.cfg.Identity, a.runToken
		l.Annotations = ann
	}
}

// renewLease renews a node's Lease, as pkg/kubelet/nodelease does (update the cached Lease
// with a new renewTime; on any error, GET it, or create it on a 404, on the next round),
// and checks that nobody else renews it (see LeaseAnnotationAgent). It returns the
// request's error, or a *NodeHeldError the round the agent finds the node held.
func (a *agent) renewLease(ctx context.Context, n *nodeState) error {
	o := &n.owner
	now := a.cfg.Clock.Now()
	renew := metav1.NewMicroTime(now.Truncate(time.Microsecond)) // as the server stores it
	every := time.Duration(a.cfg.NodeLeaseDurationSeconds) * time.Second / 4
	if n.lease != nil && now.Sub(o.acked.Time) < every/2 {
		return nil // claimed moments ago (claimNodes, just before the lease loop's first round)
	}
	if n.lease != nil {
		l := n.lease.DeepCopy()
		l.Spec.RenewTime = &renew
		o.sent = renew
		got, err := a.updateLease(ctx, l)
		if err == nil {
			n.lease, o.acked = got, renew
			a.counts.leaseRenewals.Add(1)
			return nil
		}
		// A conflict (someone else wrote it) or a Lease deleted: GET it again now.
		a.log.V(1).Info("Lease update failed; will get or create it", "node", n.name, "err", err)
		n.lease = nil
	}
	got, err := a.cs.CoordinationV1().Leases(leaseNamespace).Get(ctx, n.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: leaseNamespace}}
		a.mark(l, renew)
		if n.uid != "" {
			l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.name, UID: n.uid}}
		}
		o.sent = renew
		got, err = a.cs.CoordinationV1().Leases(leaseNamespace).Create(ctx, l, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create lease %s: %w", n.name, err)
		}
	case err != nil:
		return fmt.Errorf("get lease %s: %w", n.name, err)
	default:
		if held := a.checkHolder(n, got, now); held != nil {
			return a.giveUp(n, held)
		}
		if prev := o.held.Load(); prev != nil {
			a.log.Info("Taking the node back: the other writer's Lease expired", "node", n.name, "other", prev.Holder)
			o.held.Store(nil)
		}
		l := got.DeepCopy()
		a.mark(l, renew)
		o.sent = renew
		if got, err = a.updateLease(ctx, l); err != nil {
			return fmt.Errorf("update lease %s: %w", n.name, err)
		}
	}
	n.lease, o.acked, o.claimed = got, renew, true
	a.counts.leaseRenewals.Add(1)
	return nil
}

// checkHolder returns the other writer that l, n's Lease as read at now, shows, if the
// agent must leave the node to it: see LeaseAnnotationAgent.
func (a *agent) checkHolder(n *nodeState, l *coordinationv1.Lease, now time.Time) *NodeHeldError {
	o := &n.owner
	holder, run, agent, ago, duration, live := holderOf(l, now)
	if !live {
		return nil
	}
	held := &NodeHeldError{Node: n.name, Holder: holder, Agent: agent, RenewedAgo: ago, LeaseDuration: duration}
	if !o.claimed {
		if agent && holder == a.cfg.Identity {
			return nil // this agent before a restart
		}
		return held
	}
	ours := run == a.runToken && l.Spec.RenewTime != nil && (l.Spec.RenewTime.Equal(&o.sent) || l.Spec.RenewTime.Equal(&o.acked))
	if ours {
		return nil // a renewal of ours that landed though its answer was lost
	}
	if held.Agent {
		held.Run = run
	}
	a.nodeCounts.conflicts.Add(1)
	rival := held.Holder + "/" + held.Run
	again := o.rival == rival && now.Sub(o.rivalAt) < duration
	o.rival, o.rivalAt = rival, now
	if !again {
		a.log.Error(nil, "Another writer renews the Lease of a node this agent runs; renewing over it once",
			"node", n.name, "other", held.Holder, "otherRun", held.Run, "otherIsAgent", held.Agent, "renewedAgo", ago)
		return nil
	}
	return held
}

// giveUp records that n is held by another writer: the agent stops renewing its Lease and
// writing its status, logs it (once) and returns it.
func (a *agent) giveUp(n *nodeState, held *NodeHeldError) error {
	if prev := n.owner.held.Swap(held); prev != nil && prev.Holder == held.Holder && prev.Run == held.Run {
		return nil // known: logged when it began
	}
	if !n.owner.claimed {
		a.nodeCounts.conflicts.Add(1)
	}
	if n.owner.claimed || !n.created { // a node of Options.Nodes refused at start: Run says it
		a.log.Error(held, "Leaving the node to another writer: no Lease renewal or node status from this agent until its Lease expires",
			"node", n.name, "other", held.Holder, "otherRun", held.Run)
	}
	return held
}

// claimNodes takes the Leases of the nodes of Options.Nodes before the agent serves them,
// and returns an error naming the nodes another agent or kubelet holds (the first one's
// *NodeHeldError wrapped), or ctx's error. Other failures are left to the lease loop.
func (a *agent) claimNodes(ctx context.Context) error {
	var (
		mu   sync.Mutex
		held []*NodeHeldError
	)
	a.forEachNode(ctx, "node lease", func(ctx context.Context, n *nodeState) error {
		err := a.renewLease(ctx, n)
		if h, ok := errors.AsType[*NodeHeldError](err); ok {
			mu.Lock()
			held = append(held, h)
			mu.Unlock()
			return nil
		}
		return err
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(held) == 0 {
		return nil
	}
	names := make([]string, 0, 3)
	for _, h := range held[:min(3, len(held))] {
		names = append(names, h.Node)
	}
	more := ""
	if len(held) > len(names) {
		more = fmt.Sprintf(" and %d more", len(held)-len(names))
	}
	return fmt.Errorf("simkubelet: %d node(s) to create are run by another agent or kubelet (%v%s): %w", len(held), names, more, held[0])
}
