package simkubelet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/podstatus/podstatus/podsim"
)

// errorLog records the agent's error-level log lines ("msg: err").
type errorLog struct {
	mu    sync.Mutex
	lines []string
	infos []string // messages logged at V(0)
}

func (l *errorLog) logger() logr.Logger { return logr.New(errorSink{l}) }

func (l *errorLog) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, substr) {
			n++
		}
	}
	return n
}

type errorSink struct{ l *errorLog }

func (errorSink) Init(logr.RuntimeInfo)  {}
func (errorSink) Enabled(level int) bool { return level == 0 }
func (s errorSink) Info(_ int, msg string, _ ...any) {
	s.l.mu.Lock()
	s.l.infos = append(s.l.infos, msg)
	s.l.mu.Unlock()
}
func (s errorSink) WithValues(...any) logr.LogSink { return s }
func (s errorSink) WithName(string) logr.LogSink   { return s }
func (s errorSink) Error(err error, msg string, kv ...any) {
	s.l.mu.Lock()
	s.l.lines = append(s.l.lines, fmt.Sprintf("%s: %v %v", msg, err, kv))
	s.l.mu.Unlock()
}

// A node the API server rejects (422: it will be rejected again) is reported at error
// level and not retried; with no node left to serve, Run fails instead of running with
// nothing to do.
func TestAgentDoesNotRetryRejectedNodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		var creates atomic.Int32
		cs.PrependReactor("create", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
			creates.Add(1)
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Node"}, "fleet-node-0",
				field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "fleet-node-0", "rejected by a webhook")})
		})
		var log errorLog
		r, err := Options{Nodes: 1, ProgressInterval: -1, Logger: log.logger()}.resolve(restConfigForTest())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- newAgent(r).run(context.Background(), cs) }()
		select {
		case err = <-done:
		case <-time.After(time.Minute): // the bubble's clock: six retries' worth
			t.Fatalf("Run still retrying a rejected node after a minute: %d creates", creates.Load())
		}
		if err == nil || !apierrors.IsInvalid(err) {
			t.Fatalf("Run: %v, want the rejection", err)
		}
		if n := creates.Load(); n != 1 {
			t.Errorf("%d node creates, want 1", n)
		}
		if log.count("Request rejected; not retrying") != 1 {
			t.Errorf("error log %q, want one rejection", log.lines)
		}
	})
}

// A server that is down (503, a transport error) is retried with backoff; the first
// failure is said at error level with what to check, the next ones are not (a server
// down for an hour must not fill the log), and the recovery is said once.
func TestAgentRetriesServerDownAtErrorLevel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		var creates atomic.Int32
		cs.PrependReactor("create", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
			if creates.Add(1) <= 3 {
				return true, nil, apierrors.NewServiceUnavailable("down")
			}
			return false, nil, nil
		})
		var log errorLog
		stop := startFake(t, Options{Nodes: 1, ProgressInterval: -1, Logger: log.logger()}, cs)
		defer stop()
		poll(t, "the node created after three failures", func() bool {
			_, err := cs.CoreV1().Nodes().Get(context.Background(), DefaultNodeNamePrefix+"0", metav1.GetOptions{})
			return err == nil
		})
		if n := log.count("Request failed; retrying"); n != 1 {
			t.Errorf("%d error-level retry lines, want 1: %q", n, log.lines)
		}
		if n := log.count("check that the API server is up"); n != 1 {
			t.Errorf("error log %q, want it to say what to check", log.lines)
		}
		log.mu.Lock()
		defer log.mu.Unlock()
		if !slices.Contains(log.infos, "Request succeeded after failures") {
			t.Errorf("info log %q, want the recovery said", log.infos)
		}
	})
}

// --manage-single-node naming a node that does not exist is said at error level after the
// first list, and the agent keeps running: the node is adopted when it appears.
func TestAgentWarnsWhenNoNodeMatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		var log errorLog
		stop := startFake(t, Options{ManageSingleNode: "does-not-exist", ProgressInterval: -1, NodeStatusUpdateFrequency: time.Second, Logger: log.logger()}, cs)
		defer stop()
		poll(t, "an error line saying no node matches", func() bool { return log.count("No existing node matches") == 1 })
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "does-not-exist"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, "the node adopted once it exists", func() bool {
			n, err := cs.CoreV1().Nodes().Get(context.Background(), "does-not-exist", metav1.GetOptions{})
			if err != nil {
				return false
			}
			_, c := findNodeCondition(n.Status.Conditions, v1.NodeReady)
			return c != nil && c.Status == v1.ConditionTrue
		})
	})
}

// A pod's typo in a sim.podstatus.io/ key gets the Warning Event an invalid value gets,
// and the count is a Prometheus metric.
func TestAgentReportsUnknownAnnotation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		reg := prometheus.NewPedanticRegistry()
		stop := startFake(t, Options{Nodes: 1, Profile: "fast", ProgressInterval: -1, Registerer: reg}, cs)
		defer stop()
		ctx := context.Background()
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "typo", UID: "uid-typo",
				Annotations: map[string]string{podsim.AnnotationPrefix + "run-tme": "5s"}},
			Spec: v1.PodSpec{NodeName: DefaultNodeNamePrefix + "0", Containers: []v1.Container{{Name: "app", Image: "app"}}},
		}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, "a Warning Event naming the unknown key", func() bool {
			evs, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			for _, e := range evs.Items {
				if e.Reason == ReasonInvalidSimAnnotation && e.Type == v1.EventTypeWarning && strings.Contains(e.Message, "run-tme") {
					return true
				}
			}
			return false
		})
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := -1.0
		for _, mf := range mfs {
			if mf.GetName() == "podstatus_fleet_invalid_sim_annotations_total" {
				got = mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		if got != 1 {
			t.Errorf("podstatus_fleet_invalid_sim_annotations_total = %v, want 1", got)
		}
	})
}

// The answers the agent expects in its normal work are not request errors; the same codes
// elsewhere, and every transport error, are.
func TestExpectedAnswersAreNotRequestErrors(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		code         int
		isErr        bool
	}{
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", 404, false},
		{"POST", "/api/v1/nodes", 409, false},
		{"DELETE", "/api/v1/namespaces/ns/pods/p", 404, false},
		{"PATCH", "/api/v1/namespaces/ns/pods/p/status", 404, false},
		{"GET", "/api/v1/nodes/n1", 404, true},
		{"POST", "/api/v1/nodes", 422, true},
		{"PATCH", "/api/v1/nodes/n1/status", 404, true},
		{"PATCH", "/api/v1/namespaces/ns/pods/p/status", 500, true},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", 403, true},
		{"GET", "/api/v1/pods", 200, false},
	} {
		var c counters
		rt := c.wrapTransport(roundTripper(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: tc.code, Body: io.NopCloser(strings.NewReader(""))}, nil
		}))
		req, _ := http.NewRequest(tc.method, "http://server"+tc.path, nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if got := c.requestErrs.Load() == 1; got != tc.isErr {
			t.Errorf("%s %s answered %d: counted as an error %v, want %v", tc.method, tc.path, tc.code, got, tc.isErr)
		}
	}
}
