package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/sandbox"
)

// Kind is one of the pod lifecycles the simulation knows.
type Kind string

// The pod lifecycles, cycled through in this order as pods are added.
const (
	// KindWeb: an init container, a sidecar proxy with a startup probe, an app with a
	// readiness probe, and a readiness gate the load balancer sets once it registered the pod.
	KindWeb Kind = "web"
	// KindSlowSandbox: the sandbox takes 12–20 s to come up (slow CNI).
	KindSlowSandbox Kind = "slow-sandbox"
	// KindCrashLoop: the container exits 1 after a few seconds and is restarted with the
	// kubelet's doubling back-off (CrashLoopBackOff).
	KindCrashLoop Kind = "crashloop"
	// KindSandboxRetry: sandbox creation fails twice before the third attempt is ready.
	KindSandboxRetry Kind = "sandbox-retry"
	// KindSandboxCrash: runs ready behind the load balancer until its sandbox dies; a new
	// sandbox is created and the containers restart in it.
	KindSandboxCrash Kind = "sandbox-crash"
	// KindBatch: restartPolicy Never; the container completes and the pod Succeeds.
	KindBatch Kind = "batch"
	// KindTerminating: runs ready until it is deleted, then terminates gracefully.
	KindTerminating Kind = "terminating"
)

// Kinds lists every Kind in the order pods are given them.
func Kinds() []Kind {
	return []Kind{KindWeb, KindSlowSandbox, KindCrashLoop, KindSandboxRetry, KindSandboxCrash, KindBatch, KindTerminating}
}

// GateType is the readiness gate the simulated load-balancer controller owns.
const GateType v1.PodConditionType = "lb.example.com/registered"

// script is one pod's life: the timing parameters drawn from the seed, and facts(t) giving
// what the runtime reports t seconds after the pod was created.
type script struct {
	kind Kind
	// sandboxAt: the first ready sandbox appears (after failed attempts for KindSandboxRetry).
	sandboxAt int
	// initFor: how long the init container runs.
	initFor int
	// startupAfter: the sidecar's startup probe passes this long after it starts.
	startupAfter int
	// readyAfter: the app's readiness probe passes this long after it starts.
	readyAfter int
	// runFor: how long the crash-looping or batch container runs each time.
	runFor int
	// crashAt: the sandbox dies (KindSandboxCrash).
	crashAt int
	// deleteAt: the pod is deleted (KindTerminating); it takes graceFor seconds to stop.
	deleteAt, graceFor int
}

// newScript draws the timing of a pod of kind k.
func newScript(k Kind, r *rand.Rand) script {
	between := func(lo, hi int) int { return lo + r.IntN(hi-lo+1) }
	s := script{kind: k, sandboxAt: between(1, 3), initFor: between(1, 3), startupAfter: between(1, 2),
		readyAfter: between(2, 4), runFor: between(3, 6), crashAt: between(30, 40),
		deleteAt: between(35, 45), graceFor: between(2, 5)}
	switch k {
	case KindSlowSandbox:
		s.sandboxAt = between(12, 20)
	case KindSandboxRetry:
		s.sandboxAt = 8 + between(0, 2)
	case KindBatch:
		s.runFor = between(6, 10)
	}
	return s
}

// podSpec returns the pod a kind runs.
func podSpec(k Kind, namespace, name, node string) *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	readiness := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}}
	app := v1.Container{Name: "app", Image: "registry.example.com/app:1.0", ReadinessProbe: readiness}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Generation: 1, Labels: map[string]string{"app": string(k)}},
		Spec:       v1.PodSpec{NodeName: node, RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{app}},
	}
	switch k {
	case KindWeb:
		p.Spec.InitContainers = []v1.Container{
			{Name: "setup", Image: "registry.example.com/setup:1.0"},
			{Name: "proxy", Image: "registry.example.com/proxy:1.0", RestartPolicy: &always,
				StartupProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(15000)}}}},
		}
		p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: GateType}}
	case KindSandboxCrash:
		p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: GateType}}
	case KindCrashLoop:
		p.Spec.Containers = []v1.Container{{Name: "worker", Image: "registry.example.com/worker:1.0"}}
	case KindBatch:
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		p.Spec.Containers = []v1.Container{{Name: "job", Image: "registry.example.com/job:1.0"}}
	}
	return p
}

// facts is what the runtime reports about a pod at one moment.
type facts struct {
	sandboxes  []sandbox.Status
	containers []podstate.Container
	// terminal: the pod worker decided the pod is finished (podIsTerminal).
	terminal bool
	// deleted: the pod has been deleted (graceful termination under way).
	deleted bool
}

