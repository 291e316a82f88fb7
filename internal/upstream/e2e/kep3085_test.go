package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// The KEP-3085 user stories, replayed with the KEP's own timestamps: the Manager writes
// the pod's status to the API server and every check reads the server's copy. A
// sandboxMonitor plays the KEP's monitoring service: it watches the pod and derives the
// sandbox-creation latency from what the server stores.

// kep is a time on the day the KEP's stories happen, 2022-12-06, in UTC.
func kep(h, m, s int) time.Time { return time.Date(2022, 12, 6, h, m, s, 0, time.UTC) }

// transition is one PodReadyToStartContainers state a watcher saw.
type transition struct {
	status v1.ConditionStatus
	at     time.Time
}

func (tr transition) String() string { return fmt.Sprintf("%s@%s", tr.status, ts(tr.at)) }

// sandboxMonitor is the KEP's monitoring service (Story 1): a pod watch that records
// every change of PodReadyToStartContainers (status or lastTransitionTime) and the
// PodScheduled time, and tells the first sandbox creation apart from later ones.
type sandboxMonitor struct {
	*podWatch
	mu          sync.Mutex
	scheduled   time.Time
	transitions []transition
	phases      []v1.PodPhase
}

func (e *env) monitorSandbox(created *v1.Pod) *sandboxMonitor {
	m := &sandboxMonitor{}
	m.podWatch = e.watchPod(created, func(p *v1.Pod) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if c := cond(p, v1.PodScheduled); c != nil && c.Status == v1.ConditionTrue {
			m.scheduled = c.LastTransitionTime.Time
		}
		if n := len(m.phases); n == 0 || m.phases[n-1] != p.Status.Phase {
			m.phases = append(m.phases, p.Status.Phase)
		}
		c := cond(p, v1.PodReadyToStartContainers)
		if c == nil {
			return
		}
		tr := transition{c.Status, c.LastTransitionTime.Time}
		if n := len(m.transitions); n == 0 || m.transitions[n-1].status != tr.status || !m.transitions[n-1].at.Equal(tr.at) {
			m.transitions = append(m.transitions, tr)
		}
	})
	return m
}

// expectTransitions waits until the watch has seen the server at rv and checks the
// PodReadyToStartContainers history it saw.
func (m *sandboxMonitor) expectTransitions(t *testing.T, rv string, want ...transition) {
	t.Helper()
	m.waitFor(t, rv)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.EqualFunc(m.transitions, want, func(a, b transition) bool { return a.status == b.status && a.at.Equal(b.at) }) {
		t.Errorf("a watcher saw PodReadyToStartContainers %v, want %v", m.transitions, want)
	}
}

// initialLatency is the first sandbox creation's latency: the first True's
// lastTransitionTime minus PodScheduled's.
func (m *sandboxMonitor) initialLatency() (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, tr := range m.transitions {
		if tr.status == v1.ConditionTrue && !m.scheduled.IsZero() {
			return tr.at.Sub(m.scheduled), true
		}
	}
	return 0, false
}

// recreations lists how long each later sandbox took to become ready again, measured
// from the False that followed a True.
func (m *sandboxMonitor) recreations() []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []time.Duration
	seenTrue := false
	var lost time.Time
	for _, tr := range m.transitions {
		switch {
		case tr.status == v1.ConditionTrue && seenTrue && !lost.IsZero():
			out = append(out, tr.at.Sub(lost))
			lost = time.Time{}
		case tr.status == v1.ConditionTrue:
			seenTrue = true
		case seenTrue:
			lost = tr.at
		}
	}
	return out
}

func (e *env) requestFigures(t *testing.T, story string) {
	t.Helper()
	gets, patches, _ := e.client.counts()
	report(t, "%s: %d status updates handed to the Manager, %d requests (%d GET, %d PATCH): %.2f requests per update",
		story, e.updates, gets+patches, gets, patches, float64(gets+patches)/float64(max(e.updates, 1)))
}

const (
	notReady = readiness.ReasonPodSandboxNotReady
	unready  = readiness.ReasonContainersNotReady
)

