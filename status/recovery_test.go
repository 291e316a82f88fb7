package status

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podstatus/podstatus/status/statustest"
)

// outageClient is statustest's server behind a network that can go down: while down,
// every request fails with the transport error set for its pod (no HTTP answer); while
// up, a pod with an HTTP error set gets that answer from the server.
type outageClient struct {
	*statustest.Server
	mu        sync.Mutex
	down      bool
	transport map[string]error // per pod, while down (default: connection refused)
	answer    map[string]error // per pod, while up: an HTTP error the server returns
	requests  map[string]int
	gets      map[string]int
	patched   map[string][]time.Time // successful PATCHes
}

func newOutageClient(srv *statustest.Server) *outageClient {
	return &outageClient{Server: srv, transport: map[string]error{}, answer: map[string]error{},
		requests: map[string]int{}, gets: map[string]int{}, patched: map[string][]time.Time{}}
}

func (c *outageClient) fault(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests[name]++
	if c.down {
		if err := c.transport[name]; err != nil {
			return err
		}
		return refused()
	}
	return c.answer[name]
}

func (c *outageClient) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	c.mu.Lock()
	c.gets[name]++
	c.mu.Unlock()
	if err := c.fault(name); err != nil {
		return nil, err
	}
	return c.Server.GetPod(ctx, namespace, name)
}

func (c *outageClient) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	if err := c.fault(name); err != nil {
		return nil, err
	}
	p, err := c.Server.PatchPodStatus(ctx, namespace, name, patch)
	if err == nil {
		c.mu.Lock()
		c.patched[name] = append(c.patched[name], time.Now())
		c.mu.Unlock()
	}
	return p, err
}

func (c *outageClient) setDown(down bool) {
	c.mu.Lock()
	c.down = down
	c.mu.Unlock()
}

func (c *outageClient) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests[name]
}

// firstPatchAfter is when name was first patched at or after t (zero if not).
func (c *outageClient) firstPatchAfter(name string, t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, at := range c.patched[name] {
		if !at.Before(t) {
			return at
		}
	}
	return time.Time{}
}

// The transport failures client-go reports when no HTTP answer came back.
func refused() error {
	return &url.Error{Op: "Patch", URL: "https://10.0.0.1:6443/api/v1/namespaces/new/pods/x/status",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
}

func reset() error {
	return &url.Error{Op: "Patch", URL: "https://10.0.0.1:6443/api/v1/namespaces/new/pods/x/status",
		Err: &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}}
}

func eof() error {
	return &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api/v1/namespaces/new/pods/x", Err: io.EOF}
}

func unanswered() error {
	return &url.Error{Op: "Patch", URL: "https://10.0.0.1:6443/api/v1/namespaces/new/pods/x/status",
		Err: fmt.Errorf("net/http: request canceled: %w", context.DeadlineExceeded)}
}

// recoveryRun is what one outage scenario observed.
type recoveryRun struct {
	heal       time.Time
	recoveries []RecoveryEvent
	answerAt   []time.Time
	// patchedAt is each transport-failed pod's first successful PATCH after heal.
	patchedAt map[string]time.Time
	// outageRequests counts every request made during the outage.
	outageRequests int
	// httpRequests and httpDeadlines are the requests of the pods that failed with an
	// answer (h429, h503) before and 3 s after heal, and their backoff deadlines.
	httpRequestsBefore, httpRequestsAfter   map[string]int
	httpDeadlinesBefore, httpDeadlinesAfter map[string]time.Time
	// gets counts each pod's GETs over the whole run.
	gets map[string]int
}

var (
	transportPods = []string{"t-refused", "t-reset", "t-eof", "t-timeout"}
	httpPods      = []string{"h429", "h503"}
)

