package e2e

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
)

// srv is the one kube-apiserver every test of the binary shares; each test works in its
// own namespace.
var srv *apiserver.Server

// figures collects the measured figures, printed again as a summary when the tests end.
var figures struct {
	sync.Mutex
	lines []string
}

// report logs a measured figure to the test (t.Logf) and to standard output, and keeps
// it for the summary TestMain prints.
func report(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	fmt.Printf("e2e: %s: %s\n", t.Name(), line)
	figures.Lock()
	figures.lines = append(figures.lines, t.Name()+": "+line)
	figures.Unlock()
}

// TestMain starts the API server once for the whole binary, runs the tests, prints the
// summary (request counts over every test) and fails the run if any request was rejected.
func TestMain(m *testing.M) {
	flag.Parse() // the upstream test server reads testing.Verbose()
	tb := newMainTB()
	code := func() int {
		defer tb.finish()
		srv = apiserver.Start(tb)
		fmt.Printf("e2e: kube-apiserver v1.37.0 + etcd ready in %v\n", srv.StartupTime.Round(time.Millisecond))
		code := m.Run()
		figures.Lock()
		fmt.Printf("e2e: summary of measured figures\n")
		for _, l := range figures.lines {
			fmt.Printf("e2e:   %s\n", l)
		}
		figures.Unlock()
		totals.Lock()
		tot := totals.requestTotals
		totals.Unlock()
		fmt.Printf("e2e: %d requests, %d rejected (%d GET, %d PATCH; %d deliberate UID-precondition 422s and %d resourceVersion-precondition 409s not counted as rejected)\n",
			tot.gets+tot.patches, tot.rejected, tot.gets, tot.patches, tot.uidMismatches, tot.rvConflicts)
		if tot.rejected > 0 {
			fmt.Printf("e2e: FAIL: %d requests were rejected by the API server\n", tot.rejected)
			if code == 0 {
				code = 1
			}
		}
		return code
	}()
	os.Exit(code)
}

// mainTB is the testing.TB the shared API server is started with: TestMain has no
// *testing.T, and the server must outlive every test. It buffers the server's logs
// (printed only if the server fails) and runs the cleanups, last in first out, when
// finish is called after the tests.
type mainTB struct {
	testing.TB // nil: only supplies the unexported method; every method is overridden

	mu       sync.Mutex
	cleanups []func()
	failed   bool
	log      strings.Builder
	ctx      context.Context
	cancel   context.CancelFunc
}

func newMainTB() *mainTB {
	ctx, cancel := context.WithCancel(context.Background())
	return &mainTB{ctx: ctx, cancel: cancel}
}

func (m *mainTB) finish() {
	m.cancel()
	for {
		m.mu.Lock()
		n := len(m.cleanups)
		if n == 0 {
			m.mu.Unlock()
			return
		}
		f := m.cleanups[n-1]
		m.cleanups = m.cleanups[:n-1]
		m.mu.Unlock()
		f()
	}
}

func (m *mainTB) write(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.log.Len() < 4<<20 {
		m.log.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			m.log.WriteByte('\n')
		}
	}
}

// The methods below implement testing.TB for the shared server: logs go to the buffer,
// failures end the process (FailNow), cleanups wait for finish.

func (m *mainTB) ArtifactDir() string    { return m.TempDir() }
func (m *mainTB) Attr(key, value string) { m.write(key + "=" + value) }
func (m *mainTB) Cleanup(f func()) {
	m.mu.Lock()
	m.cleanups = append(m.cleanups, f)
	m.mu.Unlock()
}
func (m *mainTB) Error(args ...any)                 { m.write(fmt.Sprint(args...)); m.Fail() }
func (m *mainTB) Errorf(format string, args ...any) { m.write(fmt.Sprintf(format, args...)); m.Fail() }
func (m *mainTB) Fail() {
	m.mu.Lock()
	m.failed = true
	m.mu.Unlock()
}

// FailNow ends the process: the shared server is broken, so no test can run.
func (m *mainTB) FailNow() {
	m.mu.Lock()
	out := m.log.String()
	m.mu.Unlock()
	fmt.Fprintf(os.Stderr, "e2e: the shared kube-apiserver failed; its log:\n%s", out)
	os.Exit(1)
}
func (m *mainTB) Failed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failed
}
func (m *mainTB) Fatal(args ...any) { m.write(fmt.Sprint(args...)); m.FailNow() }
func (m *mainTB) Fatalf(format string, args ...any) {
	m.write(fmt.Sprintf(format, args...))
	m.FailNow()
}
func (m *mainTB) Helper()                         {}
func (m *mainTB) Log(args ...any)                 { m.write(fmt.Sprint(args...)) }
func (m *mainTB) Logf(format string, args ...any) { m.write(fmt.Sprintf(format, args...)) }
func (m *mainTB) Name() string                    { return "TestMain" }
func (m *mainTB) Setenv(key, value string) {
	old, had := os.LookupEnv(key)
	if err := os.Setenv(key, value); err != nil {
		m.Fatalf("setenv %s: %v", key, err)
	}
	m.Cleanup(func() {
		if had {
			os.Setenv(key, old)
		} else {
			os.Unsetenv(key)
		}
	})
}
func (m *mainTB) Chdir(dir string) {
	old, err := os.Getwd()
	if err != nil {
		m.Fatalf("getwd: %v", err)
	}
	if err := os.Chdir(dir); err != nil {
		m.Fatalf("chdir %s: %v", dir, err)
	}
	m.Cleanup(func() { os.Chdir(old) })
}
func (m *mainTB) Skip(args ...any)                 { m.Fatal(append([]any{"skip: "}, args...)...) }
func (m *mainTB) SkipNow()                         { m.Fatal("skip") }
func (m *mainTB) Skipf(format string, args ...any) { m.Fatalf("skip: "+format, args...) }
func (m *mainTB) Skipped() bool                    { return false }
func (m *mainTB) TempDir() string {
	dir, err := os.MkdirTemp("", "podstatus-e2e-")
	if err != nil {
		m.Fatalf("temp dir: %v", err)
	}
	m.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
func (m *mainTB) Context() context.Context { return m.ctx }
func (m *mainTB) Output() io.Writer        { return tbWriter{m} }

type tbWriter struct{ m *mainTB }

func (w tbWriter) Write(p []byte) (int, error) { w.m.write(string(p)); return len(p), nil }
