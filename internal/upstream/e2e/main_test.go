package e2e

import (
	"context"
	"flag"
	"fmt"
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
// The server's log is kept (up to 4 MiB) and printed only if the server fails to start.
func TestMain(m *testing.M) {
	flag.Parse() // the upstream test server reads testing.Verbose()
	var log cappedLog
	s, stop, err := apiserver.StartServer(context.Background(), &log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: the shared kube-apiserver failed: %v; its log:\n%s", err, log.String())
		os.Exit(1)
	}
	srv = s
	code := func() int {
		defer stop()
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

// cappedLog keeps the shared server's log lines, up to 4 MiB, for when it fails.
type cappedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *cappedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() < 4<<20 {
		l.buf.Write(p)
	}
	return len(p), nil
}

func (l *cappedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
