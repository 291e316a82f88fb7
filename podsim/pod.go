package podsim

import (
	"errors"
	"fmt"
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/kubeletrules"
)

// Node is the node the simulated pods run on.
type Node struct {
	// Name is the node's name.
	Name string
	// HostIPs are the node's IP addresses, primary first.
	HostIPs []string
}

// Config is what a simulated pod needs besides the pod.
type Config struct {
	// Node is the node the pod runs on.
	Node Node
	// Profile is the node's behaviour profile. The zero Profile has no delays but honours
	// probe delays; use Default() for realistic timing or Fast() for none at all.
	Profile Profile
	// Seed makes a run reproducible: every random draw of a pod comes from a hash of Seed,
	// the pod's namespace, its name and what is drawn (never from the pod's UID, which
	// differs between runs, nor from the wall clock).
	Seed uint64
	// Cache, when set (the same one for every pod), shares the pods' common data (their
	// resolved profiles and image references). nil gives each pod its own copies.
	Cache *Cache
	// Features selects the Kubernetes version whose behaviour is simulated (sidecars,
	// container restart rules) and is passed on to podstate.Generate through
	// Facts.Input. The zero value is v1.37.0.
	Features features.Set
	// Clock is the simulation's time: New starts the pod at Clock.Now(), and Advance and
	// Update move it to Clock.Now(). An agent that steps a simulated time passes its fake
	// clock (k8s.io/utils/clock/testing); nil is the real clock.
	Clock clock.PassiveClock

	// ipam is New's ipam argument, carried to the functions New calls.
	ipam *IPAM
}

// Warnings is what New had to adjust to start simulating a pod. None of it stops the Pod
// from being simulated; each field is a different audience's business.
type Warnings struct {
	// Annotations are the pod's invalid sim.podstatus.io/ annotations, in a fixed order; each
	// fell back to the profile's value. They are the pod author's doing: the fleet agent
	// reports each as a Warning Event on the pod.
	Annotations []*AnnotationError
	// NoIP is why the pod got no pod IP, nil when it got one. It matches
	// ErrPodCIDRExhausted (errors.Is) when the node's pod CIDR has no address left. The pod
	// never gets a sandbox and stays Pending, as behind a kubelet whose network plugin has
	// no address left: an operator's business (a Warning Event and an error log).
	NoIP error
	// IPNotReserved is why the pod IP of an earlier run (New resuming a pod) could not be
	// reserved in New's ipam, nil when it could or there was none: another pod holds it, or
	// it is not an address of the CIDR. The pod keeps reporting it; nothing the pod shows
	// changes (an informational log).
	IPNotReserved error
}

// Err returns every warning joined into one error (errors.Join), nil when there is none.
func (w Warnings) Err() error {
	errs := make([]error, 0, len(w.Annotations)+2)
	for _, e := range w.Annotations {
		errs = append(errs, e)
	}
	return errors.Join(append(errs, w.NoIP, w.IPNotReserved)...)
}

// never is a time that does not come.
const never = math.MaxInt64

// defaultGrace is the API's default terminationGracePeriodSeconds.
const defaultGrace = 30 * time.Second

// The kubelet's crash-loop back-off (pkg/kubelet/kubelet.go: backOffPeriod and
// MaxContainerBackOff); an entry not stepped for twice the maximum starts over
// (k8s.io/client-go/util/flowcontrol Backoff).
const (
	backOffInitial = int64(10 * time.Second)
	backOffMax     = int64(300 * time.Second)
)

