package statustest_test

import (
	"context"
	"errors"
	"math"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podstatus/podstatus/status/statustest"
)

func TestFailNext(t *testing.T) {
	s := statustest.NewServer(testPod())
	ctx := context.Background()
	s.FailNext(statustest.VerbPatch, 2, statustest.Conflict("p"))
	s.FailNext(statustest.VerbGet, 1, statustest.TooManyRequests(3))
	_, err := s.GetPod(ctx, "ns", "p")
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("first GET = %v, want 429", err)
	}
	if d, ok := apierrors.SuggestsClientDelay(err); !ok || d != 3 {
		t.Fatalf("Retry-After = %d, %v; want 3", d, ok)
	}
	pod, err := s.GetPod(ctx, "ns", "p")
	if err != nil {
		t.Fatalf("second GET: %v", err)
	}
	next := *pod.Status.DeepCopy()
	next.Phase = v1.PodRunning
	p := patchTo(t, pod, next)
	for i := range 2 {
		if _, err := s.PatchPodStatus(ctx, "ns", "p", p); !apierrors.IsConflict(err) {
			t.Fatalf("PATCH %d = %v, want 409", i, err)
		}
	}
	if got, _ := s.Peek("ns", "p"); got.Status.Phase != v1.PodPending {
		t.Fatalf("a failed PATCH was applied")
	}
	if _, err := s.PatchPodStatus(ctx, "ns", "p", p); err != nil {
		t.Fatalf("third PATCH: %v", err)
	}
	if g, pt := s.Requests(statustest.VerbGet), s.Requests(statustest.VerbPatch); g != 2 || pt != 3 {
		t.Fatalf("requests = GET %d PATCH %d, want 2 and 3", g, pt)
	}
	recs := s.Patches()
	if len(recs) != 3 || !apierrors.IsConflict(recs[0].Err) || recs[2].Err != nil {
		t.Fatalf("records = %+v", recs)
	}
	s.ResetRequests()
	if s.Requests(statustest.VerbPatch) != 0 || len(s.Patches()) != 0 {
		t.Fatalf("ResetRequests left counts behind")
	}
}

func TestFaultAfterWrite(t *testing.T) {
	s := statustest.NewServer(testPod())
	s.Script(statustest.VerbPatch, statustest.Fault{Err: statustest.Timeout(), AfterWrite: true})
	pod, _ := s.Peek("ns", "p")
	next := *pod.Status.DeepCopy()
	next.Phase = v1.PodRunning
	_, err := s.PatchPodStatus(context.Background(), "ns", "p", patchTo(t, pod, next))
	if !apierrors.IsTimeout(err) {
		t.Fatalf("PATCH = %v, want a timeout", err)
	}
	if got, _ := s.Peek("ns", "p"); got.Status.Phase != v1.PodRunning {
		t.Fatalf("the write behind the lost answer did not happen")
	}
}

func TestFaultErrorKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		is   func(error) bool
	}{
		{"conflict", statustest.Conflict("p"), apierrors.IsConflict},
		{"throttled", statustest.TooManyRequests(1), apierrors.IsTooManyRequests},
		{"internal", statustest.InternalError(), apierrors.IsInternalError},
		{"timeout", statustest.Timeout(), apierrors.IsTimeout},
		{"server timeout", statustest.ServerTimeout(statustest.VerbPatch), apierrors.IsServerTimeout},
		{"unavailable", statustest.ServiceUnavailable(), apierrors.IsServiceUnavailable},
	} {
		if !c.is(c.err) {
			t.Errorf("%s: %v is not recognised by its apierrors predicate", c.name, c.err)
		}
		var se *apierrors.StatusError
		if !errors.As(c.err, &se) {
			t.Errorf("%s: not a *StatusError", c.name)
		}
	}
}

func TestFailRandomlyIsSeededAndRoughlyP(t *testing.T) {
	run := func(seed uint64) (pattern []bool) {
		s := statustest.NewServer(testPod())
		s.FailRandomly(statustest.VerbGet, 0.3, seed, statustest.InternalError(), statustest.Conflict("p"))
		for range 2000 {
			_, err := s.GetPod(context.Background(), "ns", "p")
			pattern = append(pattern, err != nil)
		}
		return pattern
	}
	a, b, c := run(7), run(7), run(8)
	fails := 0
	same78 := true
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("the same seed gave different faults at request %d", i)
		}
		if a[i] {
			fails++
		}
		same78 = same78 && a[i] == c[i]
	}
	if same78 {
		t.Fatalf("different seeds gave the same faults")
	}
	if p := float64(fails) / float64(len(a)); math.Abs(p-0.3) > 0.05 {
		t.Fatalf("fault rate %.3f, want about 0.3", p)
	}
	s := statustest.NewServer(testPod())
	s.FailRandomly(statustest.VerbGet, 1, 1)
	s.FailNext(statustest.VerbGet, 1, statustest.Conflict("p"))
	if _, err := s.GetPod(context.Background(), "ns", "p"); !apierrors.IsConflict(err) {
		t.Fatalf("scripted faults must come first, got %v", err)
	}
	if _, err := s.GetPod(context.Background(), "ns", "p"); !apierrors.IsInternalError(err) {
		t.Fatalf("p=1 with no errors given must fail with InternalError, got %v", err)
	}
	s.ClearFaults()
	if _, err := s.GetPod(context.Background(), "ns", "p"); err != nil {
		t.Fatalf("after ClearFaults: %v", err)
	}
	s.FailRandomly(statustest.VerbGet, 1, 1)
	s.FailRandomly(statustest.VerbGet, 0, 1)
	if _, err := s.GetPod(context.Background(), "ns", "p"); err != nil {
		t.Fatalf("p=0 must turn random faults off: %v", err)
	}
}
