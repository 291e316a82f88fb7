package podsim

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"
)

// crashLooperStatus is the server status of a crash-looping container "app" of pod
// "crash" waiting in CrashLoopBackOff after exiting at finished, as a status writer
// that announced back-off showed it.
func crashLooperStatus(restarts int32, backOff string, finished float64) v1.PodStatus {
	id := "containerd://" + hexID(uint64(restarts), 64)
	return v1.PodStatus{Phase: v1.PodRunning, StartTime: ptr.To(metav1.NewTime(sec(0))), PodIP: "10.244.3.7",
		PodIPs: []v1.PodIP{{IP: "10.244.3.7"}},
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", Image: "docker.io/library/nginx:1.27", ContainerID: id, RestartCount: restarts,
			State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: ReasonCrashLoopBackOff,
				Message: fmt.Sprintf("back-off %s restarting failed container=app pod=crash_default(uid-crash)", backOff)}},
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", ContainerID: id,
				StartedAt: metav1.NewTime(sec(finished - 1)), FinishedAt: metav1.NewTime(sec(finished))}}}}}
}

// A container waiting in CrashLoopBackOff at adoption keeps the back-off its message
// announces, counted from its last exit, whatever its restart count: its status is not
// rewritten (no PATCH), and it restarts when the earlier process said it would.
func TestAdoptWaitingCrashLooperKeepsItsBackOff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		restarts  int32
		backOff   string
		restartAt float64 // the exit is at 100
	}{
		{"as the restart count implies", 2, "20s", 120},
		{"less than the restart count implies (a back-off reset)", 3, "10s", 110},
		{"more than the restart count implies (restarts not backed off)", 1, "40s", 140},
		{"the maximum", 9, "5m0s", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := mkPod("crash", ctn("app"))
			pod.Annotations = map[string]string{AnnotationRunTime: "1s", AnnotationExitCode: "1"}
			pod.Status = crashLooperStatus(tc.restarts, tc.backOff, 100)
			want := pod.Status.ContainerStatuses[0]
			sim, errs := newAt(pod, testConfig(t, fixed()), sec(101))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			prev := pod.Status.DeepCopy()
			s, err := statusAt(factsAt(sim, sec(101)), pod, prev, sec(101))
			if err != nil {
				t.Fatal(err)
			}
			// The server's status was written by hand: compare what the adoption decides.
			if d := cmp.Diff(want.State, s.ContainerStatuses[0].State); d != "" {
				t.Errorf("adopted state differs from the server's (-server +adopted):\n%s", d)
			}
			if d := cmp.Diff(want.LastTerminationState, s.ContainerStatuses[0].LastTerminationState); d != "" {
				t.Errorf("adopted last termination differs from the server's (-server +adopted):\n%s", d)
			}
			if got := s.ContainerStatuses[0]; got.RestartCount != want.RestartCount || got.ContainerID != want.ContainerID {
				t.Errorf("adopted restart count %d, ID %s; the server's %d, %s", got.RestartCount, got.ContainerID, want.RestartCount, want.ContainerID)
			}
			if n := sim.Next(); !n.Equal(sec(tc.restartAt)) {
				t.Errorf("next %v, want the announced restart at %gs", n.Sub(t0), tc.restartAt)
			}
			// Adopted again from the status the first adoption wrote: the same status.
			pod2 := pod.DeepCopy()
			pod2.Status = *s.DeepCopy()
			sim2, _ := newAt(pod2, testConfig(t, fixed()), sec(102))
			s2, err := statusAt(factsAt(sim2, sec(102)), pod2, &s, sec(102))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(s.ContainerStatuses[0], s2.ContainerStatuses[0]); d != "" {
				t.Errorf("adopted twice, the status differs (-server +adopted):\n%s", d)
			}
			if n := sim2.Next(); !n.Equal(sec(tc.restartAt)) {
				t.Errorf("adopted twice: next %v, want %gs", n.Sub(t0), tc.restartAt)
			}
		})
	}
}