// TestKEP3085Story1HealthyStart: a stateless pod on a healthy node. Scheduled at
// 15:33:46, the kubelet starts at 15:33:47 (PodReadyToStartContainers False), the sandbox
// is ready at 15:33:49 (True): a sandbox-creation latency of 3 s, from the server's copy.
func TestKEP3085Story1HealthyStart(t *testing.T) {
	e := newEnv(t, "kep3085-healthy-", kep(15, 33, 46))
	created, _ := e.schedule(e.newPod("web", "app"), kep(15, 33, 46))
	mon := e.monitorSandbox(created)

	e.at(kep(15, 33, 47))
	e.kubelet("web", runtimeState{phase: v1.PodPending, containers: []v1.ContainerStatus{waiting("app", "ContainerCreating", "")}})
	e.sync()
	got := e.get("web")
	expect(t, got, v1.PodReadyToStartContainers, want{v1.ConditionFalse, kep(15, 33, 47), notReady, sandbox.MessageNoSandbox})
	expect(t, got, v1.PodScheduled, want{status: v1.ConditionTrue, ltt: kep(15, 33, 46)})
	expect(t, got, v1.PodInitialized, want{status: v1.ConditionTrue, ltt: kep(15, 33, 47)})
	expect(t, got, v1.PodReady, want{v1.ConditionFalse, kep(15, 33, 47), unready, "containers with unready status: [app]"})

	e.at(kep(15, 33, 49))
	sb := []sandbox.Status{readySandbox(0, "10.244.1.5", kep(15, 33, 49))}
	e.kubelet("web", runtimeState{phase: v1.PodPending, sandboxes: sb, containers: []v1.ContainerStatus{waiting("app", "ContainerCreating", "")}})
	e.sync()
	got = e.get("web")
	expect(t, got, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: kep(15, 33, 49)})
	if got.Status.PodIP != "10.244.1.5" {
		t.Errorf("podIP %q, want the sandbox's 10.244.1.5", got.Status.PodIP)
	}
	if lat := sandboxLatency(t, got); lat != 3*time.Second {
		t.Errorf("sandbox-creation latency on the server %v, want 3s", lat)
	}

	e.at(kep(15, 33, 50))
	e.kubelet("web", runtimeState{phase: v1.PodRunning, sandboxes: sb, containers: []v1.ContainerStatus{running("app", 0, kep(15, 33, 50), true)}})
	e.sync()
	got = e.get("web")
	expect(t, got, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: kep(15, 33, 49)})
	expect(t, got, v1.PodScheduled, want{status: v1.ConditionTrue, ltt: kep(15, 33, 46)})
	expect(t, got, v1.PodInitialized, want{status: v1.ConditionTrue, ltt: kep(15, 33, 47)})
	expect(t, got, v1.ContainersReady, want{status: v1.ConditionTrue, ltt: kep(15, 33, 50)})
	expect(t, got, v1.PodReady, want{status: v1.ConditionTrue, ltt: kep(15, 33, 50)})
	if got.Status.Phase != v1.PodRunning || got.Status.StartTime == nil || !got.Status.StartTime.Time.Equal(kep(15, 33, 47)) {
		t.Errorf("phase %s startTime %v, want Running since 15:33:47", got.Status.Phase, got.Status.StartTime)
	}

	mon.expectTransitions(t, got.ResourceVersion, transition{v1.ConditionFalse, kep(15, 33, 47)}, transition{v1.ConditionTrue, kep(15, 33, 49)})
	lat, ok := mon.initialLatency()
	if !ok || lat != 3*time.Second {
		t.Errorf("monitoring service measured %v (%v), want 3s", lat, ok)
	}
	report(t, "story 1 (healthy start): sandbox-creation latency %v (KEP: 3s)", lat)
	e.requestFigures(t, "story 1")
	if _, patches, _ := e.client.counts(); patches != 3 {
		t.Errorf("%d PATCHes for 3 changed statuses, want 3", patches)
	}
}

