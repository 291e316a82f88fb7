package simkubelet

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestKubeletConditions(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC))
	now := metav1.NewTime(t0.Add(time.Hour))
	healthy := kubeletConditions(nil, t0)
	unknown := func() []v1.NodeCondition { // as the node-lifecycle controller leaves them
		out := make([]v1.NodeCondition, len(healthy))
		for i, c := range healthy {
			out[i] = v1.NodeCondition{Type: c.Type, Status: v1.ConditionUnknown, Reason: "NodeStatusUnknown",
				Message: "Kubelet stopped posting node status.", LastHeartbeatTime: t0, LastTransitionTime: metav1.NewTime(t0.Add(time.Minute))}
		}
		return out
	}()
	custom := kubeletConditions(nil, t0)
	custom[0].Reason, custom[0].Message = "SomeoneElses", "kept while False"
	custom[3].Reason, custom[3].Message = "Other", "replaced"
	for _, tc := range []struct {
		name       string
		server     []v1.NodeCondition
		transition map[v1.NodeConditionType]bool // the conditions stamped now
		reasonMem  string
		changed    bool
	}{
		{"new node", nil, map[v1.NodeConditionType]bool{v1.NodeMemoryPressure: true, v1.NodeDiskPressure: true, v1.NodePIDPressure: true, v1.NodeReady: true}, "KubeletHasSufficientMemory", true},
		{"healthy: only heartbeats move", healthy, nil, "KubeletHasSufficientMemory", false},
		{"marked Unknown by the node-lifecycle controller", unknown, map[v1.NodeConditionType]bool{v1.NodeMemoryPressure: true, v1.NodeDiskPressure: true, v1.NodePIDPressure: true, v1.NodeReady: true}, "KubeletHasSufficientMemory", true},
		{"a pressure condition's reason is kept, Ready's replaced", custom, nil, "SomeoneElses", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := kubeletConditions(tc.server, now)
			if len(got) != 4 || got[3].Type != v1.NodeReady {
				t.Fatalf("want the four kubelet conditions, Ready last; got %v", got)
			}
			for _, c := range got {
				if !c.LastHeartbeatTime.Equal(&now) {
					t.Errorf("%s: heartbeat %v, want now", c.Type, c.LastHeartbeatTime)
				}
				wantLTT := t0
				if tc.transition[c.Type] {
					wantLTT = now
				}
				if !c.LastTransitionTime.Equal(&wantLTT) {
					t.Errorf("%s: lastTransitionTime %v, want %v", c.Type, c.LastTransitionTime, wantLTT)
				}
				if c.Type == v1.NodeReady && (c.Status != v1.ConditionTrue || c.Reason != "KubeletReady") {
					t.Errorf("Ready: %+v, want True/KubeletReady", c)
				}
				if c.Type != v1.NodeReady && c.Status != v1.ConditionFalse {
					t.Errorf("%s: %s, want False", c.Type, c.Status)
				}
			}
			if got[0].Reason != tc.reasonMem {
				t.Errorf("MemoryPressure reason %q, want %q", got[0].Reason, tc.reasonMem)
			}
			if ch := conditionsChanged(tc.server, got); ch != tc.changed {
				t.Errorf("changed = %v, want %v", ch, tc.changed)
			}
			// Once written, the same conditions an hour later change nothing but heartbeats.
			later := metav1.NewTime(now.Add(time.Hour))
			again := kubeletConditions(got, later)
			if conditionsChanged(got, again) {
				t.Errorf("conditions change without a transition: %s", cmp.Diff(got, again))
			}
		})
	}
}

// nodeStatusPatches counts the PATCHes of node statuses the fake clientset was sent.
func nodeStatusPatches(cs *fake.Clientset) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "patch" && a.GetResource().Resource == "nodes" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

// A node the node-lifecycle controller marked Unknown and tainted unreachable (the agent
// paused past the node-monitor grace period) is reported Ready again within
// NodeStatusUpdateFrequency, as the kubelet's status loop does, while an untouched node
// costs no status PATCH between two reports. The agent leaves alone what others own: the
// taint and the NetworkUnavailable condition.
func TestNodeReportedReadyAgainAfterUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		const update = 10 * time.Second // the kubelet's default nodeStatusUpdateFrequency
		stop := startFake(t, Options{Nodes: 1, ProgressInterval: -1, NodeStatusUpdateFrequency: update}, cs)
		defer stop()
		ctx := context.Background()
		name := DefaultNodeNamePrefix + "0"
		ready := func() *v1.NodeCondition {
			n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil
			}
			_, c := findNodeCondition(n.Status.Conditions, v1.NodeReady)
			return c
		}
		poll(t, "the node Ready", func() bool {
			c := ready()
			return c != nil && c.Status == v1.ConditionTrue && !c.LastHeartbeatTime.IsZero()
		})
		time.Sleep(time.Second)
		synctest.Wait()
		before := nodeStatusPatches(cs)
		time.Sleep(4 * time.Minute)
		synctest.Wait()
		if got := nodeStatusPatches(cs) - before; got != 0 {
			t.Errorf("%d node status PATCHes in 4 minutes of a node with nothing changed, want 0", got)
		}

		// The node-lifecycle controller's work (tryUpdateNodeHealth and the NoExecute
		// tainting pass in pkg/controller/nodelifecycle/node_lifecycle_controller.go).
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		marked := metav1.NewTime(time.Now().Truncate(time.Second)) // as the server stores it
		for i := range n.Status.Conditions {
			c := &n.Status.Conditions[i]
			c.Status, c.Reason, c.Message, c.LastTransitionTime = v1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.", marked
		}
		n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionFalse, Reason: "RouteCreated", LastTransitionTime: marked})
		if n, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute, TimeAdded: &marked})
		if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}

		deadline := marked.Add(update)
		for c := ready(); c == nil || c.Status != v1.ConditionTrue; c = ready() {
			if time.Now().After(deadline) {
				t.Fatalf("node still %v %v after NodeStatusUpdateFrequency (%v)", c.Status, c.Reason, update)
			}
			time.Sleep(100 * time.Millisecond)
		}
		n, err = cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range n.Status.Conditions {
			want := v1.ConditionFalse
			if c.Type == v1.NodeReady {
				want = v1.ConditionTrue
			}
			if c.Status != want || c.LastTransitionTime.Before(&marked) {
				t.Errorf("%s: %s since %v, want %s since the controller's mark or later", c.Type, c.Status, c.LastTransitionTime, want)
			}
			if c.Type == v1.NodeNetworkUnavailable && c.Reason != "RouteCreated" {
				t.Errorf("NetworkUnavailable rewritten: %+v", c)
			}
		}
		if len(n.Spec.Taints) != 1 {
			t.Errorf("taints %v: the node-lifecycle controller's to remove, not the agent's", n.Spec.Taints)
		}
		// Back to quiet: one repair, then nothing until the next report is due.
		synctest.Wait()
		after := nodeStatusPatches(cs)
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := nodeStatusPatches(cs) - after; got != 0 {
			t.Errorf("%d node status PATCHes in the minute after the repair, want 0", got)
		}
	})
}
