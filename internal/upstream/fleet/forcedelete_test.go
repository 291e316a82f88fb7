package fleet

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/simkubelet"
)

// podNotFound records the requests about pods that the API server answered 404 Not
// Found, as "METHOD path".
type podNotFound struct {
	mu   sync.Mutex
	reqs []string
}

func (l *podNotFound) record(req *http.Request, resp *http.Response, err error) {
	if err == nil && resp.StatusCode == http.StatusNotFound && strings.Contains(req.URL.Path, "/pods/") {
		l.mu.Lock()
		l.reqs = append(l.reqs, req.Method+" "+req.URL.Path)
		l.mu.Unlock()
	}
}

func (l *podNotFound) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs...)
}

// Pods force-deleted (grace period 0) while their first statuses are due: once the
// agent's watch reported a pod gone, nothing more is sent for it, not even a PATCH the
// status Manager had already handed to the client, and so no request of the agent is
// answered 404 Not Found.
//
// The status PATCHes of the pods are held at the agent's transport (as a saturated
// client holds them: every connection busy, or a client-side rate limit) until the agent
// has seen every deletion, which makes the test deterministic: a PATCH the agent sends
// before its watch reports the deletion (it cannot know) is answered 404 whatever the
// agent does, and is not what this test is about.
func TestForceDeletedPodsGetNoRequest(t *testing.T) {
	srv := apiserver.Start(t)
	ctx := context.Background()
	ns := srv.CreateNamespace(t, "force-").Name
	const pods = 300
	const node, marker = "force-node-0", "marker"

	var (
		nf       podNotFound
		held     atomic.Int64
		release  = make(chan struct{})
		stepped  sync.Map // pod name → true once the agent generated a status for it
		nStepped atomic.Int64
		markerOK = make(chan struct{})
		once     sync.Once
	)
	rc := rest.CopyConfig(srv.Config)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return rtFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/status") &&
				strings.Contains(req.URL.Path, "/pods/") && !strings.Contains(req.URL.Path, "/pods/"+marker+"/") {
				held.Add(1)
				select {
				case <-release:
				case <-req.Context().Done():
					return nil, req.Context().Err()
				}
			}
			resp, err := rt.RoundTrip(req)
			nf.record(req, resp, err)
			return resp, err
		})
	})
	actx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	running := make(chan struct{})
	go func() {
		done <- runKubelet(actx, rc, simkubelet.Options{
			Nodes: 1, NodeNamePrefix: "force-node-", Profile: "fast", MaxPods: 500,
			OnRunning: func(simkubelet.RunningEvent) { close(running) },
			OnStatus: func(p *v1.Pod, _ podstate.Input, _ v1.PodStatus) {
				if p.Name == marker {
					once.Do(func() { close(markerOK) })
				} else if _, seen := stepped.LoadOrStore(p.Name, true); !seen {
					nStepped.Add(1)
				}
			},
			Logger: testr.NewWithOptions(t, testr.Options{Verbosity: 0}),
		})
	}()
	var releaseOnce sync.Once
	unhold := func() { releaseOnce.Do(func() { close(release) }) }
	defer func() {
		unhold()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("the agent did not stop within 30 s of its context being cancelled")
		}
	}()
	select {
	case <-running:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not start within 30 s")
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true,
			func(context.Context) (bool, error) { return cond(), nil }); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}

	// Several clients at once.
	each := func(f func(i int) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, pods)
		const clients = 6
		for c := range clients {
			wg.Go(func() {
				for i := c; i < pods; i += clients {
					if err := f(i); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	each(func(i int) error {
		p := apiserver.NewPod(ns, fmt.Sprintf("p-%d", i), node)
		p.Annotations = map[string]string{podsim.AnnotationSandboxDelay: "0s..100ms", podsim.AnnotationStartDelay: "0s..50ms"}
		_, err := srv.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		return err
	})
	poll("a status of every pod", func() bool { return nStepped.Load() == pods })
	poll("PATCHes held", func() bool { return held.Load() > 0 })
	each(func(i int) error {
		return srv.Client.CoreV1().Pods(ns).Delete(ctx, fmt.Sprintf("p-%d", i), metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	// The agent's one watch delivers events in order: once it has stepped a pod created
	// after the deletions, it has handled every one of them.
	srv.CreatePod(t, apiserver.NewPod(ns, marker, node))
	select {
	case <-markerOK:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not step the marker pod within 30 s")
	}
	heldThen := held.Load()
	unhold()
	poll("the marker pod Running", func() bool {
		p, err := srv.Client.CoreV1().Pods(ns).Get(ctx, marker, metav1.GetOptions{})
		return err == nil && p.Status.Phase == v1.PodRunning
	})
	// What a forgotten pod's PATCH would still do, it does within a round trip or two.
	time.Sleep(time.Second)
	got := nf.get()
	t.Logf("%d pods force-deleted with %d status PATCHes held at the transport: %d requests answered 404", pods, heldThen, len(got))
	for i, r := range got {
		if i == 10 {
			t.Logf("...")
			break
		}
		t.Logf("404: %s", r)
	}
	if len(got) != 0 {
		t.Errorf("%d requests about pods answered 404 Not Found after the agent saw the pods deleted, want 0", len(got))
	}
}
