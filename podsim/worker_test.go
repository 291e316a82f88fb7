package podsim_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

// recorder is a StatusSyncer that keeps every input and answers with a fixed phase, to
// see what a Worker hands over without a Manager.
type recorder struct {
	ins []status.SyncPodInput
	err error
}

func (r *recorder) SyncPod(_ context.Context, in status.SyncPodInput) (v1.PodStatus, error) {
	r.ins = append(r.ins, in)
	if r.err != nil {
		return v1.PodStatus{}, r.err
	}
	return v1.PodStatus{Phase: v1.PodPhase("seen-" + in.Pod.ResourceVersion)}, nil
}

var workerStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func workerPod(rv string, annotations map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-web", ResourceVersion: rv, Annotations: annotations},
		Spec: v1.PodSpec{NodeName: "node-1", Containers: []v1.Container{{Name: "app", Image: "nginx:1.27"}},
			TerminationGracePeriodSeconds: ptr.To[int64](30)},
	}
}

func workerIPAM(t *testing.T) *podsim.IPAM {
	t.Helper()
	ipam, err := podsim.NewIPAM("10.244.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	return ipam
}

func workerConfig(clk *clocktesting.FakeClock) podsim.Config {
	return podsim.Config{Node: podsim.Node{Name: "node-1", HostIPs: []string{"10.0.0.1"}}, Profile: podsim.Default(), Seed: 7, Clock: clk}
}

func TestNewWorkerInputErrors(t *testing.T) {
	clk := clocktesting.NewFakeClock(workerStart)
	cfg, ipam := workerConfig(clk), workerIPAM(t)
	for name, tc := range map[string]struct {
		pod    *v1.Pod
		syncer podsim.StatusSyncer
		ipam   *podsim.IPAM
		want   string
	}{
		"nil syncer": {pod: workerPod("1", nil), ipam: ipam, want: "syncer: Required value"},
		"nil pod":    {syncer: &recorder{}, ipam: ipam, want: "pod: Required value"},
		"no IPAM":    {pod: workerPod("1", nil), syncer: &recorder{}, want: "ipam: Required value"},
	} {
		t.Run(name, func(t *testing.T) {
			w, _, err := podsim.NewWorker(tc.pod, tc.syncer, tc.ipam, cfg)
			if w != nil || !errors.Is(err, podstatus.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewWorker = %v, %v; want no worker and an input error naming %q", w, err, tc.want)
			}
		})
	}
}

// TestWorkerHandsOverTheNewestCopy: every Sync sends the runtime's facts with the copy it
// was given, whether the pod is stopped and whether a container could still run; a copy
// of a resourceVersion already seen is not given to the runtime again (a deletion it
// carries is not restarted), and Sync(nil) steps the copy last given.
func TestWorkerHandsOverTheNewestCopy(t *testing.T) {
	clk := clocktesting.NewFakeClock(workerStart)
	rec := &recorder{}
	w, _, err := podsim.NewWorker(workerPod("1", map[string]string{podsim.AnnotationStopDelay: "5s"}), rec, workerIPAM(t), workerConfig(clk))
	if err != nil {
		t.Fatal(err)
	}
	first, err := w.Sync(context.Background(), nil)
	if err != nil || first.Status.Phase != "seen-1" || first.Next.IsZero() {
		t.Fatalf("first Sync = %+v, %v; want the syncer's status for rv 1 and a next change", first, err)
	}
	if in := rec.ins[0]; in.Stopped || !in.CouldHaveRunningContainers || in.Runtime.Terminal {
		t.Errorf("a new pod: Stopped %v, CouldHaveRunningContainers %v, Terminal %v; want false, true, false", in.Stopped, in.CouldHaveRunningContainers, in.Runtime.Terminal)
	}
	// Run until it is steady.
	for step := first; !step.Next.IsZero(); {
		clk.SetTime(step.Next)
		if step, err = w.Sync(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	deleted := workerPod("2", map[string]string{podsim.AnnotationStopDelay: "5s"})
	deleted.DeletionTimestamp = &metav1.Time{Time: clk.Now()}
	deleted.DeletionGracePeriodSeconds = ptr.To[int64](30)
	step, err := w.Sync(context.Background(), deleted)
	if err != nil || w.ResourceVersion() != "2" || !step.Facts.Terminal || step.Facts.Stopped {
		t.Fatalf("Sync(deleted) = %+v, %v, rv %s; want terminal, not stopped, rv 2", step.Facts, err, w.ResourceVersion())
	}
	if in := rec.ins[len(rec.ins)-1]; in.Pod != deleted || !in.CouldHaveRunningContainers {
		t.Errorf("Sync(deleted) handed over pod %p (want %p), CouldHaveRunningContainers %v (want true)", in.Pod, deleted, in.CouldHaveRunningContainers)
	}
	// The same resourceVersion again, a second later: not a new deletion.
	clk.Step(time.Second)
	again := deleted.DeepCopy()
	again.DeletionTimestamp = &metav1.Time{Time: clk.Now()}
	again.DeletionGracePeriodSeconds = ptr.To[int64](1)
	if _, err := w.Sync(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	clk.Step(4 * time.Second) // 5 s after the deletion: the stop delay, within the 30 s grace period
	step, err = w.Sync(context.Background(), nil)
	if err != nil || !step.Facts.Stopped || !step.Facts.Done {
		t.Fatalf("5 s after the deletion: %+v, %v; want stopped and done", step.Facts, err)
	}
	c := step.Facts.Containers[0]
	if c.State.Terminated == nil || c.State.Terminated.ExitCode != 0 {
		t.Errorf("container state %+v; want exit 0 after the stop delay (a second copy of rv 2 must not shorten the grace period)", c.State)
	}
	if in := rec.ins[len(rec.ins)-1]; !in.Stopped || in.CouldHaveRunningContainers {
		t.Errorf("stopped pod: Stopped %v, CouldHaveRunningContainers %v; want true, false", in.Stopped, in.CouldHaveRunningContainers)
	}
}

func TestWorkerReportsTheSyncersError(t *testing.T) {
	clk := clocktesting.NewFakeClock(workerStart)
	boom := errors.New("boom")
	w, _, err := podsim.NewWorker(workerPod("1", nil), &recorder{err: boom}, workerIPAM(t), workerConfig(clk))
	if err != nil {
		t.Fatal(err)
	}
	step, err := w.Sync(context.Background(), nil)
	if !errors.Is(err, boom) || step.Next.IsZero() {
		t.Errorf("Sync = %+v, %v; want the syncer's error and the runtime's next change all the same", step, err)
	}
}

// TestWorkerThroughAManager runs one pod from creation to its deletion through a
// status.Manager on an in-memory API server: Ready, then deleted, its terminal phase held
// back while its container stops, and the pod object deleted once that phase is on the
// server.
func TestWorkerThroughAManager(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(workerStart)
	srv := statustest.NewServer()
	created, err := srv.Create(workerPod("", map[string]string{podsim.AnnotationStopDelay: "3s"}))
	if err != nil {
		t.Fatal(err)
	}
	m := status.NewManager(srv, status.Options{Clock: clk, Deleter: srv})
	w, _, err := podsim.NewWorker(created, m, workerIPAM(t), workerConfig(clk))
	if err != nil {
		t.Fatal(err)
	}
	peek := func() *v1.Pod {
		t.Helper()
		p, err := srv.Peek("ns", "web")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(pod *v1.Pod, until time.Time) podsim.Step {
		t.Helper()
		step, err := w.Sync(ctx, pod)
		for ; err == nil; step, err = w.Sync(ctx, peek()) {
			if err := m.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if step.Next.IsZero() || step.Next.After(until) {
				return step
			}
			clk.SetTime(step.Next)
		}
		t.Fatal(err)
		return podsim.Step{}
	}
	step := run(created, workerStart.Add(time.Minute))
	got := peek()
	if ready := conditions.Get(got.Status.Conditions, v1.PodReady); got.Status.Phase != v1.PodRunning || ready == nil || ready.Status != v1.ConditionTrue {
		t.Fatalf("after a minute: phase %s, Ready %v; want Running and Ready", got.Status.Phase, ready)
	}
	if !apiequality.Semantic.DeepEqual(step.Status, got.Status) {
		t.Errorf("Sync's status is not what the Manager sent:\n%+v\n%+v", step.Status, got.Status)
	}
	deleted, err := srv.Update("ns", "web", func(p *v1.Pod) {
		p.DeletionTimestamp = &metav1.Time{Time: clk.Now()}
		p.DeletionGracePeriodSeconds = ptr.To[int64](30)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Sync(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if p := peek().Status.Phase; p != v1.PodRunning {
		t.Errorf("deleted, its container still stopping: phase %s on the server, want Running (a terminal phase waits)", p)
	}
	clk.Step(3 * time.Second)
	if _, err := w.Sync(ctx, peek()); err != nil {
		t.Fatal(err)
	}
	if err := m.Sync(ctx); err != nil { // the terminal status, then the DELETE
		t.Fatal(err)
	}
	if _, err := srv.Peek("ns", "web"); !apierrors.IsNotFound(err) {
		t.Errorf("after the container stopped: %v, want the pod object deleted", err)
	}
	if n := srv.Requests(statustest.VerbDelete); n != 1 {
		t.Errorf("%d DELETEs, want 1", n)
	}
	w.Release()
	m.ForgetPod(ctx, created.UID)
}