// Reasons and messages the simulated runtime and pod worker report.
const (
	// ReasonCrashLoopBackOff is the waiting reason of a container the kubelet restarts
	// only after its back-off.
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
	// ReasonDeadlineExceeded is the eviction reason of a pod active longer than
	// spec.activeDeadlineSeconds (pkg/kubelet/active_deadline.go).
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// MessageDeadlineExceeded is the eviction message that goes with ReasonDeadlineExceeded.
	MessageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// kind is a container's role in the pod.
type kind uint8

const (
	kindInit    kind = iota // a regular init container
	kindSidecar             // an init container with restartPolicy Always
	kindRegular             // a regular container
)

// cstate is where a container is in its life.
type cstate uint8

const (
	cNone       cstate = iota // not created in the current sandbox (maybe an older instance)
	cCreating                 // image pull and start under way until at
	cRunning                  // running; exits at at (never: runs until stopped)
	cExited                   // exited and stays so (until a new sandbox)
	cRestarting               // exited; a new instance runs at at
)

// reason is a terminated state's reason.
type reason uint8

const (
	reasonCompleted reason = iota
	reasonError
)

func (r reason) String() string {
	if r == reasonError {
		return "Error"
	}
	return "Completed"
}

func exitReason(code int32) reason {
	if code == 0 {
		return reasonCompleted
	}
	return reasonError
}

// term is a container instance's termination.
type term struct {
	id                string
	started, finished int64
	exit              int32
	reason            reason
	valid             bool
}

// ctr is one container of the pod and its current instance.
type ctr struct {
	spec     *v1.Container
	kind     kind
	st       cstate
	pulled   bool  // its image is on the node
	stale    bool  // the instance belongs to a dead sandbox
	stopping bool  // asked to stop; exits at at with pend
	clb      bool  // cRestarting with a back-off: waiting in CrashLoopBackOff
	idx      int16 // position in its spec list
	restarts int32
	sbIdx    uint32 // sandbox attempt of the instance
	at       int64  // next transition of this container
	pend     int32  // exit code at at, when running
	pendR    reason
	// current instance
	id        string
	started   int64
	finished  int64
	exit      int32
	reason    reason
	startupAt int64 // startup probe succeeded (started)
	readyAt   int64 // readiness probe first succeeded
	flap      int64 // readiness flap period, 0: none
	backoff   int64 // crash-loop back-off of the next restart
	backoffAt int64 // when the back-off was last stepped (0: never)
	last      term
	image     string
	imageID   string
}

// Pod is one simulated pod: the kubelet's pod worker and the container runtime for it. It
// is not safe for concurrent use (serialise calls per pod); it starts no goroutines and
// reads no time but Config.Clock's.
type Pod struct {
	pod     *v1.Pod
	b       *behaviour
	ipam    *IPAM
	clock   clock.PassiveClock
	hostIPs []string
	podIPs  []string
	key     string // namespace/name, the IPAM key
	seed    uint64
	// features is Config.Features.
	features features.Set

	cur  int64 // the latest time seen
	next int64 // the next change, computed by advance

	startTime int64 // status.startTime
	deadline  int64 // activeDeadlineSeconds reached (never: none)

	// sandbox
	sbAttempt uint32
	sbFailed  uint32 // failed attempts at creating the first sandbox
	sbFails   uint32 // how many attempts at creating the first sandbox fail
	sbReady   bool
	sbExists  bool  // the current attempt has been created
	sbAt      int64 // creating: ready at; ready: crash at
	sbCreated int64
	hasPrev   bool
	prevAt    int64
	sbIDs     [2]string // current, previous
	crashed   bool      // the one scripted sandbox crash happened
	noIP      bool      // IP allocation failed: the sandbox is never created

	initDone    bool
	terminal    bool // the pod worker decided the pod is finished
	evicted     bool
	deleting    bool
	killAt      int64 // termination began
	grace       int64 // termination grace period
	sandboxDown bool  // stopped after termination

	ctrs []ctr
}

// New starts simulating pod, bound to cfg.Node, at cfg.Clock's time, with its pod IPs from
// ipam (share one per node, NewIPAM; nil only for a pod that uses the host's network,
// which has the node's IPs). It decides whether
// the pod is new or was already run by an earlier agent process (its server status has a
// startTime or container statuses): a new pod starts from the beginning, as the kubelet's
// pod worker starts a pod just bound to its node; an earlier run is resumed from the
// server status (see "Resuming a pod" in the package documentation). A deletionTimestamp
// starts graceful termination at once, before anything else is run: no sandbox is created
// and no container started or restarted in the pod.
//
// The error, an *podstatus.InputError (matching podstatus.ErrInvalidInput), is for a nil
// pod or a nil ipam for a pod that does not use the host's network; then the Pod is nil. Otherwise the Pod is ready and the
// Warnings say what was adjusted.
func New(pod *v1.Pod, ipam *IPAM, cfg Config) (*Pod, Warnings, error) {
	cfg.ipam = ipam
	if err := validate(pod, cfg); err != nil {
		return nil, Warnings{}, fmt.Errorf("podsim: New: %w", err)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if resumable(pod) {
		p, w := adopt(pod, cfg)
		return p, w, nil
	}
	p, w := newPod(pod, cfg)
	w.NoIP = p.startFresh(cfg)
	return p, w, nil
}

// startFresh has the pod worker start the pod from the beginning at p.cur and returns why
// it got no pod IP (Warnings.NoIP). A pod that arrives with a deletionTimestamp is
// terminating from the start: the kubelet's pod worker sends a pod it first sees with a
// deletionTimestamp straight to termination and never syncs it
// (pkg/kubelet/pod_workers.go: UpdatePod), so it gets no IP, no sandbox and no container.
func (p *Pod) startFresh(cfg Config) error {
	if p.pod.DeletionTimestamp != nil {
		p.beginDeletion(p.pod, p.cur)
		p.run(p.cur)
		return nil
	}
	noIP := p.allocateIP(cfg)
	p.startSandbox(p.cur)
	p.run(p.cur)
	return noIP
}

// validate checks what New cannot work without.
func validate(pod *v1.Pod, cfg Config) error {
	var errs field.ErrorList
	if pod == nil {
		errs = append(errs, field.Required(field.NewPath("pod"), ""))
	} else if cfg.ipam == nil && !pod.Spec.HostNetwork {
		errs = append(errs, field.Required(field.NewPath("ipam"), "the pod does not use the host's network"))
	}
	if len(errs) == 0 {
		return nil
	}
	ref := ""
	if pod != nil {
		ref = pod.Namespace + "/" + pod.Name
	}
	return &podstatus.InputError{Pod: ref, Errs: errs}
}

// resumable reports whether pod's server status comes from an earlier run of a node
// agent: it has a start time or container statuses.
func resumable(pod *v1.Pod) bool {
	s := &pod.Status
	return s.StartTime != nil || len(s.ContainerStatuses) > 0 || len(s.InitContainerStatuses) > 0
}

func newPod(pod *v1.Pod, cfg Config) (*Pod, Warnings) {
	b, annErrs := parseAnnotations(cfg.Profile, pod.Annotations)
	t := cfg.Clock.Now().UnixNano()
	p := &Pod{
		pod:       pod,
		b:         cfg.Cache.behaviour(b),
		ipam:      cfg.ipam,
		clock:     cfg.Clock,
		hostIPs:   cfg.Node.HostIPs,
		key:       pod.Namespace + "/" + pod.Name,
		features:  cfg.Features,
		seed:      mix(cfg.Seed ^ hashString(pod.Namespace+"/"+pod.Name)),
		cur:       t,
		next:      never,
		startTime: t,
		deadline:  never,
	}
	if st := pod.Status.StartTime; st != nil && !st.IsZero() && st.UnixNano() <= t {
		p.startTime = st.UnixNano()
	}
	p.setDeadline()
	p.sbFails = uint32(p.b.sandboxFailures.draw(p.draw(purposeSandboxFailures, 0, 0)))
	spec := &pod.Spec
	p.ctrs = make([]ctr, 0, len(spec.InitContainers)+len(spec.Containers))
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		k := kindInit
		if (kubeletrules.Rules{Features: cfg.Features}).IsSidecar(c) {
			k = kindSidecar
		}
		p.ctrs = append(p.ctrs, p.newCtr(cfg.Cache, c, k, i))
	}
	for i := range spec.Containers {
		p.ctrs = append(p.ctrs, p.newCtr(cfg.Cache, &spec.Containers[i], kindRegular, i))
	}
	return p, Warnings{Annotations: annErrs}
}

func (p *Pod) newCtr(cache *Cache, c *v1.Container, k kind, i int) ctr {
	image, imageID := cache.imageRef(c.Image)
	return ctr{spec: c, kind: k, idx: int16(i), at: never, startupAt: never, readyAt: never, image: image, imageID: imageID}
}

func (p *Pod) allocateIP(cfg Config) error {
	if p.pod.Spec.HostNetwork {
		p.podIPs = p.hostIPs
		return nil
	}
	ip, err := cfg.ipam.Allocate(p.key)
	if err != nil {
		p.noIP = true
		return fmt.Errorf("podsim: pod %s: no pod IP, the sandbox cannot be created: %w", p.key, err)
	}
	p.podIPs = []string{ip}
	return nil
}

// setDeadline reads spec.activeDeadlineSeconds, counted from status.startTime.
func (p *Pod) setDeadline() {
	p.deadline = never
	if ads := p.pod.Spec.ActiveDeadlineSeconds; ads != nil && *ads >= 0 && *ads < int64(maxDuration/time.Second) {
		p.deadline = p.startTime + *ads*int64(time.Second)
	}
}

// Update advances the simulation to the clock's time and gives it the newest pod object:
// a deletionTimestamp starts graceful termination (the grace period is
// deletionGracePeriodSeconds, counted from now; a shorter one given later shortens it), a
// changed activeDeadlineSeconds moves the deadline. The spec's containers must be those
// the Pod was made with (they are immutable in the API).
func (p *Pod) Update(pod *v1.Pod) {
	t := p.advance(p.clock.Now().UnixNano())
	if len(pod.Spec.InitContainers)+len(pod.Spec.Containers) == len(p.ctrs) {
		p.pod = pod
		for i := range p.ctrs {
			c := &p.ctrs[i]
			if c.kind == kindRegular {
				c.spec = &pod.Spec.Containers[c.idx]
			} else {
				c.spec = &pod.Spec.InitContainers[c.idx]
			}
		}
	}
	p.setDeadline()
	if pod.DeletionTimestamp != nil {
		p.beginDeletion(pod, t)
	}
	p.run(t)
}

// beginDeletion starts the graceful termination of the deleted pod at t: the grace period
// is deletionGracePeriodSeconds (else terminationGracePeriodSeconds, else 30 s) from t,
// unless a shorter one is already running. Nothing is started or restarted after it.
func (p *Pod) beginDeletion(pod *v1.Pod, t int64) {
	grace := defaultGrace
	if g := pod.DeletionGracePeriodSeconds; g != nil {
		grace = time.Duration(max(*g, 0)) * time.Second
	} else if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(max(*g, 0)) * time.Second
	}
	p.deleting = true
	p.terminate(t, int64(grace))
}

