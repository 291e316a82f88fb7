package podsim

import (
	"fmt"
	"time"
)

// Range is a span of durations; a value is drawn uniformly from [Min, Max] (Max below Min
// means Min; negative bounds count as 0).
type Range struct {
	Min, Max time.Duration
}

// Fixed is the Range of exactly d.
func Fixed(d time.Duration) Range { return Range{Min: d, Max: d} }

// draw maps the 64 random bits u onto the range; negative bounds count as 0 and bounds
// above 10000 h as 10000 h.
func (r Range) draw(u uint64) time.Duration {
	lo, hi := min(max(r.Min, 0), maxDuration), min(max(r.Max, 0), maxDuration)
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(u%(uint64(hi-lo)+1))
}

// Count is a span of whole numbers; a value is drawn uniformly from [Min, Max].
type Count struct {
	Min, Max int32
}

// draw maps the 64 random bits u onto the span; negative bounds count as 0.
func (c Count) draw(u uint64) int32 {
	lo, hi := max(c.Min, 0), max(c.Max, 0)
	if hi <= lo {
		return lo
	}
	return lo + int32(u%uint64(hi-lo+1))
}

// Profile is a behaviour profile: how long the simulated runtime takes for each step and how
// the containers behave. The per-pod annotations (see the package documentation) override
// single fields for one pod. Every draw is made from the pod's own seed (hash of the
// Config.Seed, namespace and name), per container and per restart.
type Profile struct {
	// Name is the profile's name, "default" or "fast" for the built-in ones.
	Name string
	// SandboxDelay is how long creating the pod sandbox takes (RunPodSandbox and the CNI
	// plugin), from the pod's arrival or from a sandbox crash.
	SandboxDelay Range
	// ImagePull is how long pulling a container's image takes; drawn once per container, on
	// its first creation (later restarts find the image present).
	ImagePull Range
	// ContainerStart is how long creating and starting a container takes, every time.
	ContainerStart Range
	// InitRunTime is how long a regular init container runs before it exits 0.
	InitRunTime Range
	// RunTime is how long a regular container runs before it exits with ExitCode, for a
	// container that would not be restarted after exiting 0 (restartPolicy OnFailure or
	// Never, of the pod or the container): a job. Containers that are restarted whatever
	// their exit code run until they are stopped, unless the run-time annotation says
	// otherwise.
	RunTime Range
	// ExitCode is the exit code of a regular container whose run time is over.
	ExitCode int32
	// StopDelay is how long a container takes to exit after it is asked to stop (SIGTERM).
	// It then exits 0; when the grace period runs out first, it is killed and exits 137.
	StopDelay Range
	// StartupFailures and ReadinessFailures are how many startup and readiness probes fail
	// before the first success (of a container that has such a probe). Startup failures
	// reaching the probe's failureThreshold kill the container, as the kubelet does.
	StartupFailures, ReadinessFailures Count
	// IgnoreProbeDelays makes every probe succeed the moment its container starts, ignoring
	// initialDelaySeconds, periodSeconds and successThreshold (and the failure counts
	// above). Liveness and flapping annotations still apply.
	IgnoreProbeDelays bool
}

// Default returns the default profile, with delays like a small real node's: a sandbox in
// 0.5–2 s, image pulls of 0–3 s, containers started in 0.1–0.5 s, init containers running
// 1–5 s, jobs running 5–30 s and exiting 0, containers stopping in 0–2 s, up to one failed
// startup probe and up to two failed readiness probes before success.
func Default() Profile {
	return Profile{
		Name:              "default",
		SandboxDelay:      Range{500 * time.Millisecond, 2 * time.Second},
		ImagePull:         Range{0, 3 * time.Second},
		ContainerStart:    Range{100 * time.Millisecond, 500 * time.Millisecond},
		InitRunTime:       Range{time.Second, 5 * time.Second},
		RunTime:           Range{5 * time.Second, 30 * time.Second},
		StopDelay:         Range{0, 2 * time.Second},
		StartupFailures:   Count{0, 1},
		ReadinessFailures: Count{0, 2},
	}
}

// Fast returns the fast profile: no delay anywhere and probes that succeed at once
// (IgnoreProbeDelays), so that a pod is Running and Ready in the first status written for
// it, its init containers already Completed. Jobs run 0 s and exit 0; containers stop at
// once.
func Fast() Profile {
	return Profile{Name: "fast", IgnoreProbeDelays: true}
}

// Named returns the built-in profile of that name: "default" (also "") or "fast".
func Named(name string) (Profile, error) {
	switch name {
	case "", "default":
		return Default(), nil
	case "fast":
		return Fast(), nil
	}
	return Profile{}, fmt.Errorf("podsim: unknown profile %q (want \"default\" or \"fast\")", name)
}
