package podsim

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/internal/accept"
)

// adopt resumes a pod that a previous agent process already ran, from its status on the
// server (see "Resuming a pod" in the package documentation), at cfg.Clock's time.
func adopt(pod *v1.Pod, cfg Config) (*Pod, Warnings) {
	p, w := newPod(pod, cfg)
	t := p.cur
	st := &pod.Status
	statuses := make(map[string]*v1.ContainerStatus, len(st.InitContainerStatuses)+len(st.ContainerStatuses))
	for i := range st.InitContainerStatuses {
		statuses[st.InitContainerStatuses[i].Name] = &st.InitContainerStatuses[i]
	}
	for i := range st.ContainerStatuses {
		statuses[st.ContainerStatuses[i].Name] = &st.ContainerStatuses[i]
	}
	created := false
	for _, s := range statuses {
		if s.ContainerID != "" || s.State.Running != nil || s.State.Terminated != nil {
			created = true
		}
	}
	if st.PodIP == "" && !created {
		w.NoIP = p.startFresh(cfg)
		return p, w
	}
	// The sandbox exists: keep its IP.
	switch {
	case pod.Spec.HostNetwork:
		p.podIPs = p.hostIPs
	case st.PodIP != "":
		p.podIPs = make([]string, 0, len(st.PodIPs))
		for _, ip := range st.PodIPs {
			p.podIPs = append(p.podIPs, ip.IP)
		}
		if len(p.podIPs) == 0 {
			p.podIPs = append(p.podIPs, st.PodIP)
		}
		// A finished pod's sandbox is gone: it holds no IP any more (another pod may have
		// been given it since), so only a pod that can still run reserves its IP.
		if !accept.Terminal(st.Phase) {
			if err := cfg.ipam.Reserve(p.key, p.podIPs[0]); err != nil {
				w.IPNotReserved = fmt.Errorf("podsim: resuming pod %s: %w", p.key, err)
			}
		}
	default:
		w.NoIP = p.allocateIP(cfg)
	}
	p.sbIDs[0] = hexID(p.draw(purposeSandboxID, 0, 0), 64)
	p.sbExists, p.sbReady, p.sbAt, p.sbCreated = true, true, never, p.startTime
	if p.b.sandboxCrashSet {
		p.crashed = true // the scripted crash is not replayed
	}
	terminalPhase := accept.Terminal(st.Phase)
	regularSeen := false
	for i := range p.ctrs {
		c := &p.ctrs[i]
		s := statuses[c.spec.Name]
		if s == nil {
			continue
		}
		p.adoptContainer(c, s, t, terminalPhase)
		if c.kind == kindRegular && c.id != "" {
			regularSeen = true
		}
	}
	p.initDone = regularSeen
	if terminalPhase {
		p.terminal, p.sbReady, p.sandboxDown, p.killAt = true, false, true, t
		for i := range p.ctrs {
			if c := &p.ctrs[i]; c.st != cExited && c.id != "" {
				c.st, c.at = cExited, never
			}
		}
		if st.Reason == ReasonDeadlineExceeded {
			p.evicted = true
		}
	}
	// A deleted pod is terminating before anything adopted is run: a restart or a
	// creation that came due while no agent ran never happens (the kubelet's pod worker
	// sends a pod it first sees with a deletionTimestamp straight to termination,
	// pkg/kubelet/pod_workers.go: UpdatePod).
	if pod.DeletionTimestamp != nil {
		p.beginDeletion(pod, t)
	}
	p.run(t)
	return p, w
}