// Advance runs the simulation up to the clock's time and returns the runtime facts at
// that time. Time never goes backwards: a clock earlier than the latest time seen counts
// as the latest time seen.
func (p *Pod) Advance() Facts {
	t := p.advance(p.clock.Now().UnixNano())
	return p.facts(t)
}

// Next returns when the facts change next without outside input; the zero time means never
// (a steady running pod, or a finished one).
func (p *Pod) Next() time.Time {
	if p.next == never {
		return time.Time{}
	}
	return time.Unix(0, p.next).UTC()
}

// CouldHaveRunningContainers reports whether, as of the latest New, Advance or Update,
// some container of the pod might still run: false once the pod is terminal and every
// container has stopped (Facts.Stopped). It is the kubelet's
// PodCouldHaveRunningContainers, for status.Options.CouldHaveRunningContainers, which
// holds back a terminal phase until it is false.
func (p *Pod) CouldHaveRunningContainers() bool { return !p.terminal || p.anyActive() }

// Release frees the pod's IP.
func (p *Pod) Release() {
	if p.ipam != nil && !p.pod.Spec.HostNetwork {
		p.ipam.Release(p.key)
	}
}

// advance processes every change up to t (or the latest time seen, if later) and returns
// the time the pod is now at.
func (p *Pod) advance(t int64) int64 {
	if t < p.cur {
		t = p.cur
	}
	for p.next <= t {
		p.cur = max(p.cur, p.next)
		p.run(p.cur)
		if p.next <= p.cur {
			p.next = p.cur + 1 // cannot happen; never loop on one instant
		}
	}
	p.cur = t
	return t
}

