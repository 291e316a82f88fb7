package podsim

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/sandbox"
)

// What a random draw is for; each draw is a hash of the pod's seed, the purpose, the
// container's position and a counter (restart count or sandbox attempt), so it does not
// depend on the order of draws or on how often the pod was queried.
const (
	purposeSandboxDelay uint64 = iota + 1
	purposeSandboxID
	purposeSandboxCrash
	purposePull
	purposeStart
	purposeRun
	purposeStartup
	purposeReadiness
	purposeFlap
	purposeLiveness
	purposeStop
	purposeContainerID
	purposeSandboxFailures
)

func (p *Pod) draw(purpose uint64, i int, n int32) uint64 {
	return mix(p.seed ^ mix(purpose<<48^uint64(i)<<32^uint64(uint32(n))))
}

// mix is the splitmix64 finaliser.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// hashString is FNV-1a.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// hexID returns n (at most 64) hex digits drawn from u.
func hexID(u uint64, n int) string {
	const digits = "0123456789abcdef"
	var buf [64]byte
	for i := 0; i < n; i += 16 {
		u = mix(u)
		for j := 0; j < 16 && i+j < n; j++ {
			buf[i+j] = digits[u>>(4*j)&0xf]
		}
	}
	return string(buf[:n])
}

// imageRef returns the image as containerd reports it (fully qualified, with a tag) and its
// digest reference, with a digest derived from the image name.
func imageRef(image string) (string, string) {
	if image == "" {
		return "", ""
	}
	name, digest, hasDigest := strings.Cut(image, "@")
	tag := ""
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name, tag = name[:i], name[i+1:]
	}
	if first, rest, ok := strings.Cut(name, "/"); !ok || !(strings.ContainsAny(first, ".:") || first == "localhost") {
		if !ok {
			name = "library/" + name
		} else {
			name = first + "/" + rest
		}
		name = "docker.io/" + name
	}
	if !hasDigest {
		digest = "sha256:" + hexID(hashString(name+":"+tag), 64)
	}
	if tag == "" {
		if hasDigest {
			return name + "@" + digest, name + "@" + digest
		}
		tag = "latest"
	}
	return name + ":" + tag, name + "@" + digest
}

func mtime(ns int64) metav1.Time {
	if ns == 0 {
		return metav1.Time{}
	}
	return metav1.NewTime(time.Unix(0, ns).UTC())
}

// nanos is t in Unix nanoseconds, 0 for the zero time.
func nanos(t metav1.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// facts builds the facts at t.
func (p *Pod) facts(t int64) Facts {
	f := Facts{Runtime: podstate.Runtime{HostIPs: p.hostIPs, Terminal: p.terminal}, Features: p.features, Stopped: p.terminal && !p.anyActive()}
	f.Done = f.Stopped && p.deleting
	if p.evicted {
		f.Eviction = &podstate.Eviction{Reason: ReasonDeadlineExceeded, Message: MessageDeadlineExceeded}
	}
	n := 0
	if p.sbExists {
		n++
	}
	if p.hasPrev {
		n++
	}
	if n > 0 {
		ip := ""
		if len(p.podIPs) > 0 {
			ip = p.podIPs[0]
		}
		hostNetwork := p.pod.Spec.HostNetwork
		f.Sandboxes = make([]sandbox.Status, 0, n)
		if p.sbExists {
			f.Sandboxes = append(f.Sandboxes, sandbox.Status{ID: p.sbIDs[0], Attempt: p.sbAttempt, Ready: p.sbReady,
				CreatedAt: time.Unix(0, p.sbCreated).UTC(), HostNetwork: hostNetwork, IP: ip})
		}
		if p.hasPrev {
			f.Sandboxes = append(f.Sandboxes, sandbox.Status{ID: p.sbIDs[1], Attempt: p.sbAttempt - 1,
				CreatedAt: time.Unix(0, p.prevAt).UTC(), HostNetwork: hostNetwork, IP: ip})
		}
		if p.sbReady {
			f.PodIPs = p.podIPs
		}
	}
	n = 0
	for i := range p.ctrs {
		if p.ctrs[i].id != "" {
			n++
		}
	}
	if n == 0 {
		return f
	}
	f.Containers = make([]podstate.Container, 0, n)
	for i := range p.ctrs {
		c := &p.ctrs[i]
		if c.id == "" {
			continue
		}
		fc := podstate.Container{Name: c.spec.Name, ContainerID: c.id, Image: c.image, ImageID: c.imageID,
			RestartCount: c.restarts, SandboxID: p.sbIDs[0]}
		if c.sbIdx != p.sbAttempt || !p.sbExists {
			fc.SandboxID = p.sbIDs[1]
		}
		cur := term{id: c.id, started: c.started, finished: c.finished, exit: c.exit, reason: c.reason, valid: true}
		switch {
		case c.st == cRunning:
			fc.State.Running = &v1.ContainerStateRunning{StartedAt: mtime(c.started)}
			fc.LastTerminationState = c.last.state()
			if c.spec.StartupProbe != nil {
				fc.Startup = podstate.ProbeUnknown
				if c.startupAt <= t {
					fc.Startup = podstate.ProbeSuccess
				}
			}
			if c.spec.ReadinessProbe != nil {
				fc.Readiness = podstate.ProbeFailure
				if c.ready(t) {
					fc.Readiness = podstate.ProbeSuccess
				}
			}
		case c.st == cRestarting && c.clb:
			fc.State.Waiting = &v1.ContainerStateWaiting{Reason: ReasonCrashLoopBackOff,
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)",
					time.Duration(c.backoff), c.spec.Name, p.pod.Name, p.pod.Namespace, p.pod.UID)}
			fc.LastTerminationState = cur.state()
		default: // exited, restarting at once, or an old instance
			fc.State = cur.state()
			fc.LastTerminationState = c.last.state()
		}
		f.Containers = append(f.Containers, fc)
	}
	return f
}

// ready reports whether c's readiness probe succeeds at t.
func (c *ctr) ready(t int64) bool {
	if c.readyAt > t {
		return false
	}
	return c.flap == 0 || ((t-c.readyAt)/c.flap)%2 == 0
}

func (tm term) state() v1.ContainerState {
	if !tm.valid {
		return v1.ContainerState{}
	}
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: tm.exit, Reason: tm.reason.String(),
		StartedAt: mtime(tm.started), FinishedAt: mtime(tm.finished), ContainerID: tm.id}}
}