// at returns the facts t seconds after the pod's creation; base is the creation time, name
// the pod's name (for IDs and IPs), ip its pod IP.
func (s script) at(t int, base time.Time, name, ip string) facts {
	ts := func(sec int) metav1.Time { return metav1.NewTime(base.Add(time.Duration(sec) * time.Second)) }
	sb := func(attempt uint32, ready bool) sandbox.Status {
		st := sandbox.Status{ID: fmt.Sprintf("%s-sandbox-%d", name, attempt), Attempt: attempt, Ready: ready, CreatedAt: base}
		if ready {
			st.IP = ip
		} else {
			st.NoNetworkStatus = true
		}
		return st
	}
	id := func(c string, restarts int32) string { return fmt.Sprintf("containerd://%s-%s-%d", name, c, restarts) }
	running := func(c string, since int, restarts int32) podstate.Container {
		return podstate.Container{Name: c, ContainerID: id(c, restarts), RestartCount: restarts,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: ts(since)}}}
	}
	exited := func(c string, since, until int, code int32, restarts int32) v1.ContainerState {
		reason := "Completed"
		if code != 0 {
			reason = "Error"
		}
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, Reason: reason,
			StartedAt: ts(since), FinishedAt: ts(until), ContainerID: id(c, restarts)}}
	}
	var f facts

	switch s.kind {
	case KindSandboxRetry:
		// Attempts 0 and 1 never become ready; the newest sandbox is listed first.
		fail := s.sandboxAt / 2
		switch {
		case t >= s.sandboxAt:
			f.sandboxes = []sandbox.Status{sb(2, true), sb(1, false), sb(0, false)}
		case t >= fail:
			f.sandboxes = []sandbox.Status{sb(1, false), sb(0, false)}
		case t >= 1:
			f.sandboxes = []sandbox.Status{sb(0, false)}
		}
	default:
		if t >= s.sandboxAt {
			f.sandboxes = []sandbox.Status{sb(0, true)}
		}
	}
	if len(f.sandboxes) == 0 || !f.sandboxes[0].Ready {
		return f
	}
	up := s.sandboxAt // containers start once the sandbox is ready

	switch s.kind {
	case KindWeb:
		setupDone := up + s.initFor
		if t < setupDone {
			f.containers = append(f.containers, running("setup", up, 0))
			return f
		}
		f.containers = append(f.containers, podstate.Container{Name: "setup", ContainerID: id("setup", 0), State: exited("setup", up, setupDone, 0, 0)})
		proxy := running("proxy", setupDone, 0)
		if t >= setupDone+s.startupAfter {
			proxy.Startup = podstate.ProbeSuccess
		}
		f.containers = append(f.containers, proxy)
		if proxy.Startup != podstate.ProbeSuccess {
			return f
		}
		appStart := setupDone + s.startupAfter
		f.containers = append(f.containers, s.app(running("app", appStart, 0), t-appStart))
	case KindCrashLoop:
		f.containers = append(f.containers, crashLoop(t-up, s.runFor, up, running, exited))
	case KindBatch:
		if t < up+s.runFor {
			f.containers = append(f.containers, running("job", up, 0))
			return f
		}
		f.containers = append(f.containers, podstate.Container{Name: "job", ContainerID: id("job", 0), State: exited("job", up, up+s.runFor, 0, 0)})
		f.terminal = true
		f.sandboxes = []sandbox.Status{sb(0, false)} // the kubelet stops the sandbox of a finished pod
	case KindSandboxCrash:
		const recreateAfter = 3
		switch {
		case t < s.crashAt:
			f.containers = append(f.containers, s.app(running("app", up, 0), t-up))
		case t < s.crashAt+recreateAfter:
			// The sandbox died and took the container with it.
			f.sandboxes = []sandbox.Status{sb(0, false)}
			f.containers = append(f.containers, podstate.Container{Name: "app", ContainerID: id("app", 0),
				State: exited("app", up, s.crashAt, 137, 0)})
		default:
			again := s.crashAt + recreateAfter
			f.sandboxes = []sandbox.Status{sb(1, true), sb(0, false)}
			c := s.app(running("app", again, 1), t-again)
			c.LastTerminationState = exited("app", up, s.crashAt, 137, 0)
			f.containers = append(f.containers, c)
		}
	case KindTerminating:
		switch {
		case t < s.deleteAt:
			f.containers = append(f.containers, s.app(running("app", up, 0), t-up))
		case t < s.deleteAt+s.graceFor:
			// Deleted: the app got SIGTERM and fails its readiness probe while draining.
			f.deleted = true
			c := running("app", up, 0)
			c.Readiness = podstate.ProbeFailure
			f.containers = append(f.containers, c)
		default:
			f.deleted, f.terminal = true, true
			f.sandboxes = []sandbox.Status{sb(0, false)}
			f.containers = append(f.containers, podstate.Container{Name: "app", ContainerID: id("app", 0),
				State: exited("app", up, s.deleteAt+s.graceFor, 0, 0)})
		}
	default: // KindSlowSandbox, KindSandboxRetry: a plain app
		f.containers = append(f.containers, s.app(running("app", up, 0), t-up))
	}
	return f
}

// app sets the readiness probe result of an app container that has run for ran seconds.
func (s script) app(c podstate.Container, ran int) podstate.Container {
	if ran >= s.readyAfter {
		c.Readiness = podstate.ProbeSuccess
	}
	return c
}

// crashLoop is the worker container t seconds after the sandbox came up at up: it runs for
// runFor seconds, exits 1, waits in CrashLoopBackOff 10 s, 20 s, 40 s … and runs again.
func crashLoop(t, runFor, up int,
	running func(string, int, int32) podstate.Container,
	exited func(string, int, int, int32, int32) v1.ContainerState) podstate.Container {
	start, backoff := 0, 10
	var restarts int32
	for {
		end := start + runFor
		if t < end {
			c := running("worker", up+start, restarts)
			if restarts > 0 {
				c.LastTerminationState = exited("worker", up+start-backoff/2-runFor, up+start-backoff/2, 1, restarts-1)
			}
			return c
		}
		if t < end+backoff {
			c := running("worker", up+start, restarts)
			c.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off %ds restarting failed container=worker", backoff)}}
			c.LastTerminationState = exited("worker", up+start, up+end, 1, restarts)
			return c
		}
		start = end + backoff
		backoff *= 2
		restarts++
	}
}
