// Package simnode runs the project's main job, the simulated node of examples/simnode,
// against a real kube-apiserver v1.37.0 and etcd started in-process, through the client-go
// adapter: every request the node agent sends must be accepted, and the pods must end as
// they do against the in-memory server.
package simnode

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/examples/simnode/kube"
	"github.com/podstatus/podstatus/examples/simnode/sim"
	"github.com/podstatus/podstatus/internal/upstream/apiserver"
)

func TestSimulatedNodeAgainstRealAPIServer(t *testing.T) {
	srv := apiserver.Start(t)
	ctx := context.Background()
	const ns, node = "simnode-e2e", "simnode-e2e"
	cluster := kube.New(srv.Client)
	if err := cluster.Prepare(ctx, ns, node); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	cfg := sim.Config{Seed: 1, Pods: 14, Namespace: ns, Node: node}
	real, err := sim.Run(ctx, cluster, cfg)
	if err != nil {
		t.Fatalf("Run against the real API server: %v", err)
	}
	mem, err := sim.Run(ctx, sim.NewMemory(), cfg)
	if err != nil {
		t.Fatalf("Run in memory: %v", err)
	}
	for i, p := range real.Summary.PerPod {
		if m := mem.Summary.PerPod[i]; p != m {
			t.Errorf("pod %s ends as %+v on the real server, %+v in memory", p.Name, p, m)
		}
	}
	s := real.Summary
	if s.StatusChanges != mem.Summary.StatusChanges || s.PatchesSent != mem.Summary.PatchesSent {
		t.Errorf("real server: %d changes, %d patches; in memory: %d, %d", s.StatusChanges, s.PatchesSent, mem.Summary.StatusChanges, mem.Summary.PatchesSent)
	}
	if s.RequestsPerChange > 1.05 {
		t.Errorf("requests per change %.2f, want ≤ 1.05", s.RequestsPerChange)
	}
	// simnode-kube's clean-up on a real server: the pods are gone at once (grace period
	// 0), the namespace is being deleted (this server runs no namespace controller to
	// finish it) and the node is gone.
	if err := cluster.Cleanup(ctx); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if pods, err := srv.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil || len(pods.Items) != 0 {
		t.Errorf("after Cleanup: %d pods left (%v)", len(pods.Items), err)
	}
	if n, err := srv.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil && n.DeletionTimestamp == nil {
		t.Errorf("after Cleanup: namespace %s not being deleted", ns)
	}
	if _, err := srv.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after Cleanup: node %s: %v, want NotFound", node, err)
	}
	msg := fmt.Sprintf("simnode against kube-apiserver: %d pods, %d status changes, %d PATCHes (all accepted), %d GETs, %.2f requests per change",
		s.Pods, s.StatusChanges, s.PatchesSent, s.Gets, s.RequestsPerChange)
	t.Log(msg)
	fmt.Println(msg)
}
