package podsim

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/podstate"
)

// statusAt turns the facts at at into the status a node agent writes, with prev as the
// status it wrote last and pod carrying the server's copy of that status.
func statusAt(f Facts, pod *v1.Pod, prev *v1.PodStatus, at time.Time) (v1.PodStatus, error) {
	in := f.Input(pod, prev)
	s, err := podstate.Generate(in)
	if err != nil {
		return s, err
	}
	in.Now = metav1.NewTime(at)
	return s, podstate.Stamp(&s, in)
}

// deleted returns a copy of pod marked for graceful deletion at at with grace seconds.
func deleted(pod *v1.Pod, at time.Time, grace int64) *v1.Pod {
	del := pod.DeepCopy()
	del.DeletionTimestamp = &metav1.Time{Time: at}
	del.DeletionGracePeriodSeconds = ptr.To(grace)
	return del
}

// adoptedContainers indexes the container statuses of s by name.
func adoptedContainers(s *v1.PodStatus) map[string]v1.ContainerStatus {
	out := map[string]v1.ContainerStatus{}
	for _, l := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for _, c := range l {
			out[c.Name] = c
		}
	}
	return out
}

// startedInTerminatingPod reports what, in s, shows a container started after a
// terminating pod was adopted with the server status from: a container ID or a running
// state the server status did not show, a higher restart count, or a container that did
// not run at the adoption becoming Ready while not terminated (a completed init container
// is Ready; a running one may pass its readiness probe while it stops).
func startedInTerminatingPod(from map[string]v1.ContainerStatus, s v1.PodStatus) []string {
	var bad []string
	for name, c := range adoptedContainers(&s) {
		was, ok := from[name]
		if c.ContainerID != "" && (!ok || c.ContainerID != was.ContainerID) {
			bad = append(bad, fmt.Sprintf("%s: new container ID %s (was %q)", name, c.ContainerID, was.ContainerID))
		}
		if c.RestartCount > was.RestartCount {
			bad = append(bad, fmt.Sprintf("%s: restart count %d > %d", name, c.RestartCount, was.RestartCount))
		}
		if c.State.Running != nil && was.State.Running == nil {
			bad = append(bad, fmt.Sprintf("%s: running, was %s", name, stateOf(&was)))
		}
		if c.Ready && c.State.Terminated == nil && was.State.Running == nil {
			bad = append(bad, fmt.Sprintf("%s: Ready, was %s", name, stateOf(&was)))
		}
	}
	return bad
}