// run applies everything due at t, then computes the next change.
func (p *Pod) run(t int64) {
	for guard := 0; guard < 1000; guard++ {
		if !p.step(t) {
			break
		}
	}
	p.next = p.nextChange(t)
}

// step applies the transitions due at t once; it reports whether anything changed.
func (p *Pod) step(t int64) bool {
	changed := false
	if !p.sbReady && !p.sbExists && p.sbAt <= t && !p.terminal && !p.noIP && p.sbFailed < p.sbFails {
		// Creating the sandbox failed; it leaves nothing behind, so the kubelet's next try
		// has the same attempt number (pkg/kubelet/kuberuntime: computePodActions counts
		// attempts from the sandboxes that exist).
		p.sbFailed++
		p.startSandbox(t)
		changed = true
	} else if !p.sbReady && !p.sbExists && p.sbAt <= t && !p.terminal && !p.noIP {
		// The sandbox is created.
		p.sbReady, p.sbExists, p.sbCreated = true, true, t
		p.sbAt = never
		if p.b.sandboxCrashSet && !p.crashed {
			p.sbAt = t + int64(p.b.sandboxCrashAfter.draw(p.draw(purposeSandboxCrash, 0, 0)))
		}
		changed = true
	} else if p.sbReady && p.sbAt <= t && !p.terminal {
		p.crashSandbox(t)
		changed = true
	}
	if p.deadline <= t && !p.terminal {
		p.evicted = true
		p.terminate(t, p.terminationGrace())
		changed = true
	}
	for i := range p.ctrs {
		c := &p.ctrs[i]
		if c.at > t {
			continue
		}
		changed = true
		switch c.st {
		case cCreating, cRestarting:
			p.startInstance(c, t)
		case cRunning:
			p.exited(c, t)
		default:
			c.at = never
		}
	}
	if p.pipeline(t) {
		changed = true
	}
	return changed
}

