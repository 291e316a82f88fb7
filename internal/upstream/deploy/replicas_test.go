package deploy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/examples/fleet/deploy"
	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/simkubelet"
)

// Two replicas as the StatefulSet runs them share a cluster: the arguments of fleet-0 and
// fleet-1 from statefulset.yaml (deploy.ReplicaArgs), the ServiceAccount's token and no
// other credential, fleet-1 started once fleet-0 runs (what OrderedReady does with its
// /readyz). Every pod is served by the replica of its node alone (its status has that
// replica's field manager only), no two nodes share a pod CIDR or an InternalIP and no
// two pods a pod IP. The server keeps its default WatchList: the informers stream their
// lists this time, still within the role.
func TestStatefulSetReplicasShareTheCluster(t *testing.T) {
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	c := install(t, objs)
	var sts *appsv1.StatefulSet
	for _, o := range objs {
		if s, ok := o.(*appsv1.StatefulSet); ok {
			sts = s
		}
	}
	if sts == nil {
		t.Fatal("the manifests hold no StatefulSet")
	}
	ctx := context.Background()

	type replica struct {
		name    string
		cfg     simkubelet.Options
		rc      *rest.Config
		running chan struct{}
	}
	replicas := make([]*replica, 2)
	for ordinal := range replicas {
		args, err := deploy.ReplicaArgs(sts, ordinal)
		if err != nil {
			t.Fatal(err)
		}
		r := &replica{name: fmt.Sprintf("%s-%d", sts.Name, ordinal), running: make(chan struct{})}
		rc := rest.CopyConfig(c.rc)
		r.cfg = simkubelet.Options{Profile: "fast", ProgressInterval: -1, ShutdownTimeout: 2 * time.Second,
			Logger:    testr.NewWithOptions(t, testr.Options{Verbosity: 0}).WithName(r.name),
			OnRunning: func(simkubelet.RunningEvent) { close(r.running) }}
		for _, a := range args {
			name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			switch name {
			case "node-name-prefix":
				r.cfg.NodeNamePrefix = value
			case "nodes":
				if r.cfg.Nodes, err = strconv.Atoi(value); err != nil {
					t.Fatalf("argument %q: %v", a, err)
				}
			case "user-agent":
				rc.UserAgent = value
			case "metrics-addr":
				// What it serves for the StatefulSet, /readyz, is OnRunning here.
			default:
				t.Fatalf("argument %q of the StatefulSet: map it to simkubelet.Options in this test", a)
			}
		}
		r.rc = rc
		replicas[ordinal] = r
	}
	for _, r := range replicas {
		actx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- runKubelet(actx, r.rc, r.cfg) }()
		defer func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: simkubelet Run: %v", r.name, err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("%s did not stop within 30 s of its context being cancelled", r.name)
			}
		}()
		select {
		case <-r.running:
		case err := <-done:
			t.Fatalf("%s: simkubelet Run returned before running: %v", r.name, err)
		case <-time.After(60 * time.Second):
			t.Fatalf("%s not running (its nodes registered) within 60 s", r.name)
		}
	}

	// Pods spread over both replicas' nodes.
	ns := c.srv.CreateNamespace(t, "replicas-").Name
	const pods = 60
	owner := map[string]string{} // pod → replica
	for i := range pods {
		r := replicas[i%2]
		p := apiserver.NewPod(ns, fmt.Sprintf("p-%d", i), fmt.Sprintf("%s%d", r.cfg.NodeNamePrefix, (i/2)%r.cfg.Nodes))
		c.srv.CreatePod(t, p)
		owner[p.Name] = r.name
	}
	var list *v1.PodList
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err = c.srv.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			if list.Items[i].Status.Phase != v1.PodRunning || !podReady(&list.Items[i]) {
				return false, nil
			}
		}
		return len(list.Items) == pods, nil
	})
	if err != nil {
		t.Fatalf("waiting for every pod Running and Ready: %v", err)
	}
	podIPs := map[string]string{}
	for _, p := range list.Items {
		var managers []string
		for _, mf := range p.ManagedFields {
			if mf.Subresource == "status" {
				managers = append(managers, mf.Manager)
			}
		}
		if len(managers) != 1 || managers[0] != owner[p.Name] {
			t.Errorf("pod %s on %s: status written by %v, want %s alone", p.Name, p.Spec.NodeName, managers, owner[p.Name])
		}
		if other, dup := podIPs[p.Status.PodIP]; dup {
			t.Errorf("pods %s and %s share pod IP %s", other, p.Name, p.Status.PodIP)
		}
		podIPs[p.Status.PodIP] = p.Name
	}
	nodes, err := c.srv.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cidrs, ips := map[string]string{}, map[string]string{}
	want := replicas[0].cfg.Nodes + replicas[1].cfg.Nodes
	if len(nodes.Items) != want {
		t.Errorf("%d nodes, want %d", len(nodes.Items), want)
	}
	for _, n := range nodes.Items {
		if other, dup := cidrs[n.Spec.PodCIDR]; dup || n.Spec.PodCIDR == "" {
			t.Errorf("nodes %s and %s share pod CIDR %q", other, n.Name, n.Spec.PodCIDR)
		}
		cidrs[n.Spec.PodCIDR] = n.Name
		for _, a := range n.Status.Addresses {
			if a.Type != v1.NodeInternalIP {
				continue
			}
			if other, dup := ips[a.Address]; dup {
				t.Errorf("nodes %s and %s share InternalIP %s", other, n.Name, a.Address)
			}
			ips[a.Address] = n.Name
		}
	}
}