// TestKEP3085Story2SlowSandbox: CSI, CNI or a runtime handler delays the sandbox by ten
// seconds. While it is not ready the reason the kubelet gives changes (no sandbox, not
// ready, no IP) but PodReadyToStartContainers stays False with its first
// lastTransitionTime; the latency is 10 s.
func TestKEP3085Story2SlowSandbox(t *testing.T) {
	e := newEnv(t, "kep3085-slow-", kep(15, 33, 46))
	created, _ := e.schedule(e.newPod("db", "app"), kep(15, 33, 46))
	mon := e.monitorSandbox(created)
	creating := []v1.ContainerStatus{waiting("app", "ContainerCreating", "")}

	steps := []struct {
		at        time.Time
		sandboxes []sandbox.Status
		message   string
	}{
		{kep(15, 33, 47), nil, sandbox.MessageNoSandbox},
		{kep(15, 33, 50), []sandbox.Status{notReadySandbox(0, kep(15, 33, 48))}, sandbox.MessageNotReady},
		{kep(15, 33, 53), []sandbox.Status{{ID: "sandbox-1", Attempt: 1, Ready: true, CreatedAt: kep(15, 33, 52)}, notReadySandbox(0, kep(15, 33, 48))}, sandbox.MessageNoIP},
	}
	for _, s := range steps {
		e.at(s.at)
		e.kubelet("db", runtimeState{phase: v1.PodPending, sandboxes: s.sandboxes, containers: creating})
		e.sync()
		expect(t, e.get("db"), v1.PodReadyToStartContainers, want{v1.ConditionFalse, kep(15, 33, 47), notReady, s.message})
	}

	e.at(kep(15, 33, 56))
	sb := []sandbox.Status{readySandbox(1, "10.244.1.6", kep(15, 33, 52)), notReadySandbox(0, kep(15, 33, 48))}
	e.kubelet("db", runtimeState{phase: v1.PodPending, sandboxes: sb, containers: creating})
	e.sync()
	e.at(kep(15, 34, 0))
	e.kubelet("db", runtimeState{phase: v1.PodRunning, sandboxes: sb, containers: []v1.ContainerStatus{running("app", 0, kep(15, 33, 58), true)}})
	e.sync()
	got := e.get("db")
	expect(t, got, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: kep(15, 33, 56)})
	expect(t, got, v1.PodScheduled, want{status: v1.ConditionTrue, ltt: kep(15, 33, 46)})
	if lat := sandboxLatency(t, got); lat != 10*time.Second {
		t.Errorf("sandbox-creation latency on the server %v, want 10s", lat)
	}
	mon.expectTransitions(t, got.ResourceVersion, transition{v1.ConditionFalse, kep(15, 33, 47)}, transition{v1.ConditionTrue, kep(15, 33, 56)})
	lat, _ := mon.initialLatency()
	report(t, "story 2 (slow sandbox): sandbox-creation latency %v (KEP: 10s; breaches a <10s SLO)", lat)
	e.requestFigures(t, "story 2")
}

// TestKEP3085Story3SandboxNeverReady: the sandbox never comes up. The kubelet retries for
// five minutes; PodReadyToStartContainers stays False with lastTransitionTime 15:33:47 on
// the server the whole time, a watcher never sees it change, and passes that change
// nothing send nothing.
func TestKEP3085Story3SandboxNeverReady(t *testing.T) {
	e := newEnv(t, "kep3085-never-", kep(15, 33, 46))
	created, _ := e.schedule(e.newPod("vm", "app"), kep(15, 33, 46))
	mon := e.monitorSandbox(created)
	creating := []v1.ContainerStatus{waiting("app", "ContainerCreating", "")}

	e.at(kep(15, 33, 47))
	e.kubelet("vm", runtimeState{phase: v1.PodPending, containers: creating})
	e.sync()
	var got *v1.Pod
	var failed []sandbox.Status
	end := kep(15, 33, 47).Add(5 * time.Minute)
	for at := kep(15, 33, 57); !at.After(end); at = at.Add(10 * time.Second) {
		e.at(at)
		// Every attempt leaves a sandbox the runtime reports NOTREADY, newest first.
		failed = append([]sandbox.Status{notReadySandbox(uint32(len(failed)), at.Add(-5*time.Second))}, failed...)
		e.kubelet("vm", runtimeState{phase: v1.PodPending, sandboxes: failed, containers: creating})
		e.sync()
		got = e.get("vm")
		expect(t, got, v1.PodReadyToStartContainers, want{v1.ConditionFalse, kep(15, 33, 47), notReady, sandbox.MessageNotReady})
		if t.Failed() {
			t.FailNow()
		}
	}
	expect(t, got, v1.PodScheduled, want{status: v1.ConditionTrue, ltt: kep(15, 33, 46)})
	expect(t, got, v1.PodReady, want{v1.ConditionFalse, kep(15, 33, 47), unready, "containers with unready status: [app]"})
	if got.Status.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", got.Status.Phase)
	}
	mon.expectTransitions(t, got.ResourceVersion, transition{v1.ConditionFalse, kep(15, 33, 47)})
	if _, ok := mon.initialLatency(); ok {
		t.Errorf("monitoring service measured a latency for a sandbox that never came up")
	}
	stuck := e.now().Sub(cond(got, v1.PodReadyToStartContainers).LastTransitionTime.Time)
	if stuck != 5*time.Minute {
		t.Errorf("not ready for %v according to the server, want 5m0s", stuck)
	}
	report(t, "story 3 (sandbox never ready): %d attempts, not ready for %v since %s on the server", len(failed), stuck, ts(kep(15, 33, 47)))
	e.requestFigures(t, "story 3")
	// Only the first status and the change of message (no sandbox -> not ready) differ.
	if _, patches, _ := e.client.counts(); patches != 2 {
		t.Errorf("%d PATCHes, want 2: statuses that change nothing must send nothing", patches)
	}
}

