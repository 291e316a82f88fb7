package vkstatus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

// logLine is one line a test logger received.
type logLine struct {
	err   error
	msg   string
	error bool
}

// lines collects what a logger received; safe for concurrent use.
type lines struct {
	mu  sync.Mutex
	all []logLine
}

func (l *lines) add(ln logLine) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, ln)
}

// errors returns the error-level lines.
func (l *lines) errors() []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logLine
	for _, ln := range l.all {
		if ln.error {
			out = append(out, ln)
		}
	}
	return out
}

// waitError waits up to 10 s for an error-level line whose error matches target.
func (l *lines) waitError(target error) (logLine, bool) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, ln := range l.errors() {
			if errors.Is(ln.err, target) {
				return ln, true
			}
		}
		time.Sleep(time.Millisecond)
	}
	return logLine{}, false
}

// logrSink is a logr.LogSink into lines.
type logrSink struct{ l *lines }

func (s logrSink) Init(logr.RuntimeInfo)            {}
func (s logrSink) Enabled(int) bool                 { return true }
func (s logrSink) Info(_ int, msg string, _ ...any) { s.l.add(logLine{msg: msg}) }
func (s logrSink) Error(err error, msg string, _ ...any) {
	s.l.add(logLine{err: err, msg: msg, error: true})
}
func (s logrSink) WithValues(...any) logr.LogSink { return s }
func (s logrSink) WithName(string) logr.LogSink   { return s }
func testLogger(l *lines) logr.Logger             { return logr.New(logrSink{l}) }

var _ logr.LogSink = logrSink{}