// startSandbox begins creating sandbox attempt p.sbAttempt at t.
func (p *Pod) startSandbox(t int64) {
	p.sbReady, p.sbExists = false, false
	p.sbIDs[0] = hexID(p.draw(purposeSandboxID, 0, int32(p.sbAttempt)), 64)
	p.sbAt = t + int64(p.b.SandboxDelay.draw(p.draw(purposeSandboxDelay, int(p.sbFailed), int32(p.sbAttempt))))
}

// crashSandbox kills the sandbox and its containers at t, as the runtime reports a dead
// sandbox, and has the pod worker create a new one (pkg/kubelet/kuberuntime:
// computePodActions kills the pod and starts every container again in the new sandbox).
func (p *Pod) crashSandbox(t int64) {
	p.crashed = true
	p.sbReady = false
	for i := range p.ctrs {
		c := &p.ctrs[i]
		switch c.st {
		case cRunning:
			p.finish(c, t, 137, reasonError)
		case cCreating:
			c.st, c.at = cNone, never
		case cRestarting:
			c.st, c.at, c.clb = cExited, never, false
		}
		if c.id != "" {
			c.stale = true
		}
	}
	p.initDone = false
	if p.pod.Spec.RestartPolicy == v1.RestartPolicyNever {
		// The kubelet does not create a new sandbox for a pod that must not restart
		// whose containers have run: the pod fails.
		p.sbAt = never
		p.terminal = true
		p.sandboxDown = true
		return
	}
	p.hasPrev, p.prevAt, p.sbIDs[1] = true, p.sbCreated, p.sbIDs[0]
	p.sbAttempt++
	p.startSandbox(t)
}

