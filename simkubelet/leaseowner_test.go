package simkubelet

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

func TestCheckHolder(t *testing.T) {
	now := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	lease := func(agent, run string, ago time.Duration) *coordinationv1.Lease {
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "n", Namespace: leaseNamespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("n"), LeaseDurationSeconds: ptr.To[int32](40),
				RenewTime: ptr.To(metav1.NewMicroTime(now.Add(-ago)))},
		}
		if agent != "" {
			l.Annotations = map[string]string{LeaseAnnotationAgent: agent, LeaseAnnotationAgentRun: run}
		}
		return l
	}
	for _, tc := range []struct {
		name     string
		claimed  bool
		lease    *coordinationv1.Lease
		held     bool   // the node is left to the other
		holder   string // ... named so
		conflict bool   // counted as another writer
	}{
		{"free: expired Lease of another agent", false, lease("b", "r2", time.Minute), false, "", false},
		{"taken: live Lease of another agent", false, lease("b", "r2", 5*time.Second), true, "b", false},
		{"taken: live Lease of a kubelet", false, lease("", "", 5*time.Second), true, "n", false},
		{"restart: live Lease of this Identity's earlier run", false, lease("a", "r0", 5*time.Second), false, "", false},
		{"running: another run renews it, met once", true, lease("a", "r2", time.Second), false, "", true},
		{"running: a kubelet renews it, met once", true, lease("", "", time.Second), false, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(resolved{Options: Options{Identity: "a", NodeLeaseDurationSeconds: 40}})
			a.runToken = "r1"
			n := &nodeState{name: "n"}
			n.owner.claimed = tc.claimed
			held := a.checkHolder(n, tc.lease, now)
			if (held != nil) != tc.held || held != nil && (held.Holder != tc.holder || held.Node != "n") {
				t.Fatalf("checkHolder = %v, want held=%v by %q", held, tc.held, tc.holder)
			}
			if got := a.nodeCounts.conflicts.Load() > 0; got != tc.conflict {
				t.Errorf("conflict counted = %v, want %v", got, tc.conflict)
			}
			if tc.conflict {
				// The same writer again within a lease duration: the agent gives way.
				if again := a.checkHolder(n, tc.lease, now.Add(10*time.Second)); again == nil {
					t.Errorf("the same writer met twice: the agent keeps the node")
				}
			}
		})
	}
}

// An agent started with the node names another agent runs (another Identity, its Leases
// live) refuses to start, naming the node and the other agent.
func TestSecondAgentRefusedAtStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		stop := startFake(t, Options{Nodes: 2, Identity: "agent-a", ProgressInterval: -1}, cs)
		defer stop()
		ctx := context.Background()
		poll(t, "two Leases", func() bool {
			l, err := cs.CoordinationV1().Leases(v1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
			return err == nil && len(l.Items) == 2
		})
		r, err := Options{Nodes: 2, Identity: "agent-b", ProgressInterval: -1}.resolve(&rest.Config{Host: "fake"})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		err = newAgent(r).run(runCtx, cs)
		held, ok := errors.AsType[*NodeHeldError](err)
		if !ok || held.Holder != "agent-a" || !held.Agent || !strings.HasPrefix(held.Node, DefaultNodeNamePrefix) {
			t.Fatalf("second agent's Run = %v, want a *NodeHeldError naming a node and agent-a", err)
		}
		for _, want := range []string{held.Node, `"agent-a"`, "2 node(s)"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %s", err, want)
			}
		}
		// The first agent's Leases are still its own.
		l, err := cs.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, held.Node, metav1.GetOptions{})
		if err != nil || l.Annotations[LeaseAnnotationAgent] != "agent-a" {
			t.Errorf("Lease %s after the refusal: %v %v", held.Node, l.GetAnnotations(), err)
		}
	})
}
