package simkubelet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/podsim"
)

// startFake runs the agent against a fake clientset and returns a stop function that
// fails the test if Run does not return in time. Tests call it inside a synctest bubble:
// the agent's timers, the informers' and the Manager's backoff then run on the bubble's
// clock, so no test waits for real time or depends on the machine's speed.
func startFake(t *testing.T, cfg Options, cs *fake.Clientset) (stop func()) {
	t.Helper()
	r, err := cfg.resolve(&rest.Config{Host: "fake"})
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- newAgent(r).run(ctx, cs) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("Run did not return within 15 s of its context being cancelled")
		}
	}
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestAgentRegistersNodesLeasesAndServesPods(t *testing.T) {
	synctest.Test(t, testAgentRegistersNodesLeasesAndServesPods)
}

func testAgentRegistersNodesLeasesAndServesPods(t *testing.T) {
	cs := fake.NewClientset()
	reg := prometheus.NewPedanticRegistry()
	stop := startFake(t, Options{Nodes: 2, Profile: "fast", ProgressInterval: -1, NodeLeaseDurationSeconds: 4, Registerer: reg}, cs)
	defer stop()
	ctx := context.Background()

	poll(t, "two nodes with a Ready condition and distinct pod CIDRs", func() bool {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) != 2 {
			return false
		}
		cidrs := map[string]bool{}
		for _, n := range nodes.Items {
			if _, c := findNodeCondition(n.Status.Conditions, v1.NodeReady); c == nil || c.Status != v1.ConditionTrue {
				return false
			}
			if n.Status.NodeInfo.KubeletVersion != KubeletVersion || len(n.Status.Addresses) != 2 {
				return false
			}
			cidrs[n.Spec.PodCIDR] = true
		}
		return len(cidrs) == 2
	})
	poll(t, "a Lease per node", func() bool {
		l, err := cs.CoordinationV1().Leases(v1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 2
	})

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec:       v1.PodSpec{NodeName: DefaultNodeNamePrefix + "1", Containers: []v1.Container{{Name: "app", Image: "app"}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	other := pod.DeepCopy()
	other.Name, other.UID, other.Spec.NodeName = "elsewhere", "uid-other", "someone-elses-node"
	if _, err := cs.CoreV1().Pods("default").Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the pod's kubelet conditions on the server", func() bool {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false
		}
		seen := map[v1.PodConditionType]bool{}
		for _, c := range p.Status.Conditions {
			seen[c.Type] = true
		}
		return seen[v1.PodReadyToStartContainers] && seen[v1.PodInitialized] && seen[v1.PodReady] && seen[v1.ContainersReady] && p.Status.HostIP != ""
	})
	poll(t, "metrics: one Running pod, a status PATCH for at most each status change, a synced status", func() bool {
		got := map[string]float64{}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("gather: %v", err)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				key := mf.GetName()
				for _, l := range m.GetLabel() {
					key += "," + l.GetName() + "=" + l.GetValue()
				}
				switch {
				case m.GetCounter() != nil:
					got[key] = m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					got[key] = m.GetGauge().GetValue()
				case m.GetHistogram() != nil:
					got[key] = float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
		changes, patches := got["podstatus_status_changes_total"], got["podstatus_status_patches_total,result=success"]
		return got["podstatus_fleet_pods,phase=Running"] == 1 && patches >= 1 && changes >= patches &&
			got["kubelet_pod_status_sync_duration_seconds"] >= 1 && got["podstatus_fleet_lease_renewals_total"] >= 2
	})
	p, err := cs.CoreV1().Pods("default").Get(ctx, "elsewhere", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Status.Conditions) != 0 {
		t.Fatalf("a pod of an unmanaged node got a status: %+v", p.Status)
	}
}

func TestAgentAdoptsNodesByAnnotationSelector(t *testing.T) {
	synctest.Test(t, testAgentAdoptsNodesByAnnotationSelector)
}

func testAgentAdoptsNodesByAnnotationSelector(t *testing.T) {
	kwokNode := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-node-0", Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}}
	realNode := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "real-node"}}
	cs := fake.NewClientset(kwokNode, realNode)
	// A node the informer delivers after the node loops started is reported at their next
	// round (NodeStatusUpdateFrequency, 10 s by default: poll's own bound); 1 s keeps the
	// test off that boundary.
	stop := startFake(t, Options{ManageNodesWithAnnotationSelector: "kwok.x-k8s.io/node=fake", ProgressInterval: -1, NodeStatusUpdateFrequency: time.Second}, cs)
	defer stop()
	ctx := context.Background()
	poll(t, "the annotated node Ready", func() bool {
		n, err := cs.CoreV1().Nodes().Get(ctx, "kwok-node-0", metav1.GetOptions{})
		if err != nil {
			return false
		}
		_, c := findNodeCondition(n.Status.Conditions, v1.NodeReady)
		return c != nil && c.Status == v1.ConditionTrue
	})
	n, err := cs.CoreV1().Nodes().Get(ctx, "real-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Status.Conditions) != 0 {
		t.Fatalf("a node the selector does not match was touched: %+v", n.Status.Conditions)
	}
}

