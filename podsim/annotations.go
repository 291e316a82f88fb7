package podsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AnnotationPrefix starts every annotation podsim reads.
const AnnotationPrefix = "sim.podstatus.io/"

// The per-pod annotations. A duration is a Go duration ("1.5s", "2m") or a range
// "MIN..MAX" drawn from uniformly; a count is a whole number or a range "MIN..MAX". See the
// package documentation for the table.
const (
	// AnnotationProfile selects the pod's base profile by name ("default", "fast"),
	// instead of the node's; the other annotations apply on top of it.
	AnnotationProfile = AnnotationPrefix + "profile"
	// AnnotationSandboxDelay overrides Profile.SandboxDelay.
	AnnotationSandboxDelay = AnnotationPrefix + "sandbox-delay"
	// AnnotationImagePullDelay overrides Profile.ImagePull.
	AnnotationImagePullDelay = AnnotationPrefix + "image-pull-delay"
	// AnnotationStartDelay overrides Profile.ContainerStart.
	AnnotationStartDelay = AnnotationPrefix + "start-delay"
	// AnnotationInitRunTime overrides Profile.InitRunTime.
	AnnotationInitRunTime = AnnotationPrefix + "init-run-time"
	// AnnotationRunTime sets how long every regular container runs before it exits with
	// the exit code, whatever its restart policy (a container restarted after exiting 0
	// otherwise runs until stopped).
	AnnotationRunTime = AnnotationPrefix + "run-time"
	// AnnotationExitCode overrides Profile.ExitCode (0 to 255).
	AnnotationExitCode = AnnotationPrefix + "exit-code"
	// AnnotationStopDelay overrides Profile.StopDelay.
	AnnotationStopDelay = AnnotationPrefix + "stop-delay"
	// AnnotationStartupFailures overrides Profile.StartupFailures.
	AnnotationStartupFailures = AnnotationPrefix + "startup-probe-failures"
	// AnnotationReadinessFailures overrides Profile.ReadinessFailures.
	AnnotationReadinessFailures = AnnotationPrefix + "readiness-probe-failures"
	// AnnotationReadinessFlap makes the readiness probe of every container that has one
	// alternate once it first succeeded: succeeding for this long, then failing for this
	// long, and so on (the switches are exact, not rounded to probe periods).
	AnnotationReadinessFlap = AnnotationPrefix + "readiness-flap"
	// AnnotationLivenessFailAfter makes the liveness probe of every container that has one
	// fail from this long after the container started; failureThreshold failures in a row
	// kill the container (exit 137), which is then restarted per its restart policy.
	AnnotationLivenessFailAfter = AnnotationPrefix + "liveness-fail-after"
	// AnnotationSandboxFailures makes the first attempts at creating the pod's sandbox
	// fail (RunPodSandbox returns an error, a CNI plugin's say): each failed attempt takes
	// the sandbox delay and leaves no sandbox behind, and the pod worker tries again at
	// once. A count.
	AnnotationSandboxFailures = AnnotationPrefix + "sandbox-create-failures"
	// AnnotationSandboxCrashAfter makes the pod's first sandbox die this long after it
	// became ready: its containers are killed and a new sandbox is created.
	AnnotationSandboxCrashAfter = AnnotationPrefix + "sandbox-crash-after"
)

// maxDuration bounds annotation durations so that time arithmetic cannot overflow.
const maxDuration = 10000 * time.Hour

// behaviour is a pod's resolved profile with the annotations that have no profile field.
type behaviour struct {
	Profile
	runTimeSet        bool // AnnotationRunTime given: every regular container exits
	readinessFlap     Range
	livenessFailAfter Range
	livenessSet       bool
	sandboxCrashAfter Range
	sandboxCrashSet   bool
	sandboxFailures   Count
}

// AnnotationError is an invalid value of one of the sim.podstatus.io/ annotations, or a
// key under that prefix podsim does not know (a typo: Want says so). The pod's behaviour
// keeps the profile's value for that key. A node agent tells it apart from
// New's other warnings (which are not the pod author's doing) by Warnings.Annotations, and
// reports it on the pod, for example as a Warning Event.
type AnnotationError struct {
	// Key is the annotation's key and Value its value.
	Key, Value string
	// Want says what a valid value looks like.
	Want string
	// Err is the parse error, if there is one.
	Err error
}

// Error returns "podsim: annotation KEY="VALUE": WANT[: ERR]".
func (e *AnnotationError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("podsim: annotation %s=%q: %s: %v", e.Key, e.Value, e.Want, e.Err)
	}
	return fmt.Sprintf("podsim: annotation %s=%q: %s", e.Key, e.Value, e.Want)
}

// Unwrap returns the parse error.
func (e *AnnotationError) Unwrap() error { return e.Err }