// TestKEP3085Story4SandboxRecreated: the sandbox is ready at 15:33:52, crashes two hours
// later (False at 17:33:46) and is re-created at 17:33:52. The server shows every
// transition with its own time, and the monitoring service tells the initial creation
// (6 s) from the re-creation (6 s).
func TestKEP3085Story4SandboxRecreated(t *testing.T) {
	e := newEnv(t, "kep3085-crash-", kep(15, 33, 46))
	created, _ := e.schedule(e.newPod("stateful", "app"), kep(15, 33, 46))
	mon := e.monitorSandbox(created)

	e.at(kep(15, 33, 47))
	e.kubelet("stateful", runtimeState{phase: v1.PodPending, containers: []v1.ContainerStatus{waiting("app", "ContainerCreating", "")}})
	e.sync()
	e.at(kep(15, 33, 52))
	first := []sandbox.Status{readySandbox(0, "10.244.1.7", kep(15, 33, 51))}
	e.kubelet("stateful", runtimeState{phase: v1.PodPending, sandboxes: first, containers: []v1.ContainerStatus{waiting("app", "ContainerCreating", "")}})
	e.sync()
	e.at(kep(15, 33, 53))
	e.kubelet("stateful", runtimeState{phase: v1.PodRunning, sandboxes: first, containers: []v1.ContainerStatus{running("app", 0, kep(15, 33, 53), true)}})
	e.sync()
	e.at(kep(15, 34, 0))
	got := e.get("stateful")
	expect(t, got, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: kep(15, 33, 52)})
	expect(t, got, v1.PodReady, want{status: v1.ConditionTrue, ltt: kep(15, 33, 53)})

	// Two hours later the sandbox dies with the container in it.
	e.at(kep(17, 33, 46))
	crashed := []sandbox.Status{{ID: "sandbox-0", Attempt: 0, IP: "10.244.1.7", CreatedAt: kep(15, 33, 51)}}
	dead := exited("app", 0, kep(15, 33, 53), kep(17, 33, 45), 255, "Error")
	e.kubelet("stateful", runtimeState{phase: v1.PodRunning, sandboxes: crashed, containers: []v1.ContainerStatus{dead}})
	e.sync()
	got = e.get("stateful")
	expect(t, got, v1.PodReadyToStartContainers, want{v1.ConditionFalse, kep(17, 33, 46), notReady, sandbox.MessageNotReady})
	expect(t, got, v1.PodReady, want{v1.ConditionFalse, kep(17, 33, 46), unready, "containers with unready status: [app]"})
	expect(t, got, v1.PodScheduled, want{status: v1.ConditionTrue, ltt: kep(15, 33, 46)})

	// Re-created (attempt 1, a new IP) at 17:33:52, the container restarted in it.
	e.at(kep(17, 33, 52))
	second := []sandbox.Status{readySandbox(1, "10.244.1.8", kep(17, 33, 50)), notReadySandbox(0, kep(15, 33, 51))}
	restarted := running("app", 1, kep(17, 33, 52), true)
	restarted.LastTerminationState = dead.State
	e.kubelet("stateful", runtimeState{phase: v1.PodRunning, sandboxes: second, containers: []v1.ContainerStatus{restarted}})
	e.sync()
	e.at(kep(17, 34, 0))
	got = e.get("stateful")
	expect(t, got, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: kep(17, 33, 52)})
	expect(t, got, v1.PodScheduled, want{status: v1.ConditionTrue, ltt: kep(15, 33, 46)})
	expect(t, got, v1.PodReady, want{status: v1.ConditionTrue, ltt: kep(17, 33, 52)})
	if got.Status.PodIP != "10.244.1.8" || len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].RestartCount != 1 {
		t.Errorf("podIP %q containers %+v, want the new sandbox's IP and one restart", got.Status.PodIP, got.Status.ContainerStatuses)
	}

	mon.expectTransitions(t, got.ResourceVersion,
		transition{v1.ConditionFalse, kep(15, 33, 47)}, transition{v1.ConditionTrue, kep(15, 33, 52)},
		transition{v1.ConditionFalse, kep(17, 33, 46)}, transition{v1.ConditionTrue, kep(17, 33, 52)})
	initial, _ := mon.initialLatency()
	rec := mon.recreations()
	if initial != 6*time.Second || !slices.Equal(rec, []time.Duration{6 * time.Second}) {
		t.Errorf("monitoring service: initial creation %v, re-creations %v; want 6s and [6s]", initial, rec)
	}
	report(t, "story 4 (sandbox crash): initial sandbox creation %v, %d re-creation(s) %v", initial, len(rec), rec)
	e.requestFigures(t, "story 4")
}

