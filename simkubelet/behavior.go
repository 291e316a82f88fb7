package simkubelet

import (
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus/podsim"
)

// Behavior is how the simulated runtime runs the pods it matches, chosen from Go: the
// pods a controller under test creates carry no sim.podstatus.io/ annotations, so a test
// selects them by label, name or owner and says how they behave. Every field but Match
// overrides one field of the node's profile for the matched pods, exactly as the podsim
// annotation of the same name does (see the podsim package documentation for the model);
// the zero value of a field leaves the profile's (or the pod's own annotation's) value.
//
// The behaviour is resolved when the simulated kubelet starts running a pod: a change
// (Kubelet.SetBehaviors) applies to the pods started after it, as a node's runtime
// configuration applies to the containers it creates next.
//
// What a Behavior expresses, in a kubelet's words:
//
//	never ready (a container with a readiness probe)  {Profile: "default", ReadinessProbeFailures: 1000}
//	fails with exit code 42 after 2 s                  {RunTime: 2 * time.Second, ExitCode: 42}
//	crash-loops (restartPolicy Always)                 {RunTime: time.Second, ExitCode: 1}
//	sandbox creation fails 3 times                     {SandboxCreateFailures: 3}
//	readiness flaps every 5 s                          {ReadinessFlap: 5 * time.Second}
//	slow image pull                                    {ImagePullDelay: time.Minute}
//	stays Pending (image pull never ends)              {ImagePullDelay: 10000 * time.Hour}
//
// The fast profile makes every probe succeed the moment its container starts, whatever the
// failure counts say: a Behavior that counts probe failures names the default profile (its
// probes run on the spec's schedule). A container without a readiness probe is Ready once
// it runs, as with the kubelet: "never ready" needs a probe, or a Pending pod, or a
// readiness gate the test never sets.
type Behavior struct {
	// Match selects the pods; required. The first Behavior of the list that matches a pod
	// wins. MatchLabels, MatchName and MatchOwner build the common ones.
	Match func(*v1.Pod) bool
	// Profile is the base profile: "default" or "fast"; "" is the node's (Options.Profile).
	Profile string
	// SandboxDelay, ImagePullDelay, StartDelay and InitRunTime are how long creating the
	// sandbox, pulling each image (first creation only), creating and starting a container,
	// and running each regular init container take.
	SandboxDelay, ImagePullDelay, StartDelay, InitRunTime time.Duration
	// RunTime makes every regular container exit with ExitCode after running this long,
	// whatever its restart policy (the kubelet then restarts it or not, with its back-off).
	RunTime time.Duration
	// ExitCode is the exit code when the run time is over (0 to 255).
	ExitCode int32
	// StopDelay is how long a container takes to exit after SIGTERM.
	StopDelay time.Duration
	// StartupProbeFailures and ReadinessProbeFailures are how many runs of the startup and
	// readiness probes fail before the first success (containers with such a probe only;
	// at most 1000).
	StartupProbeFailures, ReadinessProbeFailures int32
	// ReadinessFlap makes readiness alternate, once ready: succeeding this long, failing
	// this long, and so on (containers with a readiness probe).
	ReadinessFlap time.Duration
	// LivenessFailAfter makes the liveness probe fail from this long after a container
	// starts: it is killed (137) after failureThreshold runs and restarted per its policy.
	LivenessFailAfter time.Duration
	// SandboxCreateFailures is how many attempts at creating the sandbox fail first (at
	// most 1000).
	SandboxCreateFailures int32
	// SandboxCrashAfter makes the first sandbox die this long after it became ready.
	SandboxCrashAfter time.Duration
}

// MatchLabels matches the pods whose labels include every one of set's.
func MatchLabels(set map[string]string) func(*v1.Pod) bool {
	sel := labels.SelectorFromSet(set)
	return func(p *v1.Pod) bool { return sel.Matches(labels.Set(p.Labels)) }
}

// MatchName matches the pod of that namespace and name.
func MatchName(namespace, name string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool { return p.Namespace == namespace && p.Name == name }
}

// MatchOwner matches the pods owned by an object of that kind and name (a Job, a
// ReplicaSet, a custom resource), as their ownerReferences say.
func MatchOwner(kind, name string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool {
		for _, o := range p.OwnerReferences {
			if o.Kind == kind && o.Name == name {
				return true
			}
		}
		return false
	}
}

