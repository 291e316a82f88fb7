package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// StartServer starts an embedded etcd and a kube-apiserver v1.37.0 in this process, as
// Start does, for a program that has no test: a command that serves an API server to
// other processes (cmd/apiserver), or a TestMain that must keep one server for every
// test. It returns once the server is healthy and the default namespace exists.
//
// The upstream harnesses it builds on (k8s.io/apiserver/pkg/storage/etcd3/testserver and
// k8s.io/kubernetes/cmd/kube-apiserver/app/testing) take a testing.TB; StartServer gives
// them one of its own that writes their log lines to logw (nil discards them), turns a
// fatal failure during start into the returned error and keeps their cleanups for stop.
//
// stop shuts the API server down, then etcd, and removes their temporary directories; it
// is safe to call more than once. On error, everything started so far is already stopped.
// Cancelling ctx after StartServer returned does not stop the server; call stop.
func StartServer(ctx context.Context, logw io.Writer, opts ...Option) (srv *Server, stop func(), err error) {
	tb := newProgramTB(ctx, logw)
	stop = sync.OnceFunc(tb.finish)
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		f, ok := r.(programFatal)
		if !ok {
			panic(r)
		}
		stop()
		srv, stop, err = nil, nil, fmt.Errorf("apiserver: start kube-apiserver: %s", f.msg)
	}()
	srv = Start(tb, opts...)
	if tb.Failed() {
		stop()
		return nil, nil, fmt.Errorf("apiserver: start kube-apiserver: %w", tb.firstError())
	}
	return srv, stop, nil
}

// programFatal is the panic value with which programTB.FailNow unwinds StartServer.
type programFatal struct{ msg string }

// programTB is the testing.TB that StartServer hands to the upstream test harnesses:
// logs go to a writer, a fatal failure panics with programFatal (recovered by
// StartServer, or by nobody if it happens later on another goroutine: a server that dies
// after start ends the program), and cleanups wait for finish.
type programTB struct {
	testing.TB // nil: only supplies the unexported method; every method is overridden

	logw   io.Writer
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	cleanups []func()
	errs     []string
}

func newProgramTB(ctx context.Context, logw io.Writer) *programTB {
	if logw == nil {
		logw = io.Discard
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &programTB{logw: logw, ctx: ctx, cancel: cancel}
}

// finish cancels Context and runs the cleanups, last in first out, as the testing
// package does when a test ends.
func (p *programTB) finish() {
	p.cancel()
	for {
		p.mu.Lock()
		n := len(p.cleanups)
		if n == 0 {
			p.mu.Unlock()
			return
		}
		f := p.cleanups[n-1]
		p.cleanups = p.cleanups[:n-1]
		p.mu.Unlock()
		f()
	}
}

func (p *programTB) firstError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) == 0 {
		return errors.New("failed")
	}
	return errors.New(p.errs[0])
}

func (p *programTB) write(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	io.WriteString(p.logw, s)
}

func (p *programTB) fail(s string) {
	p.write(s)
	p.mu.Lock()
	p.errs = append(p.errs, s)
	p.mu.Unlock()
}

func (p *programTB) ArtifactDir() string               { return p.TempDir() }
func (p *programTB) Attr(key, value string)            { p.write(key + "=" + value) }
func (p *programTB) Error(args ...any)                 { p.fail(fmt.Sprint(args...)) }
func (p *programTB) Errorf(format string, args ...any) { p.fail(fmt.Sprintf(format, args...)) }
func (p *programTB) Fail()                             { p.fail("failed") }
func (p *programTB) Failed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.errs) > 0
}
func (p *programTB) FailNow()          { panic(programFatal{msg: p.firstError().Error()}) }
func (p *programTB) Fatal(args ...any) { p.fail(fmt.Sprint(args...)); p.FailNow() }
func (p *programTB) Fatalf(format string, args ...any) {
	p.fail(fmt.Sprintf(format, args...))
	p.FailNow()
}
func (p *programTB) Helper()                          {}
func (p *programTB) Log(args ...any)                  { p.write(fmt.Sprint(args...)) }
func (p *programTB) Logf(format string, args ...any)  { p.write(fmt.Sprintf(format, args...)) }
func (p *programTB) Name() string                     { return "apiserver" }
func (p *programTB) Skip(args ...any)                 { p.Fatal(append([]any{"skip: "}, args...)...) }
func (p *programTB) SkipNow()                         { p.Fatal("skip") }
func (p *programTB) Skipf(format string, args ...any) { p.Fatalf("skip: "+format, args...) }
func (p *programTB) Skipped() bool                    { return false }
func (p *programTB) Context() context.Context         { return p.ctx }
func (p *programTB) Output() io.Writer                { return programWriter{p} }
func (p *programTB) Cleanup(f func()) {
	p.mu.Lock()
	p.cleanups = append(p.cleanups, f)
	p.mu.Unlock()
}
func (p *programTB) Setenv(key, value string) {
	old, had := os.LookupEnv(key)
	if err := os.Setenv(key, value); err != nil {
		p.Fatalf("setenv %s: %v", key, err)
	}
	p.Cleanup(func() {
		if had {
			os.Setenv(key, old)
		} else {
			os.Unsetenv(key)
		}
	})
}
func (p *programTB) Chdir(dir string) {
	old, err := os.Getwd()
	if err != nil {
		p.Fatalf("getwd: %v", err)
	}
	if err := os.Chdir(dir); err != nil {
		p.Fatalf("chdir %s: %v", dir, err)
	}
	p.Cleanup(func() { os.Chdir(old) })
}
func (p *programTB) TempDir() string {
	dir, err := os.MkdirTemp("", "podstatus-apiserver-")
	if err != nil {
		p.Fatalf("temp dir: %v", err)
	}
	p.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

type programWriter struct{ p *programTB }

func (w programWriter) Write(b []byte) (int, error) { w.p.write(string(b)); return len(b), nil }
