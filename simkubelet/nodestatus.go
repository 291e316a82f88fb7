package simkubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// nodeReport is what the node status loop knows of one node on the server: the newest
// copy it has seen (the answer to its own PATCH, or the node informer's copy when that is
// as new or newer) and when it last sent the node's status.
//
// The kubelet does the same every nodeStatusUpdateFrequency (tryUpdateNodeStatus in
// pkg/kubelet/kubelet_node_status.go): it reads the node from its informer's lister (not
// a GET, "the majority of load on apiserver and etcd" in large clusters, as its comment
// says), builds the status its setters would write on that copy, and PATCHes when it
// differs (ignoring heartbeat times) or when nodeStatusReportFrequency has passed since
// its last report. A node whose status nobody else touched costs no request between
// reports; a node the node-lifecycle controller marked Unknown (the agent paused past the
// node-monitor grace period, a partition) is reported Ready again at the next round after
// the watch brings that change.
type nodeReport struct {
	base       *v1.Node // read-only: the informer's object or a PATCH answer
	lastReport metav1.Time
}

// observe makes n the base unless the base is newer (the agent's own PATCH answer before
// the watch event of that write, or a later one, reaches the informer).
func (r *nodeReport) observe(n *v1.Node) {
	if n == nil {
		return
	}
	if r.base != nil {
		c, err := resourceversion.CompareResourceVersion(n.ResourceVersion, r.base.ResourceVersion)
		if err == nil && c < 0 {
			return
		}
	}
	r.base = n
}

