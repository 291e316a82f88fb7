package statustest

import (
	"errors"
	"math/rand/v2"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Verb is a kind of request the Server counts and can fail.
type Verb string

// The verbs of status.Client and status.PodDeleter.
const (
	VerbGet    Verb = "GET"
	VerbPatch  Verb = "PATCH"
	VerbDelete Verb = "DELETE"
)

// Fault is one injected failure.
type Fault struct {
	// Err is what the client gets back.
	Err error
	// AfterWrite, for a PATCH, applies the patch before failing: the request reached the
	// server but the answer was lost, as with a timeout. The client sees Err and the pod is
	// changed anyway.
	AfterWrite bool
}

// FailNext makes the next n requests of verb fail with err, after any faults already
// scripted for it.
func (s *Server) FailNext(verb Verb, n int, err error) {
	faults := make([]Fault, n)
	for i := range faults {
		faults[i] = Fault{Err: err}
	}
	s.Script(verb, faults...)
}

// Script appends faults, in order, to those the next requests of verb will meet.
func (s *Server) Script(verb Verb, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripted[verb] = append(s.scripted[verb], faults...)
}

// FailRandomly makes each request of verb that no scripted fault catches fail with
// probability p, drawing from a source seeded with seed, so that a run can be replayed. The
// error is drawn uniformly from errs (InternalError when errs is empty). p <= 0 turns it off.
func (s *Server) FailRandomly(verb Verb, p float64, seed uint64, errs ...error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p <= 0 {
		delete(s.random, verb)
		return
	}
	if len(errs) == 0 {
		errs = []error{InternalError()}
	}
	s.random[verb] = &randomFaults{p: p, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), errs: errs}
}

// ClearFaults drops every scripted and random fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.scripted)
	clear(s.random)
}

// nextFaultLocked takes the fault the current request of verb meets, if any.
func (s *Server) nextFaultLocked(verb Verb) (Fault, bool) {
	if q := s.scripted[verb]; len(q) > 0 {
		s.scripted[verb] = q[1:]
		return q[0], true
	}
	if r := s.random[verb]; r != nil && r.rng.Float64() < r.p {
		return Fault{Err: r.errs[r.rng.IntN(len(r.errs))]}, true
	}
	return Fault{}, false
}

// Conflict returns the 409 Conflict the API server sends when a write races another.
func Conflict(name string) error {
	return apierrors.NewConflict(podsResource(), name,
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

// TooManyRequests returns the 429 the API server sends when it throttles, asking the client
// to retry after the given number of seconds (apierrors.SuggestsClientDelay reads it).
func TooManyRequests(retryAfterSeconds int) error {
	return apierrors.NewTooManyRequests("statustest: injected throttling", retryAfterSeconds)
}

// InternalError returns a 500 InternalError.
func InternalError() error {
	return apierrors.NewInternalError(errors.New("statustest: injected internal error"))
}

// Timeout returns the 504 Timeout a request gets when the server gave up waiting for it.
func Timeout() error {
	return apierrors.NewTimeoutError("statustest: injected timeout", 1)
}

// ServerTimeout returns the 500 ServerTimeout the API server sends when it could not
// complete the request in time, suggesting a retry after a second.
func ServerTimeout(verb Verb) error {
	return apierrors.NewServerTimeout(podsResource(), string(verb), 1)
}

// ServiceUnavailable returns a 503 ServiceUnavailable.
func ServiceUnavailable() error {
	return apierrors.NewServiceUnavailable("statustest: injected unavailability")
}