// terminationGrace is the pod's terminationGracePeriodSeconds.
func (p *Pod) terminationGrace() int64 {
	if g := p.pod.Spec.TerminationGracePeriodSeconds; g != nil {
		return int64(time.Duration(max(*g, 0)) * time.Second)
	}
	return int64(defaultGrace)
}

// terminate has the pod worker stop every container from t with grace period grace: a
// container exits 0 after its stop delay, or 137 when the grace period runs out first.
// Regular containers stop first; sidecars once the regular containers have stopped. A
// second call can only shorten the grace period.
func (p *Pod) terminate(t, grace int64) {
	if p.terminal && p.killAt != 0 {
		if p.killAt+grace >= p.killAt+p.grace {
			return
		}
		p.grace = grace
	} else {
		p.terminal, p.killAt, p.grace = true, t, grace
	}
	p.sbAt = never // no sandbox is created, and none crashes, any more
	for i := range p.ctrs {
		c := &p.ctrs[i]
		switch c.st {
		case cCreating:
			c.st, c.at = cNone, never
		case cRestarting:
			c.st, c.at, c.clb = cExited, never, false
		}
	}
	p.scheduleStops(t)
}

// scheduleStops sets the exit time of every running container being terminated.
func (p *Pod) scheduleStops(t int64) {
	limit := p.killAt + p.grace
	regularsDone := p.killAt
	for pass := 0; pass < 2; pass++ {
		for i := range p.ctrs {
			c := &p.ctrs[i]
			if c.st != cRunning || (c.kind == kindSidecar) != (pass == 1) {
				continue
			}
			from := p.killAt
			if pass == 1 {
				from = regularsDone
			}
			at := from + int64(p.b.StopDelay.draw(p.draw(purposeStop, i, c.restarts)))
			code, r := int32(0), reasonCompleted
			if at > limit {
				at, code, r = limit, 137, reasonError
			}
			if c.at < at {
				c.stopping = true // exits by itself (or was asked to stop) sooner
				if pass == 0 {
					regularsDone = max(regularsDone, c.at)
				}
				continue
			}
			c.stopping, c.at, c.pend, c.pendR = true, max(at, t), code, r
			if pass == 0 {
				regularsDone = max(regularsDone, c.at)
			}
		}
	}
}

// startInstance starts a new instance of c at t.
func (p *Pod) startInstance(c *ctr, t int64) {
	i := p.index(c)
	if c.clb {
		// Restarted after its back-off: the kubelet steps the back-off.
		c.backoff, c.backoffAt = min(2*c.backoff, backOffMax), t
	}
	if c.id != "" {
		c.restarts++
		c.last = term{id: c.id, started: c.started, finished: c.finished, exit: c.exit, reason: c.reason, valid: true}
	}
	c.st, c.stale, c.stopping, c.clb, c.pulled = cRunning, false, false, false, true
	c.sbIdx = p.sbAttempt
	c.id = "containerd://" + hexID(p.draw(purposeContainerID, i, c.restarts), 64)
	c.started, c.finished = t, 0
	b := p.b
	spec := c.spec

	// Startup probe: it gates liveness and readiness.
	c.startupAt = t
	exitAt, code, r := int64(never), int32(0), reasonCompleted
	if sp := spec.StartupProbe; sp != nil && !b.IgnoreProbeDelays {
		fails := b.StartupFailures.draw(p.draw(purposeStartup, i, c.restarts))
		thr := probeFailureThreshold(sp)
		if fails >= thr {
			c.startupAt = never
			exitAt, code, r = probeTime(sp, t, thr-1), 137, reasonError
		} else {
			c.startupAt = probeTime(sp, t, fails)
		}
	}
	// Readiness probe: its first counted probe is the first after startup.
	c.readyAt, c.flap = c.startupAt, 0
	if rp := spec.ReadinessProbe; rp != nil && c.startupAt != never {
		if !b.IgnoreProbeDelays {
			fails := b.ReadinessFailures.draw(p.draw(purposeReadiness, i, c.restarts))
			succ := rp.SuccessThreshold
			if succ < 1 {
				succ = 1
			}
			c.readyAt = probeTime(rp, t, firstProbeAfter(rp, t, c.startupAt)+fails+succ-1)
		}
		if b.readinessFlap.Max > 0 {
			c.flap = int64(b.readinessFlap.draw(p.draw(purposeFlap, i, c.restarts)))
		}
	}
	// Liveness probe failing from livenessFailAfter kills the container.
	if lp := spec.LivenessProbe; lp != nil && b.livenessSet && c.startupAt != never && c.kind != kindInit {
		failFrom := t + int64(b.livenessFailAfter.draw(p.draw(purposeLiveness, i, c.restarts)))
		at := failFrom
		if !b.IgnoreProbeDelays {
			at = probeTime(lp, t, firstProbeAfter(lp, t, max(failFrom, c.startupAt))+probeFailureThreshold(lp)-1)
		}
		if at < exitAt {
			exitAt, code, r = at, 137, reasonError
		}
	}
	// Run time.
	switch c.kind {
	case kindInit:
		if at := t + int64(b.InitRunTime.draw(p.draw(purposeRun, i, c.restarts))); at < exitAt {
			exitAt, code, r = at, 0, reasonCompleted
		}
	case kindRegular:
		if b.runTimeSet || !(kubeletrules.Rules{Features: p.features}).ContainerShouldRestart(spec, &p.pod.Spec, 0) {
			if at := t + int64(b.RunTime.draw(p.draw(purposeRun, i, c.restarts))); at < exitAt {
				exitAt, code, r = at, b.ExitCode, exitReason(b.ExitCode)
			}
		}
	}
	c.at, c.pend, c.pendR = exitAt, code, r
}