func TestConfigValidation(t *testing.T) {
	rc := &rest.Config{Host: "x"}
	if _, err := New(nil, Options{Nodes: 1}); err == nil || !strings.Contains(err.Error(), "restConfig: Required value") {
		t.Errorf("New without a rest config: %v, want an error naming restConfig", err)
	}
	for name, cfg := range map[string]Options{
		"no nodes":                {},
		"unknown profile":         {Nodes: 1, Profile: "turbo"},
		"all and selector":        {ManageAllNodes: true, ManageNodesWithLabelSelector: "a=b"},
		"bad annotation selector": {ManageNodesWithAnnotationSelector: "a=b=c"},
	} {
		if _, err := cfg.resolve(rc); err == nil {
			t.Errorf("%s: resolve accepted %+v", name, cfg)
		}
	}
	r, err := Options{ManageNodesWithAnnotationSelector: "kwok.x-k8s.io/node=fake"}.resolve(rc)
	if err != nil {
		t.Fatal(err)
	}
	yes := &v1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}}
	no := &v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kwok.x-k8s.io/node": "fake"}}}
	if !r.selects(yes) || r.selects(no) {
		t.Fatalf("annotation selector: selects(annotated)=%v selects(labelled)=%v", r.selects(yes), r.selects(no))
	}
}

func TestPodCIDRsAndNodeIPsAreDistinct(t *testing.T) {
	cidrs, ips := map[string]bool{}, map[string]bool{}
	for i := range 5000 {
		cidrs[podCIDR(i, 24)] = true
		ips[nodeIP(i)] = true
	}
	if len(cidrs) != 5000 || len(ips) != 5000 {
		t.Fatalf("distinct CIDRs %d, IPs %d, want 5000 each", len(cidrs), len(ips))
	}
	if podCIDR(0, 24) != "10.1.0.0/24" || podCIDR(257, 24) != "10.2.1.0/24" || nodeIP(0) != "172.16.0.2" || nodeIP(254) != "172.16.1.0" {
		t.Fatalf("podCIDR(0)=%s podCIDR(257)=%s nodeIP(0)=%s nodeIP(254)=%s", podCIDR(0, 24), podCIDR(257, 24), nodeIP(0), nodeIP(254))
	}
}

func TestPodCIDRHoldsMaxPods(t *testing.T) {
	for _, tc := range []struct {
		maxPods int
		bits    int
		cidr1   string
	}{
		{110, 24, "10.1.1.0/24"},
		{253, 24, "10.1.1.0/24"},
		{254, 23, "10.1.2.0/23"},
		{10000, 18, "10.1.64.0/18"},
		{65533, 16, "10.2.0.0/16"},
		{maxMaxPods, 12, "10.17.0.0/12"},
	} {
		bits := podCIDRBits(tc.maxPods)
		if bits != tc.bits || podCIDR(1, bits) != tc.cidr1 {
			t.Errorf("maxPods %d: /%d, node 1 %s; want /%d, %s", tc.maxPods, bits, podCIDR(1, bits), tc.bits, tc.cidr1)
		}
		ipam, err := podsim.NewIPAM(podCIDR(3, bits))
		if err != nil {
			t.Fatalf("maxPods %d: %v", tc.maxPods, err)
		}
		if tc.maxPods <= 70000 {
			for i := range tc.maxPods {
				if _, err := ipam.Allocate(fmt.Sprint(i)); err != nil {
					t.Fatalf("maxPods %d: pod %d: %v", tc.maxPods, i, err)
				}
			}
		}
	}
}

func TestOnRunningAfterTheNodesExist(t *testing.T) {
	synctest.Test(t, testOnRunningAfterTheNodesExist)
}

// OnRunning comes once, when every node of Options.Nodes exists on the server: what the
// fleet command's /readyz waits for.
func testOnRunningAfterTheNodesExist(t *testing.T) {
	cs := fake.NewClientset()
	type call struct{ event, onServer int }
	calls := make(chan call, 2)
	stop := startFake(t, Options{Nodes: 3, ProgressInterval: -1, OnRunning: func(ev RunningEvent) {
		nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Errorf("list nodes: %v", err)
		}
		calls <- call{ev.Nodes, len(nodes.Items)}
	}}, cs)
	got := <-calls
	if got != (call{3, 3}) {
		t.Errorf("OnRunning(Nodes=%d) with %d nodes on the server, want 3 and 3", got.event, got.onServer)
	}
	time.Sleep(time.Minute) // the bubble's clock: the node loops run, no second call
	stop()
	select {
	case c := <-calls:
		t.Errorf("OnRunning called again: %+v", c)
	default:
	}
}
