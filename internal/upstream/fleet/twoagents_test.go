package fleet

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/simkubelet"
)

// writeLog records the writes (anything but GET, LIST and WATCH) one agent sends, as
// "METHOD path".
type writeLog struct {
	mu     sync.Mutex
	writes []string
}

func (l *writeLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if req.Method != http.MethodGet && err == nil && resp.StatusCode < 300 {
			l.mu.Lock()
			l.writes = append(l.writes, req.Method+" "+req.URL.Path)
			l.mu.Unlock()
		}
		return resp, err
	})
}

// target names the object a write is about: "pod/NAME" for a pod or its status, "node/NAME"
// for a node, its status or its Lease, "" for anything else (Events).
func target(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := len(parts) - 2; i >= 0; i-- {
		switch parts[i] {
		case "pods":
			return "pod/" + parts[i+1]
		case "nodes", "leases": // a node's Lease is named after the node
			return "node/" + parts[i+1]
		}
	}
	return ""
}

// Two agent processes share the nodes of one API server, each owning the nodes its label
// selector picks (how users go past one machine): every write to a pod, a node or a Lease
// comes from the agent that owns the node, so nothing is written twice and no node is
// claimed by both; and the addresses they make up for nodes without a pod CIDR or an
// InternalIP never collide.
func TestTwoAgentsShareNodes(t *testing.T) {
	srv := apiserver.Start(t)
	ctx := context.Background()
	ns := srv.CreateNamespace(t, "two-").Name
	const nodes, pods = 6, 120
	pool := map[string]string{} // node → its agent
	for i := range nodes {
		name := fmt.Sprintf("two-node-%d", i)
		p := []string{"a", "b"}[i%2]
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": p}}}
		if i < 2 { // the others are made as KWOK users make them: no pod CIDR, no address
			cidr := fmt.Sprintf("10.200.%d.0/24", i)
			node.Spec = v1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}}
		}
		_, err := srv.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create node %s: %v", name, err)
		}
		pool[name] = p
	}
	logs := map[string]*writeLog{"a": {}, "b": {}}
	var stops []func()
	for _, p := range []string{"a", "b"} {
		rc := rest.CopyConfig(srv.Config)
		rc.UserAgent = "fleet-" + p // the server's field manager for this agent's writes
		rc.Wrap(logs[p].wrap)
		actx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- runKubelet(actx, rc, simkubelet.Options{
				ManageNodesWithLabelSelector: "pool=" + p,
				NodeLeaseDurationSeconds:     4,
				Profile:                      "fast",
				Logger:                       testr.NewWithOptions(t, testr.Options{Verbosity: 0}).WithName(p),
			})
		}()
		stops = append(stops, func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("agent %s: Run: %v", p, err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("agent %s did not stop within 30 s of its context being cancelled", p)
			}
		})
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()

	podNode := map[string]string{}
	for i := range pods {
		node := fmt.Sprintf("two-node-%d", i%nodes)
		p := srv.CreatePod(t, apiserver.NewPod(ns, fmt.Sprintf("p-%d", i), node))
		podNode[p.Name] = node
	}
	poll := func(what string, cond func() (bool, error)) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) { return cond() })
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	poll("every pod Running and Ready", func() (bool, error) {
		list, err := srv.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range list.Items {
			if list.Items[i].Status.Phase == v1.PodRunning && readyStatus(&list.Items[i]) == v1.ConditionTrue {
				ready++
			}
		}
		return ready == pods, nil
	})
	// Every pod's status has one manager, the agent of its node.
	list, err := srv.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The agents started independently, yet no two pods share a pod IP and no two nodes
	// a node IP, though four nodes have no pod CIDR or address of their own.
	podIPs, hostIPs := map[string]string{}, map[string]string{}
	for _, p := range list.Items {
		if other, dup := podIPs[p.Status.PodIP]; dup {
			t.Errorf("pods %s and %s share pod IP %s", other, p.Name, p.Status.PodIP)
		}
		podIPs[p.Status.PodIP] = p.Name
		if node, seen := hostIPs[p.Status.HostIP]; seen && node != p.Spec.NodeName {
			t.Errorf("nodes %s and %s share node IP %s", node, p.Spec.NodeName, p.Status.HostIP)
		}
		hostIPs[p.Status.HostIP] = p.Spec.NodeName
	}
	for _, p := range list.Items {
		var managers []string
		for _, mf := range p.ManagedFields {
			if mf.Subresource == "status" {
				managers = append(managers, mf.Manager)
			}
		}
		if want := "fleet-" + pool[p.Spec.NodeName]; len(managers) != 1 || managers[0] != want {
			t.Errorf("pod %s on %s: status managers %v, want only %s", p.Name, p.Spec.NodeName, managers, want)
		}
	}
	// Graceful deletion: each pod is finished by its node's agent.
	if err := srv.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	poll("every pod deleted", func() (bool, error) {
		list, err := srv.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0, err
	})

	// Every write an agent sent was about its own nodes and their pods.
	writers := map[string]map[string]bool{} // object → agents that wrote it
	perAgent := map[string]map[string]int{"a": {}, "b": {}}
	for p, l := range logs {
		l.mu.Lock()
		for _, w := range l.writes {
			method, path, _ := strings.Cut(w, " ")
			obj := target(path)
			if obj == "" {
				continue
			}
			if writers[obj] == nil {
				writers[obj] = map[string]bool{}
			}
			writers[obj][p] = true
			kind, name, _ := strings.Cut(obj, "/")
			owner := pool[name]
			if kind == "pod" {
				owner = pool[podNode[name]]
			}
			if owner != p {
				t.Errorf("agent %s sent %s about %s, which belongs to agent %q", p, w, obj, owner)
			}
			perAgent[p][method+" "+kind]++
		}
		l.mu.Unlock()
	}
	for obj, ws := range writers {
		if len(ws) != 1 {
			t.Errorf("%s written by %d agents", obj, len(ws))
		}
	}
	for name := range pool {
		if len(writers["node/"+name]) != 1 {
			t.Errorf("node %s (its Lease or status) written by %d agents, want 1", name, len(writers["node/"+name]))
		}
	}
	for name := range podNode {
		if len(writers["pod/"+name]) != 1 {
			t.Errorf("pod %s written by %d agents, want 1", name, len(writers["pod/"+name]))
		}
	}
	t.Logf("two agents, %d nodes, %d pods: writes by agent a %v, by agent b %v", nodes, pods, perAgent["a"], perAgent["b"])
}