// A crash-looper adopted while running and again while waiting in back-off shows, second
// by second, what the process that never restarted shows: the same restarts at the same
// times, and the same back-off messages (a running container keeps the back-off its
// restart count implies; a waiting one the back-off it announced).
func TestAdoptCrashLooperTwice(t *testing.T) {
	for _, tc := range []struct {
		name           string
		runTime        string
		first, second  float64 // adoption times
		step           float64 // between statuses
		firstState     string  // the state at the first adoption
		secondState    string
		end            float64
		wantRestartsAt int32 // restart count at end
	}{
		// Runs at 2, 3, 14, 35, 76 (see TestCrashLoopBackOff): adopted running at 14.5
		// (restart count 2) and waiting at 40 (back-off 40 s from the exit at 36).
		{name: "short runs", runTime: "1s", first: 14.5, second: 40, step: 0.5, firstState: "Running", secondState: "Waiting:CrashLoopBackOff", end: 200, wantRestartsAt: 5},
		// Runs of 11 minutes: every restart immediate, whatever the restart count.
		{name: "runs longer than ten minutes", runTime: "11m", first: 1400, second: 1980, step: 1, firstState: "Running", secondState: "Running", end: 2700, wantRestartsAt: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := mkPod("crash", ctn("app"))
			pod.Annotations = map[string]string{AnnotationRunTime: tc.runTime, AnnotationExitCode: "1"}
			ref := start(t, pod.DeepCopy(), testConfig(t, fixed()), sec(0))
			cur := start(t, pod.DeepCopy(), testConfig(t, fixed()), sec(0))
			adoptions := []float64{tc.first, tc.second}
			states := []string{tc.firstState, tc.secondState}
			for at := 0.0; at <= tc.end; at += tc.step {
				if len(adoptions) > 0 && at == adoptions[0] {
					if got := stateOf(cstatus(*cur.prev, "app")); got != states[0] {
						t.Fatalf("at %gs: %s, want %s at the adoption", at, got, states[0])
					}
					server := cur.pod.DeepCopy()
					sim, errs := newAt(server, testConfig(t, fixed()), sec(at))
					if len(errs) > 0 {
						t.Fatal(errs)
					}
					cur = &driver{t: t, pod: server, sim: sim, prev: cur.prev}
					adoptions, states = adoptions[1:], states[1:]
				}
				want, got := ref.status(sec(at)), cur.status(sec(at))
				if d := cmp.Diff(cstatus(want, "app"), cstatus(got, "app")); d != "" {
					t.Fatalf("at %gs the adopted pod differs from the one never adopted (-never +adopted):\n%s", at, d)
				}
			}
			if r := cstatus(*cur.prev, "app").RestartCount; r != tc.wantRestartsAt {
				t.Errorf("restart count %d at %gs, want %d", r, tc.end, tc.wantRestartsAt)
			}
		})
	}
}