// probeFailureThreshold is the probe's failureThreshold (default 3).
func probeFailureThreshold(pr *v1.Probe) int32 {
	if pr.FailureThreshold < 1 {
		return 3
	}
	return pr.FailureThreshold
}

// probeTime is when the probe runs for the k-th time (from 0) in a container started at
// start: initialDelaySeconds after the start, then every periodSeconds (default 10).
func probeTime(pr *v1.Probe, start int64, k int32) int64 {
	period := int64(pr.PeriodSeconds)
	if period < 1 {
		period = 10
	}
	return start + (int64(max(pr.InitialDelaySeconds, 0))+int64(k)*period)*int64(time.Second)
}

// firstProbeAfter is the index of the first run of the probe at or after from.
func firstProbeAfter(pr *v1.Probe, start, from int64) int32 {
	first := probeTime(pr, start, 0)
	if from <= first {
		return 0
	}
	period := probeTime(pr, start, 1) - first
	k := (from - first + period - 1) / period
	if k > math.MaxInt32/2 {
		return math.MaxInt32 / 2
	}
	return int32(k)
}

// finish records that the running instance of c exited at t.
func (p *Pod) finish(c *ctr, t int64, code int32, r reason) {
	c.st, c.at, c.finished, c.exit, c.reason, c.stopping = cExited, never, t, code, r, false
}

// exited handles c's running instance exiting at t: the kubelet restarts it per its
// restart policy, after the crash-loop back-off.
func (p *Pod) exited(c *ctr, t int64) {
	p.finish(c, t, c.pend, c.pendR)
	if p.terminal {
		return
	}
	restart := (kubeletrules.Rules{Features: p.features}).ContainerShouldRestart(c.spec, &p.pod.Spec, c.exit)
	if c.kind == kindInit && c.exit == 0 {
		restart = false // a completed init container is not run again
	}
	if !restart {
		return
	}
	// pkg/kubelet/kuberuntime: doBackOff. The first restart (or one after the container
	// ran for twice the maximum back-off) is immediate; later ones wait the back-off,
	// which doubles each time up to the maximum.
	// The back-off entry steps when the container is restarted (flowcontrol.Backoff.Next).
	wait := int64(0)
	if c.backoffAt == 0 || t-c.backoffAt > 2*backOffMax {
		c.backoff, c.backoffAt = backOffInitial, t
	} else {
		wait = c.backoff
	}
	c.st, c.clb = cRestarting, wait > 0
	c.at = t + wait + int64(p.b.ContainerStart.draw(p.draw(purposeStart, p.index(c), c.restarts+1)))
}

