package status

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// backoff computes per-pod retry delays. It is used under the Manager's lock.
type backoff struct {
	opts RetryOptions
	rnd  *rand.Rand
}

// newBackoff returns the backoff of o, seeded with *o.Seed or, when that is nil, with a
// seed drawn from math/rand/v2's global source (seeded by the runtime from the operating
// system's entropy), so that two Managers built with default options do not jitter alike.
func newBackoff(o RetryOptions) *backoff {
	seed := rand.Uint64()
	if o.Seed != nil {
		seed = *o.Seed
	}
	return &backoff{opts: o, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// delay returns the wait after the attempt-th consecutive failure with error err: the
// exponential delay with jitter, or the server's Retry-After when that is longer.
func (b *backoff) delay(attempt int, err error) time.Duration {
	d := b.opts.Base
	for i := 1; i < attempt && d < b.opts.Max; i++ {
		d *= 2
	}
	d = min(d, b.opts.Max)
	if b.opts.Jitter > 0 {
		d += time.Duration(b.rnd.Float64() * b.opts.Jitter * float64(d))
	}
	if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
		d = max(d, time.Duration(s)*time.Second)
	}
	return d
}

// errorClass is how the sync reacts to an error from the API server.
type errorClass int

const (
	// classRetry: back off, refetch the pod and try again (5xx, 429, timeouts, anything
	// unexpected). The desired status is kept.
	classRetry errorClass = iota
	// classConflict: 409; refetch the pod and try again at once.
	classConflict
	// classNotFound: the pod is gone; drop its status.
	classNotFound
	// classInvalid: 422; most often the metadata.uid precondition failed because the pod
	// was recreated. Refetch to find out.
	classInvalid
)

func classify(err error) errorClass {
	switch {
	case apierrors.IsConflict(err):
		return classConflict
	case apierrors.IsNotFound(err):
		return classNotFound
	case apierrors.IsInvalid(err):
		return classInvalid
	}
	return classRetry
}

// isTimeout reports whether err is a timeout of any kind; used only for logging.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) ||
		apierrors.IsServerTimeout(err) || (errors.As(err, &ne) && ne.Timeout())
}

// answered reports whether err came with an HTTP answer from the server: nil (a success)
// or an API status of any code. Everything else (connection refused or reset, EOF, a
// request that timed out with no response) is a transport failure: the server was not
// reached, or its answer was lost, and the error says nothing about the pod.
func answered(err error) bool {
	var s apierrors.APIStatus
	return err == nil || errors.As(err, &s)
}

// unsent reports whether err is a failure to connect (a dial error: connection
// refused, no route, a dial timeout): the request never left, so it cannot have changed
// the pod on the server, and the base it was computed against is as current as before.
// The retry then needs no GET first, as after a lost answer it does.
func unsent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// probeDelay is the wait before the next probe while the server is unreachable:
// ProbeInterval stretched by the jitter.
func (b *backoff) probeDelay() time.Duration {
	d := b.opts.ProbeInterval
	if b.opts.Jitter > 0 {
		d += time.Duration(b.rnd.Float64() * b.opts.Jitter * float64(d))
	}
	return d
}

// recoveryOffset draws the Manager's delay before the first retry after the server
// answers again, in [0, RecoveryWindow).
func (b *backoff) recoveryOffset() time.Duration {
	return time.Duration(b.rnd.Float64() * float64(b.opts.RecoveryWindow))
}

// recoveryGap is the pause between two pods retried after the server answers again.
func (b *backoff) recoveryGap() time.Duration {
	return time.Duration(float64(time.Second) / b.opts.RecoveryRate)
}