// A crash-looper whose instances all run equally long, adopted at any two moments (the
// second time from the status the first adoption wrote), runs as the process that never
// restarted runs it: restarts at the same times, the same restart counts and the same
// back-off messages.
func TestPropAdoptedCrashLooperKeepsItsSchedule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := mkPod("crash", ctn("app"))
		pod.Annotations = map[string]string{
			AnnotationRunTime:  rapid.SampledFrom([]string{"0s", "1s", "7s", "45s", "4m", "11m"}).Draw(t, "runTime"),
			AnnotationExitCode: "1",
		}
		pod.Spec.RestartPolicy = rapid.SampledFrom([]v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure}).Draw(t, "policy")
		first := sec(float64(rapid.IntRange(3, 1500).Draw(t, "first"))) // once the container has run (2 s)
		second := first.Add(time.Duration(rapid.IntRange(1, 1500).Draw(t, "second")) * time.Second)
		end := second.Add(15 * time.Minute)
		// The agent writes a status a second before it restarts: the server's status.
		writes := []time.Time{first.Add(-time.Second), second.Add(-time.Second)}
		ipam, _ := NewIPAM("10.244.3.0/24")
		cfg := Config{Node: testNode(), ipam: ipam, Profile: fixed(), Seed: 7}
		ref, _ := newAt(pod.DeepCopy(), cfg, sec(0))
		cur, _ := newAt(pod.DeepCopy(), cfg, sec(0))
		var prev *v1.PodStatus
		// Facts change only at Next and do not depend on earlier queries: comparing at
		// every change of either pod compares them at all times.
		for at := sec(0); ; {
			if at.Equal(first) || at.Equal(second) {
				cfg.ipam, _ = NewIPAM("10.244.3.0/24")
				cur, _ = newAt(pod.DeepCopy(), cfg, at)
			}
			want, got := factsAt(ref, at), factsAt(cur, at)
			if d := cmp.Diff(want.Containers, got.Containers); d != "" {
				t.Fatalf("at %v (adopted at %v and %v) the adopted pod differs from the one never adopted (-never +adopted):\n%s",
					at.Sub(t0), first.Sub(t0), second.Sub(t0), d)
			}
			if at.Equal(writes[0]) || at.Equal(writes[1]) {
				s, err := statusAt(got, pod, prev, at)
				if err != nil {
					t.Fatal(err)
				}
				prev = &s
				pod = pod.DeepCopy()
				pod.Status = *s.DeepCopy()
			}
			if !at.Before(end) {
				return
			}
			next := end
			for _, n := range []time.Time{ref.Next(), cur.Next(), writes[0], first, writes[1], second} {
				if n.After(at) && n.Before(next) {
					next = n
				}
			}
			at = next
		}
	})
}

// A container running at adoption keeps the back-off its restart count implies, from its
// start, unless the instance before it ran longer than ten minutes (the back-off was then
// reset): its next exit waits as long as under the earlier process.
func TestAdoptRunningCrashLooperKeepsABackOff(t *testing.T) {
	for _, tc := range []struct {
		name     string
		restarts int32
		prevRan  time.Duration // the instance before the running one; 0: none
		wantWait string        // after the exit at 1001 s; "" restarted at once
	}{
		{"never restarted: the first restart is immediate", 0, 0, ""},
		{"restarted once", 1, time.Second, "10s"},
		{"restarted three times", 3, time.Second, "40s"},
		{"restarted many times", 12, time.Second, "5m0s"},
		{"after an instance that ran eleven minutes", 3, 11 * time.Minute, "10s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := mkPod("crash", ctn("app"))
			pod.Annotations = map[string]string{AnnotationRunTime: "1s", AnnotationExitCode: "1"}
			cs := v1.ContainerStatus{Name: "app", Image: "docker.io/library/nginx:1.27", ContainerID: "containerd://0123",
				RestartCount: tc.restarts, Started: ptr.To(true), Ready: true,
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(sec(1000))}}}
			if tc.prevRan > 0 {
				cs.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", ContainerID: "containerd://0122",
					StartedAt: metav1.NewTime(sec(1000).Add(-tc.prevRan)), FinishedAt: metav1.NewTime(sec(1000))}
			}
			pod.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: ptr.To(metav1.NewTime(sec(0))), PodIP: "10.244.3.7",
				PodIPs: []v1.PodIP{{IP: "10.244.3.7"}}, ContainerStatuses: []v1.ContainerStatus{cs}}
			d := start(t, pod, testConfig(t, fixed()), sec(1000.5))
			s := d.status(sec(1001))
			got := cstatus(s, "app")
			if tc.wantWait == "" {
				if stateOf(got) != "Running" || got.RestartCount != tc.restarts+1 {
					t.Errorf("at 1001s: %s, want restarted at once", summary(s))
				}
				return
			}
			want := fmt.Sprintf("back-off %s restarting failed container=app pod=crash_default(uid-crash)", tc.wantWait)
			if got.State.Waiting == nil || got.State.Waiting.Message != want || got.RestartCount != tc.restarts {
				t.Errorf("at 1001s: %s %+v, want waiting %q", summary(s), got.State, want)
			}
		})
	}
}