// TestKEP3085Story5GracefulTermination: scheduled at 12:33:46, sandbox ready at 12:33:48,
// deleted by a controller at 15:33:47 and terminated by the kubelet at 15:33:49.
// PodReadyToStartContainers turns False at 15:33:49 while the pod, with its
// deletionTimestamp, is still on the server; Ready and ContainersReady are False; then the
// kubelet's final delete (grace period 0, UID precondition) removes it.
func TestKEP3085Story5GracefulTermination(t *testing.T) {
	e := newEnv(t, "kep3085-delete-", kep(12, 33, 46))
	created, _ := e.schedule(e.newPod("job", "app"), kep(12, 33, 46))
	mon := e.monitorSandbox(created)
	sb := []sandbox.Status{readySandbox(0, "10.244.2.5", kep(12, 33, 48))}

	e.at(kep(12, 33, 47))
	e.kubelet("job", runtimeState{phase: v1.PodPending, containers: []v1.ContainerStatus{waiting("app", "ContainerCreating", "")}})
	e.sync()
	e.at(kep(12, 33, 48))
	e.kubelet("job", runtimeState{phase: v1.PodPending, sandboxes: sb, containers: []v1.ContainerStatus{waiting("app", "ContainerCreating", "")}})
	e.sync()
	e.at(kep(12, 33, 49))
	e.kubelet("job", runtimeState{phase: v1.PodRunning, sandboxes: sb, containers: []v1.ContainerStatus{running("app", 0, kep(12, 33, 49), true)}})
	e.sync()

	e.at(kep(15, 33, 46))
	got := e.get("job")
	expect(t, got, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: kep(12, 33, 48)})
	expect(t, got, v1.PodScheduled, want{status: v1.ConditionTrue, ltt: kep(12, 33, 46)})

	// The controller deletes the pod; the API server only marks it (graceful deletion).
	e.at(kep(15, 33, 47))
	deleteRequested := e.now()
	if err := e.other.CoreV1().Pods(e.ns).Delete(e.ctx, "job", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	// The kubelet stops the containers and the sandbox, then finishes the pod.
	e.at(kep(15, 33, 49))
	stopped := []sandbox.Status{{ID: "sandbox-0", IP: "10.244.2.5", CreatedAt: kep(12, 33, 48)}}
	pod := e.kubelet("job", runtimeState{phase: v1.PodSucceeded, sandboxes: stopped,
		containers: []v1.ContainerStatus{exited("app", 0, kep(12, 33, 49), kep(15, 33, 48), 0, "Completed")}})
	if pod.DeletionTimestamp == nil {
		t.Fatalf("the pod has no deletionTimestamp after the delete request")
	}
	if err := e.mgr.TerminatePod(context.Background(), pod); err != nil {
		t.Fatalf("TerminatePod: %v", err)
	}
	e.updates++
	e.sync()
	got = e.get("job")
	expect(t, got, v1.PodReadyToStartContainers, want{v1.ConditionFalse, kep(15, 33, 49), notReady, sandbox.MessageNotReady})
	expect(t, got, v1.PodScheduled, want{status: v1.ConditionTrue, ltt: kep(12, 33, 46)})
	expect(t, got, v1.PodReady, want{v1.ConditionFalse, kep(15, 33, 49), readiness.ReasonPodCompleted, ""})
	expect(t, got, v1.ContainersReady, want{v1.ConditionFalse, kep(15, 33, 49), readiness.ReasonPodCompleted, ""})
	if got.Status.Phase != v1.PodSucceeded || got.DeletionTimestamp == nil {
		t.Errorf("phase %s deletionTimestamp %v, want Succeeded and still being deleted", got.Status.Phase, got.DeletionTimestamp)
	}
	mon.expectTransitions(t, got.ResourceVersion,
		transition{v1.ConditionFalse, kep(12, 33, 47)}, transition{v1.ConditionTrue, kep(12, 33, 48)},
		transition{v1.ConditionFalse, kep(15, 33, 49)})
	termination := cond(got, v1.PodReadyToStartContainers).LastTransitionTime.Sub(deleteRequested)
	if termination != 2*time.Second {
		t.Errorf("termination latency %v, want 2s", termination)
	}

	// The kubelet's final delete, with the UID precondition.
	zero := int64(0)
	if err := e.other.CoreV1().Pods(e.ns).Delete(e.ctx, "job", metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &got.UID},
	}); err != nil {
		t.Fatalf("final delete: %v", err)
	}
	if _, err := e.other.CoreV1().Pods(e.ns).Get(e.ctx, "job", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the final delete: %v, want NotFound", err)
	}
	report(t, "story 5 (graceful termination): termination latency %v from the delete request to PodReadyToStartContainers=False (KEP: 2s; the server's deletionTimestamp %s is wall-clock time plus the grace period)",
		termination, got.DeletionTimestamp.UTC().Format(time.RFC3339))
	e.requestFigures(t, "story 5")
}