// maxBehaviorDuration bounds a Behavior's durations as podsim bounds its annotations'.
const maxBehaviorDuration = 10000 * time.Hour

// validateBehaviors lists what is wrong with bs, under path.
func validateBehaviors(bs []Behavior, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, b := range bs {
		p := path.Index(i)
		if b.Match == nil {
			errs = append(errs, field.Required(p.Child("Match"), "a function that selects the pods (MatchLabels, MatchName, MatchOwner)"))
		}
		if b.Profile != "" {
			if _, err := podsim.Named(b.Profile); err != nil {
				errs = append(errs, field.NotSupported(p.Child("Profile"), b.Profile, []string{"default", "fast"}))
			}
		}
		for _, d := range b.durations() {
			if d.v < 0 || d.v > maxBehaviorDuration {
				errs = append(errs, field.Invalid(p.Child(d.name), d.v.String(), fmt.Sprintf("must be from 0 to %v", maxBehaviorDuration)))
			}
		}
		if b.ExitCode < 0 || b.ExitCode > 255 {
			errs = append(errs, field.Invalid(p.Child("ExitCode"), b.ExitCode, "must be from 0 to 255"))
		}
		for _, c := range b.counts() {
			if c.v < 0 || c.v > 1000 {
				errs = append(errs, field.Invalid(p.Child(c.name), c.v, "must be from 0 to 1000"))
			}
		}
	}
	return errs
}

type namedDuration struct {
	name, key string
	v         time.Duration
}

func (b *Behavior) durations() []namedDuration {
	return []namedDuration{
		{"SandboxDelay", podsim.AnnotationSandboxDelay, b.SandboxDelay},
		{"ImagePullDelay", podsim.AnnotationImagePullDelay, b.ImagePullDelay},
		{"StartDelay", podsim.AnnotationStartDelay, b.StartDelay},
		{"InitRunTime", podsim.AnnotationInitRunTime, b.InitRunTime},
		{"RunTime", podsim.AnnotationRunTime, b.RunTime},
		{"StopDelay", podsim.AnnotationStopDelay, b.StopDelay},
		{"ReadinessFlap", podsim.AnnotationReadinessFlap, b.ReadinessFlap},
		{"LivenessFailAfter", podsim.AnnotationLivenessFailAfter, b.LivenessFailAfter},
		{"SandboxCrashAfter", podsim.AnnotationSandboxCrashAfter, b.SandboxCrashAfter},
	}
}

type namedCount struct {
	name, key string
	v         int32
}

func (b *Behavior) counts() []namedCount {
	return []namedCount{
		{"StartupProbeFailures", podsim.AnnotationStartupFailures, b.StartupProbeFailures},
		{"ReadinessProbeFailures", podsim.AnnotationReadinessFailures, b.ReadinessProbeFailures},
		{"SandboxCreateFailures", podsim.AnnotationSandboxFailures, b.SandboxCreateFailures},
	}
}

// apply returns pod as the simulated runtime should see it under b: a shallow copy whose
// annotations carry b's overrides in podsim's annotation language (one model of a pod's
// behaviour, whichever way it is chosen), over the pod's own. Only podsim reads the copy.
func (b *Behavior) apply(pod *v1.Pod) *v1.Pod {
	ann := make(map[string]string, len(pod.Annotations)+4)
	for k, v := range pod.Annotations {
		ann[k] = v
	}
	if b.Profile != "" {
		ann[podsim.AnnotationProfile] = b.Profile
	}
	for _, d := range b.durations() {
		if d.v > 0 {
			ann[d.key] = d.v.String()
		}
	}
	if b.ExitCode != 0 {
		ann[podsim.AnnotationExitCode] = strconv.Itoa(int(b.ExitCode))
	}
	for _, c := range b.counts() {
		if c.v > 0 {
			ann[c.key] = strconv.Itoa(int(c.v))
		}
	}
	cp := *pod
	cp.Annotations = ann
	return &cp
}

// behaviors is the list of Behaviors in force, swapped whole by SetBehaviors.
type behaviors struct {
	list []Behavior
}

// forPod returns the first Behavior of bs that matches pod, or nil.
func (bs *behaviors) forPod(pod *v1.Pod) *Behavior {
	if bs == nil {
		return nil
	}
	for i := range bs.list {
		if bs.list[i].Match(pod) {
			return &bs.list[i]
		}
	}
	return nil
}
