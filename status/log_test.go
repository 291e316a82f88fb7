package status

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/status/statustest"
)

// logRecorder is a logr sink, at verbosity 10, that records each line as
// "<level> <message> <JSON key/values>" (level "E" for an error).
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *logRecorder) logger() logr.Logger {
	return funcr.NewJSON(func(obj string) {
		r.mu.Lock()
		r.lines = append(r.lines, obj)
		r.mu.Unlock()
	}, funcr.Options{Verbosity: 10, LogInfoLevel: ptr.To("level")})
}

// take returns the lines recorded since the last take.
func (r *logRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.lines
	r.lines = nil
	return out
}

// find returns the first line with msg, or "".
func find(lines []string, msg string) string {
	for _, l := range lines {
		if strings.Contains(l, `"msg":"`+msg+`"`) {
			return l
		}
	}
	return ""
}

// TestLogLevels: the levels CONTRIBUTING.md and the package documentation promise —
// errors at Error, state changes at V(2), one line per request at V(3), bookkeeping at
// V(4) — with the pod as {"name","namespace"} plus "podUID", and every method logging
// with its context's logger when it carries one, else with Options.Logger.
func TestLogLevels(t *testing.T) {
	var opts, fromCtx logRecorder
	srv := statustest.NewServer()
	m, _ := mgrWithServer(t, srv, Options{Logger: opts.logger()})
	ctx := logr.NewContext(context.Background(), fromCtx.logger())
	pod := mgrPod()
	m.ObservePod(ctx, mgrCreate(t, srv, pod))

	mgrSet(t, m, pod, v1.PodStatus{Phase: v1.PodRunning})
	mgrSet(t, m, pod, v1.PodStatus{Phase: v1.PodRunning})
	if l := find(opts.take(), "Ignoring same status"); !strings.Contains(l, `"level":4`) ||
		!strings.Contains(l, `"pod":{"name":"foo","namespace":"new"}`) || !strings.Contains(l, `"podUID":"12345678"`) {
		t.Errorf("same status: %q, want a V(4) line with the pod and its UID", l)
	}

	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if l := find(fromCtx.take(), "Patched pod status"); !strings.Contains(l, `"level":3`) || !strings.Contains(l, `"patch":`) {
		t.Errorf("PATCH: %q, want a V(3) line with the patch", l)
	}
	if got := opts.take(); len(got) != 0 {
		t.Errorf("Sync with a logger in its context logged to Options.Logger: %q", got)
	}

	// Ready for a second request that answers 503.
	mgrSet(t, m, pod, v1.PodStatus{Phase: v1.PodRunning, Message: "again"})
	srv.FailNext(statustest.VerbPatch, 1, apierrors.NewServiceUnavailable("down"))
	if err := m.Sync(ctx); err == nil || !strings.HasPrefix(err.Error(), "status: Sync: ") {
		t.Fatalf("Sync error %v, want status: Sync: ...", err)
	}
	if l := find(fromCtx.take(), "Pod status sync failed; will retry"); !strings.Contains(l, `"error":`) || strings.Contains(l, `"level"`) {
		t.Errorf("failed sync: %q, want an Error line", l)
	}
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	fromCtx.take()

	// Nothing to send: one V(3) line saying so.
	if _, err := srv.Update("new", "foo", func(p *v1.Pod) { p.Status.Message = "other writer" }); err != nil {
		t.Fatal(err)
	}
	p, _ := srv.Peek("new", "foo")
	m.ObservePod(ctx, p) // differs on a kubelet-owned field: queued
	if l := find(fromCtx.take(), "Pod status differs from the cached one; queued"); !strings.Contains(l, `"level":4`) {
		t.Errorf("queued by a watch event: %q, want a V(4) line on the context's logger", l)
	}
	if got := opts.take(); len(got) != 0 {
		t.Errorf("ObservePod with a logger in its context logged to Options.Logger: %q", got)
	}

	// The pod is deleted: a V(2) line, on Options.Logger for a context without one.
	mgrSet(t, m, pod, v1.PodStatus{Phase: v1.PodRunning, Message: "last"})
	if err := srv.Delete("new", "foo"); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.pods[pod.UID].baseStale = true // as after an error: the next sync GETs and sees the 404
	m.mu.Unlock()
	if err := m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l := find(opts.take(), "Dropping cached status"); !strings.Contains(l, `"level":2`) || !strings.Contains(l, `"reason":"NotFound"`) {
		t.Errorf("dropped: %q, want a V(2) line with the reason", l)
	}
}

// TestPodRefLogsAsKObj: PodRef prints and marshals as klog.KObj's ObjectRef does.
func TestPodRefLogsAsKObj(t *testing.T) {
	r := PodRef{Namespace: "ns", Name: "web", UID: "u"}
	if got := fmt.Sprint(r); got != "ns/web" {
		t.Errorf("String: %q", got)
	}
	if got := fmt.Sprint(PodRef{Name: "web"}); got != "web" {
		t.Errorf("String without namespace: %q", got)
	}
	b, err := r.MarshalJSON()
	if err != nil || string(b) != `{"name":"web","namespace":"ns"}` {
		t.Errorf("MarshalJSON: %s, %v", b, err)
	}
}