// pipeline is the pod worker's sync: it starts the containers whose turn has come (init
// containers in order, a sidecar's successor once the sidecar started, regular containers
// once the pod initialized) and decides when the pod has finished. It reports whether
// it changed anything.
func (p *Pod) pipeline(t int64) bool {
	changed := false
	if p.terminal {
		if p.killAt != 0 && !p.sandboxDown && !p.anyActive() && p.sbExists {
			p.sbReady, p.sandboxDown = false, true
			changed = true
		}
		return changed
	}
	if !p.sbReady {
		return false
	}
	if !p.initDone {
		for i := range p.ctrs {
			c := &p.ctrs[i]
			if c.kind == kindRegular {
				continue
			}
			if c.st == cNone || c.stale {
				p.create(c, t)
				return true
			}
			if c.kind == kindSidecar {
				if c.st == cRunning && c.startupAt <= t {
					continue
				}
				return changed
			}
			if c.st == cExited && c.exit == 0 {
				continue
			}
			if c.st == cExited { // failed, not restarted
				p.terminate(t, p.terminationGrace())
				return true
			}
			return changed
		}
		p.initDone = true
		changed = true
	}
	allDone := true
	for i := range p.ctrs {
		c := &p.ctrs[i]
		if c.kind != kindRegular {
			continue
		}
		if c.stale && c.exit == 0 && c.st == cExited && p.pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure {
			c.stale = false // a succeeded container is not run again in a new sandbox
		}
		if c.st == cNone || c.stale {
			p.create(c, t)
			changed = true
		}
		if c.st != cExited {
			allDone = false
		}
	}
	if allDone {
		// No regular container runs or will: the kubelet kills the sidecars and the pod
		// is finished (computePodActions: KillPod when nothing is left to keep or start).
		p.terminate(t, p.terminationGrace())
		changed = true
	}
	return changed
}

// anyActive reports whether a container is running or being created.
func (p *Pod) anyActive() bool {
	for i := range p.ctrs {
		switch p.ctrs[i].st {
		case cRunning, cCreating, cRestarting:
			return true
		}
	}
	return false
}

// create starts creating c at t: pulling its image the first time, then starting it.
func (p *Pod) create(c *ctr, t int64) {
	i := p.index(c)
	at := t
	if !c.pulled {
		at += int64(p.b.ImagePull.draw(p.draw(purposePull, i, 0)))
	}
	n := c.restarts
	if c.id != "" {
		n++
	}
	at += int64(p.b.ContainerStart.draw(p.draw(purposeStart, i, n)))
	c.st, c.at, c.clb, c.stale = cCreating, at, false, false
}

func (p *Pod) index(c *ctr) int {
	for i := range p.ctrs {
		if &p.ctrs[i] == c {
			return i
		}
	}
	return 0
}

// nextChange is the earliest time after t at which the facts change, or at t when a
// transition is still due.
func (p *Pod) nextChange(t int64) int64 {
	n := int64(never)
	if !p.sbReady && !p.sbExists && !p.terminal && !p.noIP {
		n = min(n, p.sbAt)
	} else if p.sbReady {
		n = min(n, p.sbAt)
	}
	if !p.terminal {
		n = min(n, p.deadline)
	}
	for i := range p.ctrs {
		c := &p.ctrs[i]
		n = min(n, c.at)
		if c.st != cRunning {
			continue
		}
		if c.startupAt > t {
			n = min(n, c.startupAt)
		}
		if c.readyAt > t {
			n = min(n, c.readyAt)
		} else if c.flap > 0 && c.readyAt != never {
			// The next switch of a flapping readiness probe.
			k := (t-c.readyAt)/c.flap + 1
			n = min(n, c.readyAt+k*c.flap)
		}
	}
	return n
}