// The kubelet's node condition reasons and messages (pkg/kubelet/nodestatus/setters.go:
// ReadyCondition, MemoryPressureCondition, DiskPressureCondition, PIDPressureCondition)
// for a healthy node, in the order the kubelet's setters add them; Ready comes last
// (kubernetes/kubernetes#16961).
var healthyConditions = []v1.NodeCondition{
	{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
	{Type: v1.NodeDiskPressure, Status: v1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
	{Type: v1.NodePIDPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
	{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
}

// kubeletConditions are the conditions of a healthy node that the kubelet's setters
// write over server, the node's conditions on the server (nil for a new node), at now:
//   - every condition's lastHeartbeatTime is now;
//   - Ready is replaced whole, keeping its lastTransitionTime when its status is already
//     True (ReadyCondition);
//   - a pressure condition already False is kept as it is (its reason, message and
//     lastTransitionTime), else it becomes False with the kubelet's reason and message
//     (MemoryPressureCondition and its siblings: they touch those only on a transition).
//
// A transition (a condition absent, or Unknown as the node-lifecycle controller leaves it,
// reason NodeStatusUnknown) is stamped now. Conditions of other types are not the
// kubelet's (NetworkUnavailable is a network plugin's): they are not returned, and the
// strategic-merge PATCH, keyed by type, leaves them as they are.
func kubeletConditions(server []v1.NodeCondition, now metav1.Time) []v1.NodeCondition {
	out := make([]v1.NodeCondition, len(healthyConditions))
	for i, want := range healthyConditions {
		c := want
		c.LastHeartbeatTime, c.LastTransitionTime = now, now
		if _, cur := findNodeCondition(server, want.Type); cur != nil && cur.Status == want.Status {
			if !cur.LastTransitionTime.IsZero() {
				c.LastTransitionTime = cur.LastTransitionTime
			}
			if want.Type != v1.NodeReady {
				c.Reason, c.Message = cur.Reason, cur.Message
			}
		}
		out[i] = c
	}
	return out
}

// conditionsChanged reports whether server lacks one of conds or holds it differently,
// heartbeat aside (nodeConditionsHaveChanged in pkg/kubelet/kubelet_node_status.go).
func conditionsChanged(server, conds []v1.NodeCondition) bool {
	for _, c := range conds {
		_, cur := findNodeCondition(server, c.Type)
		if cur == nil || cur.Status != c.Status || cur.Reason != c.Reason || cur.Message != c.Message ||
			!cur.LastTransitionTime.Equal(&c.LastTransitionTime) {
			return true
		}
	}
	return false
}

// ownedStatus is the status the agent writes for n at now over base (the server's copy,
// nil when the agent has none), as a strategic-merge patch body's "status", and whether
// it differs from base in what the agent owns: the node's whole kubelet status when the
// agent created it (capacity, allocatable, addresses, daemon endpoints, node info and
// the kubelet's four conditions, the setters of pkg/kubelet/nodestatus/setters.go), only
// the conditions and what it fills in (addNode) when it adopted it. Fields others own
// (NetworkUnavailable, taints, volumes) are never written.
func (a *agent) ownedStatus(n *nodeState, base *v1.Node, now metav1.Time) (map[string]any, bool) {
	var server *v1.NodeStatus
	if base != nil {
		server = &base.Status
	}
	var serverConds []v1.NodeCondition
	if server != nil {
		serverConds = server.Conditions
	}
	conds := kubeletConditions(serverConds, now)
	changed := server == nil || conditionsChanged(server.Conditions, conds)
	st := map[string]any{"conditions": conds}
	if n.created {
		full := nodeStatus(n.name, n.sim.HostIPs[0], a.cfg.MaxPods, now)
		st["capacity"], st["allocatable"] = full.Capacity, full.Allocatable
		st["addresses"], st["daemonEndpoints"], st["nodeInfo"] = full.Addresses, full.DaemonEndpoints, full.NodeInfo
		if server != nil && !changed {
			// What the patch would change: the resources and addresses it names (a
			// device plugin's extended resources, or another address type, stay, as
			// the kubelet's MachineInfo setter keeps them), and the node info's fields
			// the patch sends (all but its optional pointers).
			info := full.NodeInfo
			info.Swap, info.RunningInUserNamespace = server.NodeInfo.Swap, server.NodeInfo.RunningInUserNamespace
			changed = !hasResources(server.Capacity, full.Capacity) || !hasResources(server.Allocatable, full.Allocatable) ||
				!hasAddresses(server.Addresses, full.Addresses) || server.DaemonEndpoints != full.DaemonEndpoints ||
				server.NodeInfo != info
		}
		return st, changed
	}
	for k, v := range n.fill {
		st[k] = v
	}
	if server != nil && !changed {
		if _, ok := n.fill["addresses"]; ok && !slices.ContainsFunc(server.Addresses, func(a v1.NodeAddress) bool { return a.Type == v1.NodeInternalIP }) {
			changed = true
		}
		if _, ok := n.fill["capacity"]; ok {
			if _, declared := declaredPods(base); !declared {
				changed = true
			}
		}
	}
	return st, changed
}

// reportNodeStatus is one round of the kubelet's node status loop for n (see nodeReport):
// it PATCHes the node's status when the server's copy differs from what the agent owns,
// heartbeats aside, and otherwise once every NodeStatusReportFrequency (the Lease is the
// heartbeat in between). It returns the request's error.
func (a *agent) reportNodeStatus(ctx context.Context, n *nodeState) error {
	if !a.owns(n) {
		return nil
	}
	r := &n.report
	r.observe(a.serverNode(n.name))
	now := metav1.NewTime(a.cfg.Clock.Now())
	st, changed := a.ownedStatus(n, r.base, now)
	due := r.lastReport.IsZero() || now.Sub(r.lastReport.Time) >= a.cfg.NodeStatusReportFrequency
	if !changed && !due {
		return nil
	}
	if changed && !r.lastReport.IsZero() {
		var ready v1.ConditionStatus
		if r.base != nil {
			if _, c := findNodeCondition(r.base.Status.Conditions, v1.NodeReady); c != nil {
				ready = c.Status
			}
		}
		a.log.V(1).Info("Node status on the server differs from the kubelet's; reporting it", "node", n.name, "serverReady", ready)
		a.nodeCounts.repairs.Add(1)
	}
	patch, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return fmt.Errorf("marshal status of node %s: %w", n.name, err)
	}
	got, err := a.cs.CoreV1().Nodes().Patch(ctx, n.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patch status of node %s: %w", n.name, err)
	}
	r.lastReport = now
	if got != nil {
		_, _ = stripManagedFields(got)
		r.observe(got)
	}
	a.counts.nodeStatusReports.Add(1)
	return nil
}

// hasResources reports whether have holds every resource of want in the same quantity.
func hasResources(have, want v1.ResourceList) bool {
	for k, q := range want {
		if h, ok := have[k]; !ok || h.Cmp(q) != 0 {
			return false
		}
	}
	return true
}

// hasAddresses reports whether have holds every address of want.
func hasAddresses(have, want []v1.NodeAddress) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