// TestKEP3085Story6VolumeMountFailure: the two shapes a volume problem takes.
//
// In the KEP's own story, a volume from a missing Secret cannot be mounted; the kubelet
// waits for volumes before it creates the sandbox, so PodReadyToStartContainers stays
// False ("no pod sandbox exists") until the Secret appears, and the latency then
// measured is the user-error case the KEP says to filter out of SLOs.
//
// When the failure comes after the sandbox (a container that cannot be created because
// of a missing ConfigMap key, a subPath that cannot be mounted), PodReadyToStartContainers
// is True while the containers never start: the sandbox is fine, the containers are not.
func TestKEP3085Story6VolumeMountFailure(t *testing.T) {
	t.Run("missing Secret: no sandbox", func(t *testing.T) {
		e := newEnv(t, "kep3085-secret-", kep(15, 33, 46))
		p := e.newPod("reader", "app")
		p.Spec.Volumes = []v1.Volume{{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db-creds"}}}}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "creds", MountPath: "/creds"}}
		created, _ := e.schedule(p, kep(15, 33, 46))
		mon := e.monitorSandbox(created)
		creating := []v1.ContainerStatus{waiting("app", "ContainerCreating", "")}

		// The kubelet retries the mount every two minutes for ten minutes.
		for at := kep(15, 33, 47); !at.After(kep(15, 43, 47)); at = at.Add(2 * time.Minute) {
			e.at(at)
			e.kubelet("reader", runtimeState{phase: v1.PodPending, containers: creating})
			e.sync()
			got := e.get("reader")
			expect(t, got, v1.PodReadyToStartContainers, want{v1.ConditionFalse, kep(15, 33, 47), notReady, sandbox.MessageNoSandbox})
			expect(t, got, v1.PodReady, want{v1.ConditionFalse, kep(15, 33, 47), unready, "containers with unready status: [app]"})
		}
		if _, patches, _ := e.client.counts(); patches != 1 {
			t.Errorf("%d PATCHes while nothing changed, want 1", patches)
		}

		// The Secret is created at 15:45:00; the volume mounts and the sandbox is ready at 15:45:02.
		secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "db-creds"}, StringData: map[string]string{"password": "x"}}
		if _, err := e.other.CoreV1().Secrets(e.ns).Create(e.ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create secret: %v", err)
		}
		e.at(kep(15, 45, 2))
		sb := []sandbox.Status{readySandbox(0, "10.244.3.5", kep(15, 45, 1))}
		e.kubelet("reader", runtimeState{phase: v1.PodPending, sandboxes: sb, containers: creating})
		e.sync()
		got := e.get("reader")
		expect(t, got, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: kep(15, 45, 2)})
		lat := sandboxLatency(t, got)
		if lat != 11*time.Minute+16*time.Second {
			t.Errorf("latency %v, want 11m16s", lat)
		}
		mon.expectTransitions(t, got.ResourceVersion, transition{v1.ConditionFalse, kep(15, 33, 47)}, transition{v1.ConditionTrue, kep(15, 45, 2)})
		report(t, "story 6 (missing Secret): no sandbox for 11m15s, then a latency of %v (a user error the KEP filters out of SLOs)", lat)
		e.requestFigures(t, "story 6a")
	})

	t.Run("sandbox ready, containers never start", func(t *testing.T) {
		e := newEnv(t, "kep3085-config-", kep(15, 33, 46))
		p := e.newPod("api", "app")
		p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "MODE", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "settings"}, Key: "mode"}}}}
		created, _ := e.schedule(p, kep(15, 33, 46))
		mon := e.monitorSandbox(created)

		e.at(kep(15, 33, 47))
		e.kubelet("api", runtimeState{phase: v1.PodPending, containers: []v1.ContainerStatus{waiting("app", "ContainerCreating", "")}})
		e.sync()
		sb := []sandbox.Status{readySandbox(0, "10.244.3.6", kep(15, 33, 48))}
		stuck := []v1.ContainerStatus{waiting("app", "CreateContainerConfigError", `configmap "settings" not found`)}
		for at := kep(15, 33, 49); !at.After(kep(15, 43, 49)); at = at.Add(2 * time.Minute) {
			e.at(at)
			e.kubelet("api", runtimeState{phase: v1.PodPending, sandboxes: sb, containers: stuck})
			e.sync()
			got := e.get("api")
			expect(t, got, v1.PodReadyToStartContainers, want{status: v1.ConditionTrue, ltt: kep(15, 33, 49)})
			expect(t, got, v1.PodReady, want{v1.ConditionFalse, kep(15, 33, 47), unready, "containers with unready status: [app]"})
			if w := got.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "CreateContainerConfigError" {
				t.Errorf("container state %+v, want waiting with CreateContainerConfigError", got.Status.ContainerStatuses[0].State)
			}
		}
		got := e.get("api")
		if got.Status.Phase != v1.PodPending {
			t.Errorf("phase %s, want Pending", got.Status.Phase)
		}
		mon.expectTransitions(t, got.ResourceVersion, transition{v1.ConditionFalse, kep(15, 33, 47)}, transition{v1.ConditionTrue, kep(15, 33, 49)})
		report(t, "story 6 (container config error): sandbox-creation latency %v, then not ready for %v with the sandbox up",
			sandboxLatency(t, got), e.now().Sub(kep(15, 33, 49)))
		e.requestFigures(t, "story 6b")
		if _, patches, _ := e.client.counts(); patches != 2 {
			t.Errorf("%d PATCHes, want 2 (the first status and the sandbox becoming ready)", patches)
		}
	})
}