// parseAnnotations resolves the behaviour of a pod with annotations ann on a node whose
// profile is node. Each invalid value is reported and the profile's value kept.
func parseAnnotations(node Profile, ann map[string]string) (behaviour, []*AnnotationError) {
	var errs []*AnnotationError
	b := behaviour{Profile: node}
	if len(ann) == 0 {
		return b, nil
	}
	bad := func(key, val, want string, err error) {
		errs = append(errs, &AnnotationError{Key: key, Value: val, Want: want, Err: err})
	}
	if v, ok := ann[AnnotationProfile]; ok {
		p, err := Named(v)
		if err != nil {
			bad(AnnotationProfile, v, `want "default" or "fast"`, nil)
		} else {
			b.Profile = p
		}
	}
	durations := []struct {
		key string
		dst *Range
		set *bool
	}{
		{AnnotationSandboxDelay, &b.SandboxDelay, nil},
		{AnnotationImagePullDelay, &b.ImagePull, nil},
		{AnnotationStartDelay, &b.ContainerStart, nil},
		{AnnotationInitRunTime, &b.InitRunTime, nil},
		{AnnotationRunTime, &b.RunTime, &b.runTimeSet},
		{AnnotationStopDelay, &b.StopDelay, nil},
		{AnnotationReadinessFlap, &b.readinessFlap, nil},
		{AnnotationLivenessFailAfter, &b.livenessFailAfter, &b.livenessSet},
		{AnnotationSandboxCrashAfter, &b.sandboxCrashAfter, &b.sandboxCrashSet},
	}
	for _, d := range durations {
		v, ok := ann[d.key]
		if !ok {
			continue
		}
		r, err := parseRange(v)
		if err != nil {
			bad(d.key, v, `want a duration such as "2s" or a range such as "1s..3s"`, err)
			continue
		}
		*d.dst = r
		if d.set != nil {
			*d.set = true
		}
	}
	if b.readinessFlap.Min == 0 && b.readinessFlap.Max > 0 {
		b.readinessFlap.Min = time.Millisecond // a flap period of 0 would never end
	}
	counts := []struct {
		key string
		dst *Count
	}{
		{AnnotationStartupFailures, &b.StartupFailures},
		{AnnotationReadinessFailures, &b.ReadinessFailures},
		{AnnotationSandboxFailures, &b.sandboxFailures},
	}
	for _, c := range counts {
		v, ok := ann[c.key]
		if !ok {
			continue
		}
		n, err := parseCount(v, 1000)
		if err != nil {
			bad(c.key, v, `want a count such as "2" or a range such as "0..3"`, err)
			continue
		}
		*c.dst = n
	}
	if v, ok := ann[AnnotationExitCode]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 0 || n > 255 {
			bad(AnnotationExitCode, v, "want an exit code from 0 to 255", nil)
		} else {
			b.ExitCode = int32(n)
		}
	}
	// A key under the prefix that podsim does not read is most likely a typo of one it
	// does: reported like an invalid value, in key order so that the warnings are stable.
	var unknown []string
	for k := range ann {
		if strings.HasPrefix(k, AnnotationPrefix) && !isAnnotation(k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		bad(k, ann[k], "unknown annotation (see the podsim package documentation for the keys)", nil)
	}
	return b, errs
}

// isAnnotation reports whether key is one of the annotations podsim reads.
func isAnnotation(key string) bool {
	switch key {
	case AnnotationProfile, AnnotationSandboxDelay, AnnotationImagePullDelay, AnnotationStartDelay,
		AnnotationInitRunTime, AnnotationRunTime, AnnotationExitCode, AnnotationStopDelay,
		AnnotationStartupFailures, AnnotationReadinessFailures, AnnotationReadinessFlap,
		AnnotationLivenessFailAfter, AnnotationSandboxFailures, AnnotationSandboxCrashAfter:
		return true
	}
	return false
}

// parseRange parses "D" or "MIN..MAX".
func parseRange(s string) (Range, error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "..")
	min, err := parseDuration(lo)
	if err != nil {
		return Range{}, err
	}
	if !isRange {
		return Fixed(min), nil
	}
	max, err := parseDuration(hi)
	if err != nil {
		return Range{}, err
	}
	if max < min {
		return Range{}, fmt.Errorf("range maximum %s is below its minimum %s", max, min)
	}
	return Range{Min: min, Max: max}, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, err
	}
	if d < 0 || d > maxDuration {
		return 0, fmt.Errorf("duration %s is outside 0 to %s", d, maxDuration)
	}
	return d, nil
}

// parseCount parses "N" or "MIN..MAX" with 0 <= MIN <= MAX <= limit.
func parseCount(s string, limit int32) (Count, error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "..")
	one := func(s string) (int32, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return 0, err
		}
		if n < 0 || n > int64(limit) {
			return 0, fmt.Errorf("%d is outside 0 to %d", n, limit)
		}
		return int32(n), nil
	}
	min, err := one(lo)
	if err != nil {
		return Count{}, err
	}
	if !isRange {
		return Count{min, min}, nil
	}
	max, err := one(hi)
	if err != nil {
		return Count{}, err
	}
	if max < min {
		return Count{}, fmt.Errorf("range maximum %d is below its minimum %d", max, min)
	}
	return Count{min, max}, nil
}