// TestNotWired: a Client whose event handler was never asked for refuses UpdateStatus
// with ErrNotWired; one whose statuses wait for a Run that never starts logs, at error
// level and matching ErrNotWired, once NotRunningGrace has passed.
func TestNotWired(t *testing.T) {
	ctx := context.Background()
	t.Run("no event handler", func(t *testing.T) {
		srv := statustest.NewServer(gatedPod("web"))
		c := New(srvGetter{srv}, Options{})
		_, err := c.Pods("ns").UpdateStatus(ctx, providerPod(gatedPod("web")), metav1.UpdateOptions{})
		if !errors.Is(err, ErrNotWired) || !strings.Contains(err.Error(), "EventHandler") {
			t.Errorf("UpdateStatus without the event handler: err = %v, want ErrNotWired naming EventHandler", err)
		}
	})
	t.Run("no Run", func(t *testing.T) {
		var got lines
		w := newWorld(t, Options{Status: statusLogger(testLogger(&got))}, gatedPod("web"))
		if _, err := w.c.Pods("ns").UpdateStatus(ctx, providerPod(gatedPod("web")), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		w.clk.Step(NotRunningGrace)
		ln, ok := got.waitError(ErrNotWired)
		if !ok {
			t.Fatalf("no error-level line matching ErrNotWired after %s without Run; got %+v", NotRunningGrace, got.errors())
		}
		if !strings.Contains(ln.err.Error(), "Run") {
			t.Errorf("logged %v, want it to name Run", ln.err)
		}
	})
	t.Run("sent by Sync", func(t *testing.T) {
		var got lines
		w := newWorld(t, Options{Status: statusLogger(testLogger(&got))}, gatedPod("web"))
		if _, err := w.c.Pods("ns").UpdateStatus(ctx, providerPod(gatedPod("web")), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := w.sync(t); err != nil {
			t.Fatal(err)
		}
		w.clk.Step(NotRunningGrace)
		// A later status is checked lazily as well: it finds the watch disarmed.
		if _, err := w.c.Pods("ns").UpdateStatus(ctx, creatingPodAfter(w.peek(t, "web")), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // the fake clock's AfterFunc runs in its own goroutine
		for _, ln := range got.errors() {
			if errors.Is(ln.err, ErrNotWired) {
				t.Errorf("logged %v although Sync sent the status", ln.err)
			}
		}
	})
}

// creatingPodAfter is a status that differs from p's: its container restarted and waits.
func creatingPodAfter(p *v1.Pod) *v1.Pod {
	pp := providerPod(p)
	pp.Status.ContainerStatuses[0].RestartCount = 1
	return pp
}

func statusLogger(l logr.Logger) status.Options { return status.Options{Logger: l} }

// TestWire: Wire makes the Client virtual-kubelet's PodClient and registers its event
// handler on the pod informer; input no caller should build is an InputError.
func TestWire(t *testing.T) {
	pod := gatedPod("web")
	cs := fake.NewClientset(pod)
	c := New(cs.CoreV1(), Options{})
	factory := informers.NewSharedInformerFactory(cs, 0)
	cfg := &node.PodControllerConfig{PodInformer: factory.Core().V1().Pods()}
	if err := c.Wire(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.PodClient != c {
		t.Errorf("PodClient is %T, want the Client", cfg.PodClient)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), cfg.PodInformer.Informer().HasSynced) {
		t.Fatal("informer not synced")
	}
	// The handler saw the pod: UpdateStatus answers with the server's copy (its labels).
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		st := c.known["ns/web"]
		c.mu.Unlock()
		if st != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the event handler never saw the pod")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := c.Pods("ns").UpdateStatus(ctx, providerPod(pod), metav1.UpdateOptions{}); err != nil {
		t.Errorf("UpdateStatus after Wire: %v", err)
	}
	for _, bad := range []*node.PodControllerConfig{nil, {}} {
		if err := New(cs.CoreV1(), Options{}).Wire(bad); !errors.Is(err, podstatus.ErrInvalidInput) {
			t.Errorf("Wire(%+v): err = %v, want ErrInvalidInput", bad, err)
		}
	}
}

// vkRecorder is a virtual-kubelet log.Logger into lines.
type vkRecorder struct {
	l   *lines
	err error
}

func (r vkRecorder) Debug(...any)                {}
func (r vkRecorder) Debugf(string, ...any)       {}
func (r vkRecorder) Info(args ...any)            { r.l.add(logLine{msg: fmt.Sprint(args...)}) }
func (r vkRecorder) Infof(f string, args ...any) { r.l.add(logLine{msg: fmt.Sprintf(f, args...)}) }
func (r vkRecorder) Warn(args ...any)            { r.Info(args...) }
func (r vkRecorder) Warnf(f string, args ...any) { r.Infof(f, args...) }
func (r vkRecorder) Error(args ...any) {
	r.l.add(logLine{err: r.err, msg: fmt.Sprint(args...), error: true})
}
func (r vkRecorder) Errorf(f string, args ...any)         { r.Error(fmt.Sprintf(f, args...)) }
func (r vkRecorder) Fatal(args ...any)                    { r.Error(args...) }
func (r vkRecorder) Fatalf(f string, args ...any)         { r.Errorf(f, args...) }
func (r vkRecorder) WithField(string, any) vklog.Logger   { return r }
func (r vkRecorder) WithFields(vklog.Fields) vklog.Logger { return r }
func (r vkRecorder) WithError(err error) vklog.Logger     { r.err = err; return r }

// TestFailuresLoggedThroughVirtualKubelet: without Options.Status.Logger, a status write
// that fails (and will be retried) is an error-level line in virtual-kubelet's logger
// (log.L), where a provider already looks, not a discarded one.
func TestFailuresLoggedThroughVirtualKubelet(t *testing.T) {
	var got lines
	saved := vklog.L
	vklog.L = vkRecorder{l: &got}
	t.Cleanup(func() { vklog.L = saved })
	w := newWorld(t, Options{}, gatedPod("web"))
	w.srv.FailNext(statustest.VerbPatch, 1, statustest.ServiceUnavailable())
	if _, err := w.c.Pods("ns").UpdateStatus(context.Background(), providerPod(gatedPod("web")), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(t); !containsServiceUnavailable(err) {
		t.Fatalf("sync: err = %v, want the 503", err)
	}
	errs := got.errors()
	if len(errs) != 1 || !containsServiceUnavailable(errs[0].err) || !strings.Contains(errs[0].msg, "sync failed") {
		t.Errorf("virtual-kubelet's logger got %+v; want one error line with the 503", errs)
	}
}
