package kubelettest_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/simkubelet"
	"github.com/podstatus/podstatus/simkubelet/kubelettest"
)

// TestCreateToReadyLatency measures how long a pod takes from its create to Ready on the
// in-process API server, at 1 and at 100 pods per second, with the simulated kubelet and
// beside it with the hand-written simulator operator test suites write (an informer and a
// Get→UpdateStatus loop that sets Running and Ready, as KubeVirt's envtest PodSimulator
// does), and the requests each sends per pod. Each side gets a fresh API server.
//
// CI runs a smoke of it (a few pods) that checks every pod turns Ready and counts the
// requests; the figures come from a longer run:
//
//	PODSTATUS_LATENCY_PODS=30,1000 go test -run TestCreateToReadyLatency -v ./kubelettest/
//
// (30 pods at 1/s, 1000 at 100/s).
func TestCreateToReadyLatency(t *testing.T) {
	slow, fast := 3, 50
	if v := os.Getenv("PODSTATUS_LATENCY_PODS"); v != "" {
		a, b, _ := strings.Cut(v, ",")
		var err1, err2 error
		slow, err1 = strconv.Atoi(a)
		fast, err2 = strconv.Atoi(b)
		if err1 != nil || err2 != nil || slow < 1 || fast < 1 {
			t.Fatalf("PODSTATUS_LATENCY_PODS=%q: want two counts, pods at 1/s and at 100/s, such as 30,1000", v)
		}
	}
	for _, rate := range []struct {
		perSecond int
		pods      int
	}{{1, slow}, {100, fast}} {
		for _, side := range []string{"simkubelet", "hand-written"} {
			t.Run(fmt.Sprintf("%d per second/%s", rate.perSecond, side), func(t *testing.T) {
				srv := apiserver.Start(t)
				counter := &requestCounter{}
				rc := rest.CopyConfig(srv.Config)
				rc.Wrap(counter.wrap)
				if side == "simkubelet" {
					// One node holds every pod (the kubelet's default of 110 would reject the rest
					// as OutOfpods, as a kubelet does).
					kubelettest.Start(t, rc, simkubelet.Options{Nodes: 1, NodeNamePrefix: "lat-", MaxPods: max(rate.pods, 110)})
				} else {
					startHandWritten(t, rc)
				}
				lat := measure(t, srv.Client, "lat-0", rate.perSecond, rate.pods)
				slices.Sort(lat)
				perPod := float64(counter.n.Load()) / float64(rate.pods)
				t.Logf("LATENCY %-12s %3d pods/s %5d pods: create→Ready p50 %v p99 %v max %v; pod requests per pod %.2f (%s)",
					side, rate.perSecond, rate.pods, quantile(lat, 0.50), quantile(lat, 0.99), lat[len(lat)-1], perPod, counter.summary())
				if side == "simkubelet" && perPod > 1.01 {
					t.Errorf("simkubelet sent %.2f pod requests per pod, want 1 (one PATCH)", perPod)
				}
			})
		}
	}
}

// measure creates n pods bound to node, rate per second, and returns each one's time
// from its create request to the watch event that shows it Ready.
func measure(t *testing.T, cs kubernetes.Interface, node string, rate, n int) []time.Duration {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	created := map[string]time.Time{}
	ready := map[string]time.Duration{}
	all := make(chan struct{})
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("latency"))
	inf := f.Core().V1().Pods().Informer()
	seen := func(o any) {
		p, ok := o.(*v1.Pod)
		if !ok {
			return
		}
		now := time.Now()
		c := conditions.Get(p.Status.Conditions, v1.PodReady)
		if c == nil || c.Status != v1.ConditionTrue {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		at, ok := created[p.Name]
		if _, done := ready[p.Name]; !done && ok {
			ready[p.Name] = now.Sub(at)
			if len(ready) == n {
				close(all)
			}
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, o any) { seen(o) }})
	f.Start(ctx.Done())
	defer f.Shutdown()
	defer cancel() // before Shutdown, which waits for the informer to stop
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "latency"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := range n {
		<-tick.C
		name := fmt.Sprintf("p-%d", i)
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "latency", Name: name},
			Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
		// Recorded before the request: the pod's Ready event may arrive before the
		// create's answer does.
		mu.Lock()
		created[name] = time.Now()
		mu.Unlock()
		if _, err := cs.CoreV1().Pods("latency").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-all:
	case <-time.After(time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%d of %d pods Ready a minute after the last create", len(ready), n)
	}
	mu.Lock()
	defer mu.Unlock()
	out := make([]time.Duration, 0, n)
	for _, d := range ready {
		out = append(out, d)
	}
	return out
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted)) + 0.5)
	return sorted[min(max(i-1, 0), len(sorted)-1)].Round(100 * time.Microsecond)
}

// requestCounter counts the requests on single pods (GET, PUT, PATCH, DELETE of
// /pods/NAME and its subresources), by method.
type requestCounter struct {
	n        atomic.Int64
	mu       sync.Mutex
	byMethod map[string]int
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if _, rest, ok := strings.Cut(r.URL.Path, "/pods/"); ok && rest != "" && r.URL.Query().Get("watch") == "" {
			c.n.Add(1)
			c.mu.Lock()
			if c.byMethod == nil {
				c.byMethod = map[string]int{}
			}
			c.byMethod[r.Method]++
			c.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

func (c *requestCounter) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for _, m := range []string{"GET", "PUT", "PATCH", "DELETE"} {
		if c.byMethod[m] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", m, c.byMethod[m]))
		}
	}
	return strings.Join(parts, ", ")
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// startHandWritten runs the pod simulator operator suites write by hand (KubeVirt's
// envtest PodSimulator, kubevirt/kubevirt#18731, is one): an informer of the bound pods,
// and for each new one a Get→UpdateStatus retry loop that sets it Running and Ready.
func startHandWritten(t *testing.T, rc *rest.Config) {
	cs := kubernetes.NewForConfigOrDie(rc)
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermNotEqualSelector("spec.nodeName", "").String()
	}))
	var wg sync.WaitGroup
	_, _ = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		p, ok := o.(*v1.Pod)
		if !ok {
			return
		}
		wg.Go(func() {
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				now := metav1.Now()
				cur.Status.Phase = v1.PodRunning
				cur.Status.Conditions = []v1.PodCondition{
					{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: now},
					{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: now},
					{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: now},
					{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now},
				}
				cur.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", Image: "registry.example/app:1", Ready: true,
					State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}}}
				_, err = cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
				return err
			})
			if err != nil && ctx.Err() == nil {
				t.Errorf("hand-written simulator: pod %s: %v", p.Name, err)
			}
		})
	}})
	f.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
		wg.Wait()
	})
}
