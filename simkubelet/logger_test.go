package simkubelet

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
)

// TestRunLogsWithTheContextsLogger: with no Options.Logger, Run logs with the logger its
// context carries (here: an API server that answers every request with a 500, which the
// agent reports).
func TestRunLogsWithTheContextsLogger(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	k, err := New(&rest.Config{Host: srv.URL}, Options{Nodes: 1, ProgressInterval: -1, ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	log := funcr.New(func(prefix, args string) {
		select {
		case lines <- prefix + " " + args:
		default:
		}
	}, funcr.Options{})
	ctx, cancel := context.WithCancel(logr.NewContext(context.Background(), log))
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	select {
	case l := <-lines:
		t.Logf("first line: %s", l)
	case <-time.After(30 * time.Second):
		t.Error("Run logged nothing through its context's logger in 30 s")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30 s of its context's end")
	}
}