// A pod deleted just before the agent died, or while it was down, is adopted with its
// deletionTimestamp: the new process starts no container in it (the kubelet's pod worker
// goes straight to terminating a pod it first sees with a deletionTimestamp,
// pkg/kubelet/pod_workers.go: UpdatePod), and it is Done within the grace period counted
// from the adoption.
func TestAdoptTerminatingPod(t *testing.T) {
	crash := func() *v1.Pod {
		pod := mkPod("crash", ctn("app"))
		pod.Annotations = map[string]string{AnnotationRunTime: "1s", AnnotationExitCode: "1"}
		return pod
	}
	web := func() *v1.Pod {
		pod := mkPod("web", ctn("app"))
		pod.Spec.Containers[0].ReadinessProbe = probe(0, 5, 1, 3)
		proxy := ctn("proxy")
		proxy.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		pod.Spec.InitContainers = []v1.Container{ctn("setup"), proxy}
		pod.Annotations = map[string]string{AnnotationStopDelay: "60s"}
		return pod
	}
	job := func() *v1.Pod {
		pod := mkPod("job", ctn("app"))
		pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
		pod.Annotations = map[string]string{AnnotationExitCode: "1"}
		return pod
	}
	for _, tc := range []struct {
		name string
		pod  func() *v1.Pod
		prof Profile
		// The old process writes a status every second up to ran; the pod is deleted at
		// del (the old process sees it when del <= ran), and adopted at adopt.
		ran, del, adopt float64
		grace           int64
		// server, when set, replaces the status the old process wrote.
		server *v1.PodStatus
	}{
		{name: "running crash-looper due to exit while the agent was down", pod: crash, prof: fixed(), ran: 2, del: 5, adopt: 10, grace: 5},
		{name: "crash-looper waiting, back-off over while the agent was down", pod: crash, prof: fixed(), ran: 20, del: 21, adopt: 40, grace: 5},
		{name: "crash-looper waiting in back-off", pod: crash, prof: fixed(), ran: 20, del: 21, adopt: 21, grace: 5},
		{name: "crash-looper deleted just before the agent died", pod: crash, prof: fixed(), ran: 2, del: 2, adopt: 3, grace: 5},
		{name: "running and ready with a sidecar", pod: web, prof: fixed(), ran: 30, del: 31, adopt: 31, grace: 5},
		{name: "job under OnFailure due to exit", pod: job, prof: fixed(), ran: 4, del: 5, adopt: 20, grace: 3},
		{name: "nothing created yet, fast profile", pod: crash, prof: Fast(), ran: -1, del: 0, adopt: 1, grace: 5,
			server: &v1.PodStatus{Phase: v1.PodPending, StartTime: ptr.To(metav1.NewTime(sec(0)))}},
		{name: "exited, restart due", pod: crash, prof: fixed(), ran: -1, del: 9, adopt: 10, grace: 5,
			server: &v1.PodStatus{Phase: v1.PodRunning, StartTime: ptr.To(metav1.NewTime(sec(0))), PodIP: "10.244.3.7",
				PodIPs: []v1.PodIP{{IP: "10.244.3.7"}},
				ContainerStatuses: []v1.ContainerStatus{{Name: "app", Image: "docker.io/library/nginx:1.27", ContainerID: "containerd://0123",
					State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", ContainerID: "containerd://0123",
						StartedAt: metav1.NewTime(sec(2)), FinishedAt: metav1.NewTime(sec(3))}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod()
			d := start(t, pod, testConfig(t, tc.prof), sec(0))
			for at := 0.0; at <= tc.ran; at++ {
				if at == tc.del {
					d.pod = deleted(d.pod, sec(tc.del), tc.grace)
					updateAt(d.sim, d.pod, sec(at))
				}
				d.status(sec(at))
			}
			server := deleted(d.pod, sec(tc.del), tc.grace)
			if tc.server != nil {
				server.Status = *tc.server.DeepCopy()
			}
			from := adoptedContainers(&server.Status)

			sim, errs := newAt(server, testConfig(t, tc.prof), sec(tc.adopt))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if f := factsAt(sim, sec(tc.adopt)); !f.Terminal {
				t.Errorf("at adoption: not Terminal")
			}
			d2 := &driver{t: t, pod: server, sim: sim}
			if tc.server == nil {
				d2.prev = d.prev
			}
			end := tc.adopt + float64(tc.grace)
			for at := tc.adopt; at <= end; at += 0.5 {
				s := d2.status(sec(at))
				if bad := startedInTerminatingPod(from, s); len(bad) > 0 {
					t.Fatalf("at %gs: %v\n%s", at, bad, summary(s))
				}
			}
			f := factsAt(sim, sec(end))
			s := *d2.prev
			// A pod none of whose containers ran stays Pending until the status manager's
			// TerminatePod (TestDeletedPendingPodFailsThroughTerminatePod).
			terminal := s.Phase == v1.PodSucceeded || s.Phase == v1.PodFailed || (len(from) == 0 && f.Stopped)
			if !f.Done || !terminal {
				t.Errorf("at %gs (the grace period is over): Done %v, %s", end, f.Done, summary(s))
			}
		})
	}
}

// New of a pod that already has a deletionTimestamp starts nothing, even where the
// sandbox and the containers would be ready at once (the fast profile).
func TestNewOfADeletedPodStartsNothing(t *testing.T) {
	for _, prof := range []Profile{fixed(), Fast(), Default()} {
		t.Run(prof.Name, func(t *testing.T) {
			pod := deleted(mkPod("gone", ctn("app")), sec(0), 30)
			sim, _ := newAt(pod, testConfig(t, prof), sec(0))
			f := factsAt(sim, sec(0))
			if !f.Done || len(f.Sandboxes) != 0 || len(f.Containers) != 0 || !sim.Next().IsZero() {
				t.Errorf("facts %+v, next %v: want Done with no sandbox and no container", f, sim.Next())
			}
		})
	}
}

// Adopting a terminating pod, whatever it runs and whenever it was deleted, starts no
// container, creates no sandbox, and ends Done within the grace period.
func TestPropAdoptingATerminatingPodStartsNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := genPod(t, "p")
		ipam, _ := NewIPAM("10.244.3.0/24")
		cfg := Config{Node: testNode(), ipam: ipam, Profile: Default(), Seed: 7}
		sim, _ := newAt(pod, cfg, sec(0))
		ran := float64(rapid.IntRange(0, 300).Draw(t, "ran"))
		del := float64(rapid.IntRange(0, int(ran)+60).Draw(t, "del"))
		down := float64(rapid.IntRange(0, 120).Draw(t, "down"))
		grace := rapid.Int64Range(0, 60).Draw(t, "grace")
		var prev *v1.PodStatus
		for at := 0.0; at <= ran; at++ {
			if at == del {
				pod = deleted(pod, sec(del), grace)
				updateAt(sim, pod, sec(at))
			}
			s, err := statusAt(factsAt(sim, sec(at)), pod, prev, sec(at))
			if err != nil {
				t.Fatalf("at %gs: %v", at, err)
			}
			prev = &s
			pod = pod.DeepCopy()
			pod.Status = *s.DeepCopy()
		}
		server := deleted(pod, sec(del), grace)
		adopt := max(ran, del) + down
		from := adoptedContainers(&server.Status)
		ipam2, _ := NewIPAM("10.244.3.0/24")
		cfg.ipam = ipam2
		sim2, _ := newAt(server, cfg, sec(adopt))
		sandboxes := map[string]bool{}
		f := factsAt(sim2, sec(adopt))
		for _, sb := range f.Sandboxes {
			sandboxes[sb.ID] = true
		}
		if !f.Terminal {
			t.Fatalf("at adoption (%gs): not Terminal", adopt)
		}
		end := adopt + float64(grace)
		for at := adopt; ; at = min(at+0.25, end) {
			f = factsAt(sim2, sec(at))
			for _, sb := range f.Sandboxes {
				if !sandboxes[sb.ID] {
					t.Fatalf("at %gs: sandbox %s created in a terminating pod", at, sb.ID)
				}
			}
			s, err := statusAt(f, server, prev, sec(at))
			if err != nil {
				t.Fatalf("at %gs: %v", at, err)
			}
			if bad := startedInTerminatingPod(from, s); len(bad) > 0 {
				t.Fatalf("at %gs (adopted at %gs): %v\n%s", at, adopt, bad, summary(s))
			}
			prev = &s
			server = server.DeepCopy()
			server.Status = *s.DeepCopy()
			if at == end {
				break
			}
		}
		if !f.Done {
			t.Fatalf("at %gs (adopted at %gs, grace %ds): not Done", end, adopt, grace)
		}
	})
}
