package bench

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestRetryBusy: the answers of a busy API server are tried again with growing waits, at
// most busyAttempts times; any other error, and success, end it at once.
func TestRetryBusy(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	timeout := apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
	for _, tc := range []struct {
		name      string
		errs      []error // fn's answers, in order; nil after the last
		wantCalls int
		wantErr   bool
		wantWait  time.Duration
	}{
		{"succeeds", nil, 1, false, 0},
		{"504 twice then succeeds", []error{timeout, apierrors.NewServerTimeout(pods, "delete", 1)}, 3, false, 3 * time.Second},
		{"429 then 503 then succeeds", []error{apierrors.NewTooManyRequests("slow", 1), apierrors.NewServiceUnavailable("busy")}, 3, false, 3 * time.Second},
		{"always busy", []error{timeout, timeout, timeout, timeout, timeout, timeout}, busyAttempts, true, 15 * time.Second},
		{"forbidden is final", []error{apierrors.NewForbidden(pods, "p", nil)}, 1, true, 0},
		{"not found is final", []error{apierrors.NewNotFound(pods, "p")}, 1, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var out strings.Builder
				r := &runner{cfg: Config{Progress: &out}}
				calls := 0
				start := time.Now()
				err := r.retryBusy(context.Background(), "deleting pod p", func() error {
					calls++
					if calls <= len(tc.errs) {
						return tc.errs[calls-1]
					}
					return nil
				})
				if calls != tc.wantCalls || (err != nil) != tc.wantErr {
					t.Errorf("%d calls, error %v; want %d calls, an error: %v", calls, err, tc.wantCalls, tc.wantErr)
				}
				if waited := time.Since(start); waited != tc.wantWait {
					t.Errorf("waited %s, want %s", waited, tc.wantWait)
				}
				if n := strings.Count(out.String(), "trying again"); n != tc.wantCalls-1 {
					t.Errorf("progress said %d retries, want %d:\n%s", n, tc.wantCalls-1, out.String())
				}
			})
		})
	}
}

// TestRetryBusyStopsWithContext: a cancelled context ends the waiting with the last error.
func TestRetryBusyStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		r := &runner{cfg: Config{Progress: &out}}
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		calls := 0
		err := r.retryBusy(ctx, "creating pod p", func() error {
			calls++
			return apierrors.NewServiceUnavailable("busy")
		})
		if !apierrors.IsServiceUnavailable(err) || calls != 2 {
			t.Errorf("%d calls, error %v; want 2 calls and the 503", calls, err)
		}
	})
}