// adoptContainer takes c's state from its reported status s at t.
func (p *Pod) adoptContainer(c *ctr, s *v1.ContainerStatus, t int64, terminalPhase bool) {
	c.restarts = max(s.RestartCount, 0)
	if lt := s.LastTerminationState.Terminated; lt != nil {
		c.last = termOf(lt)
	}
	c.sbIdx = p.sbAttempt
	switch {
	case s.State.Running != nil:
		c.id = s.ContainerID
		if c.id == "" {
			c.id = "containerd://" + hexID(p.draw(purposeContainerID, p.index(c), c.restarts), 64)
		}
		c.pulled = true
		started := nanos(s.State.Running.StartedAt)
		if started == 0 || started > t {
			started = t
		}
		// Replay the instance's schedule from its start, without counting a restart.
		last, restarts := c.last, c.restarts
		id := c.id
		c.id = ""
		p.startInstance(c, started)
		c.id, c.last, c.restarts = id, last, restarts
		if s.Started != nil && *s.Started {
			c.startupAt = min(c.startupAt, t)
			if c.startupAt == never {
				c.startupAt = t
			}
		}
		if s.Ready {
			c.readyAt = min(c.readyAt, started)
			c.flap = 0 // a ready container stays ready
		}
		if c.startupAt != never && c.readyAt == never {
			c.readyAt = c.startupAt
		}
		c.adoptBackOff(s)
		if c.at < t {
			c.at = t // it was due to exit while nobody watched: exit now
		}
		if terminalPhase {
			c.st = cExited
		}
	case s.State.Terminated != nil:
		tm := termOf(s.State.Terminated)
		c.id, c.started, c.finished, c.exit, c.reason = s.ContainerID, tm.started, tm.finished, tm.exit, tm.reason
		if c.id == "" {
			c.id = tm.id
		}
		if c.id == "" {
			c.id = "containerd://" + hexID(p.draw(purposeContainerID, p.index(c), c.restarts), 64)
		}
		c.pulled, c.st = true, cExited
		if !terminalPhase {
			p.adoptRestart(c, s, t)
		}
	case s.State.Waiting != nil && c.last.valid:
		// Waiting to be restarted (CrashLoopBackOff): the last termination is the instance.
		c.id, c.started, c.finished, c.exit, c.reason = c.last.id, c.last.started, c.last.finished, c.last.exit, c.last.reason
		if c.id == "" {
			c.id = s.ContainerID
		}
		if c.id == "" {
			c.id = "containerd://" + hexID(p.draw(purposeContainerID, p.index(c), c.restarts), 64)
		}
		c.last = term{}
		c.pulled, c.st = true, cExited
		if !terminalPhase {
			p.adoptRestart(c, s, t)
		}
	}
}

// adoptRestart decides, at t, the restart of c, which exited before the adoption, after
// the back-off adoptBackOff gives it.
func (p *Pod) adoptRestart(c *ctr, s *v1.ContainerStatus, t int64) {
	if c.finished <= 0 || c.finished > t {
		c.finished = t
	}
	c.adoptBackOff(s)
	c.pend, c.pendR = c.exit, c.reason
	p.exited(c, c.finished)
	if c.st == cRestarting && c.at < t {
		c.at = t
	}
}

// adoptBackOff gives c, adopted from its status s with its restart count and its
// current (running) or last (exited) instance set, the crash-loop back-off entry that the
// earlier process held as far as s shows it (see "Resuming a pod" in the package
// documentation):
//
//   - waiting in CrashLoopBackOff with the kubelet's message: the back-off the message
//     announces, stepped at the exit, so that exited waits exactly that long from the exit
//     and the message stays the same;
//   - otherwise, never restarted: no entry (the next restart is immediate, as a new
//     pod's first);
//   - running, and its previous instance ran longer than twice the maximum back-off: the
//     entry was reset at that exit (pkg/kubelet/kubelet.go: HasExpiredFunc), the initial
//     back-off stepped then;
//   - otherwise: the back-off its restart count implies when every restart but the first
//     waited (10 s, 20 s, 40 s … for 1, 2, 3 … restarts, up to 5 min), stepped at the
//     instance's start, as the earlier process stepped it when it started the instance.
func (c *ctr) adoptBackOff(s *v1.ContainerStatus) {
	c.backoff, c.backoffAt = 0, 0
	if w := s.State.Waiting; w != nil && w.Reason == ReasonCrashLoopBackOff {
		if d, ok := announcedBackOff(w.Message, c.spec.Name); ok {
			c.backoff, c.backoffAt = d, c.finished
			return
		}
	}
	if c.restarts <= 0 {
		return
	}
	if prev := c.last; c.st == cRunning && prev.valid && prev.finished > 0 && prev.finished-prev.started > 2*backOffMax {
		c.backoff, c.backoffAt = backOffInitial, prev.finished
		return
	}
	c.backoff = backOffInitial
	for i := int32(1); i < c.restarts && c.backoff < backOffMax; i++ {
		c.backoff = min(2*c.backoff, backOffMax)
	}
	c.backoffAt = c.started
}

// announcedBackOff is the delay a CrashLoopBackOff message of the container named name
// announces: "back-off 20s restarting failed container=NAME pod=…", as the kubelet
// (pkg/kubelet/kuberuntime: doBackOff) and Facts write it. It reports false for any
// other message and for a delay that is not positive or is above the maximum back-off.
func announcedBackOff(msg, name string) (int64, bool) {
	rest, ok := strings.CutPrefix(msg, "back-off ")
	if !ok {
		return 0, false
	}
	delay, rest, ok := strings.Cut(rest, " ")
	if !ok || !strings.HasPrefix(rest, "restarting failed container="+name+" ") {
		return 0, false
	}
	d, err := time.ParseDuration(delay)
	if err != nil || d <= 0 || int64(d) > backOffMax {
		return 0, false
	}
	return int64(d), true
}

func termOf(s *v1.ContainerStateTerminated) term {
	return term{id: s.ContainerID, started: nanos(s.StartedAt), finished: nanos(s.FinishedAt),
		exit: s.ExitCode, reason: exitReason(s.ExitCode), valid: true}
}
