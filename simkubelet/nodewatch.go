package simkubelet

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// nodeCounters are the agent's counts about its nodes.
type nodeCounters struct {
	// repairs counts node statuses sent because the server's copy differed from what
	// the agent owns (the node-lifecycle controller's Unknown, mostly) before the report
	// was due.
	repairs atomic.Int64
	// conflicts counts the times the agent found another agent (or kubelet) renewing
	// the Lease of a node it runs (see leaseowner.go).
	conflicts atomic.Int64
}

// nodeListOptions is the node informer's selection: the one node the agent runs when
// there is one (by name), the nodes a label selector adopts when the agent creates none,
// every node otherwise (transformNode then keeps only a stub of the nodes the agent will
// never run).
func (r *resolved) nodeListOptions(o *metav1.ListOptions) {
	switch {
	case r.Nodes == 0 && r.ManageSingleNode != "":
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", r.ManageSingleNode).String()
	case r.Nodes == 1 && !r.adoptNodes:
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", r.NodeNamePrefix+"0").String()
	case r.Nodes == 0 && r.labelSel != nil:
		o.LabelSelector = r.labelSel.String()
	}
}

// createsNode reports whether name is one of the nodes of Options.Nodes.
func (r *resolved) createsNode(name string) bool {
	num, ok := strings.CutPrefix(name, r.NodeNamePrefix)
	if !ok || num == "" || (len(num) > 1 && num[0] == '0') {
		return false
	}
	i, err := strconv.Atoi(num)
	return err == nil && i >= 0 && i < r.Nodes
}

// transformNode is the node informer's transform: managedFields go, and a node the agent
// neither creates nor may adopt is reduced to its name and version (an informer over
// every node of a large cluster then costs a few hundred bytes per node that is not the
// agent's).
func (a *agent) transformNode(o any) (any, error) {
	n, ok := o.(*v1.Node)
	if !ok {
		return stripManagedFields(o)
	}
	if !a.cfg.createsNode(n.Name) && !a.cfg.selects(n) {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion}}, nil
	}
	return stripManagedFields(n)
}

// startNodeInformer starts the node informer: the server's copy of every node the agent
// runs, which the node status loop compares with what the agent owns (nodeReport), and,
// with a node selection, the nodes to adopt as they come and go. It returns the factory
// to shut down.
func (a *agent) startNodeInformer(ctx context.Context, loops *sync.WaitGroup) (informers.SharedInformerFactory, error) {
	r := a.cfg
	nf := informers.NewSharedInformerFactoryWithOptions(a.cs, 0, informers.WithTweakListOptions(r.nodeListOptions))
	ni := nf.Core().V1().Nodes().Informer()
	_ = ni.SetTransform(a.transformNode)
	a.nodeInformer = ni
	if r.adoptNodes {
		adopt := func(o any) {
			if n, ok := o.(*v1.Node); ok && r.selects(n) {
				a.addNode(n, false)
			}
		}
		reg, err := ni.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: adopt, UpdateFunc: func(_, o any) { adopt(o) }})
		if err != nil {
			return nil, fmt.Errorf("simkubelet: node handler: %w", err)
		}
		loops.Go(func() {
			// The selected nodes may be created later, so this is no reason to stop;
			// but a selection that matches nothing is usually a mistake (a typo in a
			// node name or a selector), which a user must not have to guess from
			// "nodes=0".
			if cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) && a.nodes.len() == 0 {
				a.log.Error(nil, "No existing node matches the node selection; waiting for one to appear",
					"manageSingleNode", r.ManageSingleNode, "labelSelector", r.ManageNodesWithLabelSelector,
					"annotationSelector", r.ManageNodesWithAnnotationSelector, "nodes", r.Nodes)
			}
		})
	}
	nf.StartWithContext(ctx)
	return nf, nil
}

// serverNode is the node informer's copy of the node called name, nil when it has none
// (not listed yet, deleted, or no informer: unit tests that build an agent alone).
func (a *agent) serverNode(name string) *v1.Node {
	if a.nodeInformer == nil {
		return nil
	}
	o, ok, err := a.nodeInformer.GetStore().GetByKey(name)
	if err != nil || !ok {
		return nil
	}
	n, _ := o.(*v1.Node)
	return n
}

// registerNodeMetrics adds the collectors of nodeCounters, and how many nodes the agent
// left to another writer.
func (a *agent) registerNodeMetrics(reg prometheus.Registerer) error {
	for _, m := range []struct {
		name, help string
		v          *atomic.Int64
	}{
		{"podstatus_fleet_node_status_repairs_total", "Node statuses sent before they were due because the server's copy differed from the kubelet's (a node the node-lifecycle controller marked Unknown, mostly).", &a.nodeCounts.repairs},
		{"podstatus_fleet_node_lease_conflicts_total", "Times the agent found another agent or kubelet renewing the Lease of a node it runs or takes.", &a.nodeCounts.conflicts},
	} {
		if err := reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: m.name, Help: m.help},
			func() float64 { return float64(m.v.Load()) })); err != nil {
			return err
		}
	}
	return reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "podstatus_fleet_nodes_held_by_others",
		Help: "Nodes the agent was given or adopted but leaves to another agent or kubelet that renews their Lease.",
	}, func() float64 {
		held := 0
		for _, n := range a.nodes.list() {
			if !a.owns(n) {
				held++
			}
		}
		return float64(held)
	}))
}