// runOutage plays, in a synctest bubble: pods h429 (429, Retry-After 300 s) and h503
// (503 eight times in a row, ~60 s backoff) fail with answers for 64 s; then the network
// goes down for 20 s while the four t- pods get a status each (each failing with its
// kind of transport failure); then it heals, and the scenario watches 3 s.
func runOutage(t *testing.T, retry RetryOptions) recoveryRun {
	t.Helper()
	var run recoveryRun
	srv := statustest.NewServer()
	c := newOutageClient(srv)
	var mu sync.Mutex
	obs := &Observer{OnRecovery: func(ev RecoveryEvent) {
		mu.Lock()
		run.recoveries = append(run.recoveries, ev)
		run.answerAt = append(run.answerAt, time.Now())
		mu.Unlock()
	}}
	m := NewManager(c, Options{Observer: obs, Retry: retry}) // the bubble's clock
	pods := map[string]*v1.Pod{}
	for _, name := range append(slices.Clone(transportPods), httpPods...) {
		p := mgrPod()
		p.Name, p.UID = name, types.UID("uid-"+name)
		pods[name] = mgrCreate(t, srv, p)
		m.ObservePod(context.Background(), pods[name])
	}
	c.transport["t-reset"], c.transport["t-eof"], c.transport["t-timeout"] = reset(), eof(), unanswered()
	c.answer["h429"] = statustest.TooManyRequests(300)
	c.answer["h503"] = statustest.ServiceUnavailable()
	mgrRun(t, m)
	for _, name := range httpPods {
		mgrSet(t, m, pods[name], v1.PodStatus{Message: "before"})
	}
	time.Sleep(64 * time.Second)
	deadlines := func() map[string]time.Time {
		m.mu.Lock()
		defer m.mu.Unlock()
		out := map[string]time.Time{}
		for _, name := range httpPods {
			out[name] = m.pods[types.UID("uid-"+name)].notBefore
		}
		return out
	}
	counts := func() map[string]int {
		out := map[string]int{}
		for _, name := range httpPods {
			out[name] = c.count(name)
		}
		return out
	}
	run.httpRequestsBefore, run.httpDeadlinesBefore = counts(), deadlines()

	c.setDown(true)
	start := 0
	for _, name := range append(slices.Clone(transportPods), httpPods...) {
		start += c.count(name)
	}
	for _, name := range transportPods {
		mgrSet(t, m, pods[name], v1.PodStatus{Message: "during the outage"})
	}
	time.Sleep(20 * time.Second)
	c.setDown(false)
	run.heal = time.Now()
	for _, name := range append(slices.Clone(transportPods), httpPods...) {
		run.outageRequests += c.count(name)
	}
	run.outageRequests -= start
	time.Sleep(3 * time.Second)
	synctest.Wait()
	run.patchedAt = map[string]time.Time{}
	for _, name := range transportPods {
		run.patchedAt[name] = c.firstPatchAfter(name, run.heal)
	}
	run.httpRequestsAfter, run.httpDeadlinesAfter = counts(), deadlines()
	run.gets = map[string]int{}
	c.mu.Lock()
	maps.Copy(run.gets, c.gets)
	c.mu.Unlock()
	return run
}

// TestRecoveryWakesTransportFailures is the wake-up rule of RetryOptions.RecoveryWindow:
// after 20 s of transport failures (refused, reset, EOF, unanswered), the probe finds the
// healed server within ProbeInterval, and its answer makes every transport-failed pod due
// at once, spread from a drawn offset and paced at RecoveryRate; the pods whose last
// failure was an HTTP answer (429, 503) keep their backoff and send nothing.
func TestRecoveryWakesTransportFailures(t *testing.T) {
	seed := uint64(1)
	retry := RetryOptions{Jitter: -1, Seed: &seed, RecoveryRate: 10} // 100 ms apart, to see the pace
	synctest.Test(t, func(t *testing.T) {
		run := runOutage(t, retry)
		const (
			probe  = time.Second // ProbeInterval's default, no jitter
			window = time.Second // RecoveryWindow's default
			gap    = 100 * time.Millisecond
		)
		// Without probes the pods would retry at their backoff deadlines (0.5, 1, 2, 4, 8,
		// 16 s after their failures: the next one ~11.5 s after heal); with them, 4 pods
		// make at most ~5 backoff retries each and one probe a second: ~40 requests.
		if run.outageRequests > 45 {
			t.Errorf("%d requests during the 20 s outage: more than the backoff and one probe a second", run.outageRequests)
		}
		if len(run.recoveries) != 1 {
			t.Fatalf("recoveries %+v, want one, when the first probe after heal is answered", run.recoveries)
		}
		ev, at := run.recoveries[0], run.answerAt[0]
		if d := at.Sub(run.heal); d < 0 || d > probe {
			t.Errorf("the server's first answer came %v after heal, want within ProbeInterval %v", d, probe)
		}
		// The probe is one of the transport-failed pods; its answer wakes the other three.
		if ev.Pods != len(transportPods)-1 || ev.First < 0 || ev.First >= window || ev.Last != ev.First+2*gap {
			t.Errorf("recovery %+v: want 3 pods, First in [0, %v), Last = First + 2×%v", ev, window, gap)
		}
		var woken []time.Duration
		for _, name := range transportPods {
			p := run.patchedAt[name]
			if p.IsZero() {
				t.Errorf("%s not patched within 3 s of heal", name)
				continue
			}
			if d := p.Sub(at); d > 0 {
				woken = append(woken, d)
			}
		}
		slices.Sort(woken)
		want := []time.Duration{ev.First, ev.First + gap, ev.First + 2*gap}
		if !slices.Equal(woken, want) {
			t.Errorf("woken pods patched %v after the answer, want %v (offset, then one every 1/RecoveryRate)", woken, want)
		}
		// A refused connection never sent the PATCH: its retries need no GET. A reset, an
		// EOF or an unanswered request may have been applied: the retry GETs first.
		for _, name := range transportPods {
			if got, want := run.gets[name] > 0, name != "t-refused"; got != want {
				t.Errorf("%s: %d GETs, want GETs %t", name, run.gets[name], want)
			}
		}
		for _, name := range httpPods {
			if b, a := run.httpRequestsBefore[name], run.httpRequestsAfter[name]; a != b {
				t.Errorf("%s (last failure an HTTP answer) made %d requests during the outage and after heal, want 0", name, a-b)
			}
			if b, a := run.httpDeadlinesBefore[name], run.httpDeadlinesAfter[name]; !a.Equal(b) || a.Sub(run.heal) < 30*time.Second {
				t.Errorf("%s backoff deadline %v, before the outage %v: want it kept, well after heal %v", name, a, b, run.heal)
			}
		}
	})
}

// TestRecoveryOffsetIsPerManager: the offset before the first woken retry is drawn from
// the Manager's own random source: reproducible for a fixed seed, different for another
// (so Managers that see the server come back together spread their retries).
func TestRecoveryOffsetIsPerManager(t *testing.T) {
	first := func(seed uint64) time.Duration {
		var ev RecoveryEvent
		synctest.Test(t, func(t *testing.T) {
			run := runOutage(t, RetryOptions{Jitter: -1, Seed: &seed})
			if len(run.recoveries) != 1 {
				t.Fatalf("recoveries %+v, want one", run.recoveries)
			}
			ev = run.recoveries[0]
		})
		return ev.First
	}
	a, b, a2 := first(1), first(2), first(1)
	if a != a2 {
		t.Errorf("seed 1 drew offsets %v and %v: want the same", a, a2)
	}
	if a == b {
		t.Errorf("seeds 1 and 2 drew the same offset %v", a)
	}
}

// TestRecoveryOff: RecoveryWindow < 0 turns the rule off; transport-failed pods wait
// for their backoff deadlines (~11.5 s after heal here), and no probe runs.
func TestRecoveryOff(t *testing.T) {
	seed := uint64(1)
	synctest.Test(t, func(t *testing.T) {
		run := runOutage(t, RetryOptions{Jitter: -1, Seed: &seed, RecoveryWindow: -1})
		if len(run.recoveries) != 0 {
			t.Errorf("recoveries %+v with the rule off", run.recoveries)
		}
		for _, name := range transportPods {
			if p := run.patchedAt[name]; !p.IsZero() {
				t.Errorf("%s patched %v after heal with the rule off, want at its backoff deadline", name, p.Sub(run.heal))
			}
		}
	})
}

func TestAnswered(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, true},
		{statustest.InternalError(), true},
		{statustest.ServiceUnavailable(), true},
		{statustest.TooManyRequests(1), true},
		{statustest.Timeout(), true}, // a 504 is an answer
		{fmt.Errorf("patch status: %w", statustest.Conflict("x")), true},
		{refused(), false},
		{reset(), false},
		{eof(), false},
		{unanswered(), false},
		{context.DeadlineExceeded, false},
		{io.ErrUnexpectedEOF, false},
	} {
		if got := answered(tc.err); got != tc.want {
			t.Errorf("answered(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

func TestUnsent(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{refused(), true},
		{reset(), false},
		{eof(), false},
		{unanswered(), false},
		{statustest.InternalError(), false},
	} {
		if got := unsent(tc.err); got != tc.want {
			t.Errorf("unsent(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

// hangClient is an outageClient whose requests for the pods in hang get no answer: they
// block until their context ends (a black-holed connection, cut by RequestTimeout).
type hangClient struct {
	*outageClient
	hang map[string]bool
}

func (c *hangClient) black(ctx context.Context, name string) error {
	if !c.hang[name] {
		return nil
	}
	<-ctx.Done()
	return unanswered()
}

func (c *hangClient) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	if err := c.black(ctx, name); err != nil {
		return nil, err
	}
	return c.outageClient.GetPod(ctx, namespace, name)
}

func (c *hangClient) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	if err := c.black(ctx, name); err != nil {
		return nil, err
	}
	return c.outageClient.PatchPodStatus(ctx, namespace, name, patch)
}

// hangWorld is a Manager whose Run runs in the bubble with RequestTimeout 30 s over a
// hangClient whose pod "hung" black-holes, the pods created (hung and the others, by
// name), and when the Manager heard the server again (OnRecovery).
type hangWorld struct {
	m    *Manager
	c    *hangClient
	pods map[string]*v1.Pod

	mu       sync.Mutex
	answered []time.Time
}

// newHangWorld starts a hangWorld with workers workers and pods hung and names.
func newHangWorld(t *testing.T, workers int, names ...string) *hangWorld {
	t.Helper()
	w := &hangWorld{pods: map[string]*v1.Pod{}}
	srv := statustest.NewServer()
	w.c = &hangClient{outageClient: newOutageClient(srv), hang: map[string]bool{"hung": true}}
	obs := &Observer{OnRecovery: func(RecoveryEvent) {
		w.mu.Lock()
		w.answered = append(w.answered, time.Now())
		w.mu.Unlock()
	}}
	w.m = NewManager(w.c, Options{Workers: workers, RequestTimeout: 30 * time.Second, Retry: RetryOptions{Jitter: -1}, Observer: obs})
	for _, name := range append([]string{"hung"}, names...) {
		p := mgrPod()
		p.Name, p.UID = name, types.UID("uid-"+name)
		w.pods[name] = mgrCreate(t, srv, p)
		w.m.ObservePod(context.Background(), w.pods[name])
	}
	mgrRun(t, w.m)
	return w
}

// set gives each named pod a new status.
func (w *hangWorld) set(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		mgrSet(t, w.m, w.pods[name], v1.PodStatus{Message: "during"})
	}
}

// healAndAwaitAnswer heals the network, waits 3 s of the bubble's time, and fails the
// test unless the Manager's first answer from the server came within ProbeInterval (1 s)
// of the heal. It returns when the heal was.
func (w *hangWorld) healAndAwaitAnswer(t *testing.T) time.Time {
	t.Helper()
	w.c.setDown(false)
	heal := time.Now()
	time.Sleep(3 * time.Second)
	synctest.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.answered) == 0 || w.answered[0].Sub(heal) > time.Second {
		t.Fatalf("server answers seen at %v (heal at %v): want the first within ProbeInterval of heal", w.answered, heal)
	}
	return heal
}

// TestHungRequestHoldsOneWorker: a PATCH that hangs until RequestTimeout (30 s) holds
// one of Run's workers, not Run: a change made meanwhile goes out at once on the other
// worker. (When Run waited for each round's slowest request, it went out 30 s later.)
func TestHungRequestHoldsOneWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newHangWorld(t, 2, "b")
		w.set(t, "hung")
		time.Sleep(time.Second)
		synctest.Wait()
		changed := time.Now()
		w.set(t, "b")
		synctest.Wait()
		switch at := w.c.firstPatchAfter("b", changed); {
		case at.IsZero():
			t.Errorf("b not patched after its change while hung's PATCH hangs: want at once")
		case at.After(changed):
			t.Errorf("b patched %v after its change: want at once while hung's PATCH hangs", at.Sub(changed))
		}
		if n := w.c.count("b"); n != 1 {
			t.Errorf("b: %d requests, want 1", n)
		}
	})
}

// TestProbeWhileWorkersHang: while the server is unreachable and one of Run's two workers
// is held by a request that hangs until RequestTimeout (30 s), the probe still goes out
// every ProbeInterval (1 s) on its own goroutine, so the healed server is found within a
// second, and the woken pods go out on the free worker. (When the probe waited for the
// round's slowest request, the server was found 30 s late.)
func TestProbeWhileWorkersHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newHangWorld(t, 2, "a", "b", "c")
		w.c.setDown(true)
		w.set(t, "a", "b", "c", "hung")
		time.Sleep(5 * time.Second) // a, b and c back off, refused; hung holds a worker
		synctest.Wait()
		heal := w.healAndAwaitAnswer(t)
		for _, name := range []string{"a", "b", "c"} {
			if at := w.c.firstPatchAfter(name, heal); at.IsZero() {
				t.Errorf("%s not patched within 3 s of heal while hung's request hangs", name)
			}
		}
	})
}

// TestProbeTakesAQueuedPod: with one worker held by a request that hangs until
// RequestTimeout (30 s), the pods due for a retry wait in Run's queue behind it; the
// probe takes one of them from the queue, so the healed server is still found within
// ProbeInterval. (A probe that skipped queued pods found none to send and waited 30 s.)
func TestProbeTakesAQueuedPod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newHangWorld(t, 1, "a", "b")
		w.c.setDown(true)
		w.set(t, "a", "b")
		synctest.Wait() // a and b refused: they back off
		w.set(t, "hung")
		time.Sleep(5 * time.Second) // hung holds the worker; a and b fall due behind it
		synctest.Wait()
		heal := w.healAndAwaitAnswer(t)
		if a, b := w.c.firstPatchAfter("a", heal), w.c.firstPatchAfter("b", heal); a.IsZero() && b.IsZero() {
			t.Errorf("neither a nor b patched within 3 s of heal: the probe sent neither")
		}
	})
}
