package podsim

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

var annotationKeys = []string{
	AnnotationProfile, AnnotationSandboxDelay, AnnotationImagePullDelay, AnnotationStartDelay,
	AnnotationInitRunTime, AnnotationRunTime, AnnotationExitCode, AnnotationStopDelay,
	AnnotationStartupFailures, AnnotationReadinessFailures, AnnotationReadinessFlap,
	AnnotationLivenessFailAfter, AnnotationSandboxCrashAfter, AnnotationSandboxFailures,
}

func FuzzParseAnnotations(f *testing.F) {
	for i, v := range []string{"2s", "1s..3s", "-1s", "3s..1s", "0", "255", "256", "fast", "0..3", "x", "1e9h", " 5s ", "..", "1..", "9999999999"} {
		f.Add(uint8(i), v)
	}
	f.Fuzz(func(t *testing.T, k uint8, v string) {
		key := annotationKeys[int(k)%len(annotationKeys)]
		base := Default()
		b, errs := parseAnnotations(base, map[string]string{key: v})
		if len(errs) > 1 {
			t.Fatalf("one annotation, %d errors: %v", len(errs), errs)
		}
		for _, r := range []Range{b.SandboxDelay, b.ImagePull, b.ContainerStart, b.InitRunTime, b.RunTime, b.StopDelay, b.readinessFlap, b.livenessFailAfter, b.sandboxCrashAfter} {
			if r.Min < 0 || r.Max < r.Min || r.Max > maxDuration {
				t.Fatalf("%s=%q: range %+v", key, v, r)
			}
			for _, u := range []uint64{0, 1, 1 << 63, ^uint64(0)} {
				if d := r.draw(u); d < r.Min || d > r.Max {
					t.Fatalf("draw %v outside %+v", d, r)
				}
			}
		}
		for _, c := range []Count{b.StartupFailures, b.ReadinessFailures} {
			if c.Min < 0 || c.Max < c.Min {
				t.Fatalf("%s=%q: count %+v", key, v, c)
			}
		}
		if b.ExitCode < 0 || b.ExitCode > 255 {
			t.Fatalf("exit code %d", b.ExitCode)
		}
		if b.readinessFlap.Max > 0 && b.readinessFlap.Min <= 0 {
			t.Fatalf("flap period can be 0: %+v", b.readinessFlap)
		}
		if len(errs) == 1 {
			// An invalid value leaves the profile as it was.
			nb, _ := parseAnnotations(base, nil)
			if b != nb {
				t.Fatalf("%s=%q was rejected (%v) but changed the behaviour", key, v, errs[0])
			}
		}
	})
}

func TestAnnotations(t *testing.T) {
	b, errs := parseAnnotations(Default(), map[string]string{
		AnnotationRunTime: "1s..3s", AnnotationExitCode: "7", AnnotationStartupFailures: "2",
		AnnotationSandboxDelay: "bad", AnnotationProfile: "slow", AnnotationReadinessFailures: "3..1",
	})
	if len(errs) != 3 {
		t.Errorf("errors %v, want three", errs)
	}
	for _, err := range errs {
		var ae *AnnotationError
		if !errors.As(err, &ae) || ae.Key == "" || !strings.HasPrefix(err.Error(), "podsim: annotation "+ae.Key+"=") {
			t.Errorf("error %v is not an *AnnotationError naming its key", err)
		}
	}
	want := Default()
	if b.SandboxDelay != want.SandboxDelay || b.Name != "default" || b.ReadinessFailures != want.ReadinessFailures {
		t.Errorf("invalid values did not fall back: %+v", b)
	}
	if b.RunTime != (Range{time.Second, 3 * time.Second}) || !b.runTimeSet || b.ExitCode != 7 || b.StartupFailures != (Count{2, 2}) {
		t.Errorf("valid values not applied: %+v", b)
	}
	// New reports them and the pod still runs.
	pod := mkPod("bad", ctn("app"))
	pod.Annotations = map[string]string{AnnotationExitCode: "300"}
	p, warnings := newAt(pod, testConfig(t, Fast()), sec(0))
	if len(warnings) != 1 || p == nil || len(factsAt(p, sec(0)).Containers) != 1 {
		t.Errorf("warnings %v", warnings)
	}
	if _, err := Named("nope"); err == nil {
		t.Error("Named accepted an unknown profile")
	}
}

// A key under the prefix that podsim does not read (a typo) is reported as an
// AnnotationError naming it, like an invalid value; every known key is not, and keys
// outside the prefix are not podsim's business.
func TestUnknownAnnotation(t *testing.T) {
	ann := map[string]string{AnnotationPrefix + "run-tme": "5s", AnnotationPrefix + "exitcode": "3", "example.com/run-tme": "x"}
	for _, k := range annotationKeys {
		ann[k] = "" // present, maybe invalid: never "unknown"
	}
	_, errs := parseAnnotations(Default(), ann)
	var unknown []string
	for _, e := range errs {
		if strings.HasPrefix(e.Want, "unknown annotation") {
			unknown = append(unknown, e.Key)
		}
	}
	if want := []string{AnnotationPrefix + "exitcode", AnnotationPrefix + "run-tme"}; !slices.Equal(unknown, want) {
		t.Fatalf("unknown keys reported %v, want %v (all errors: %v)", unknown, want, errs)
	}
	pod := mkPod("typo", ctn("app"))
	pod.Annotations = map[string]string{AnnotationPrefix + "run-tme": "5s"}
	p, warnings := newAt(pod, testConfig(t, Fast()), sec(0))
	if p == nil || len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "run-tme") {
		t.Fatalf("New: warnings %v, want one naming the typo", warnings)
	}
}

func TestDrawsStayInBounds(t *testing.T) {
	for _, r := range []Range{{-5, -1}, {-time.Second, time.Second}, {3, 1}, {0, maxDuration * 2}} {
		for _, u := range []uint64{0, 7, 1 << 62, ^uint64(0)} {
			if d := r.draw(u); d < 0 || d > maxDuration {
				t.Errorf("%+v drew %v", r, d)
			}
		}
	}
	for _, c := range []Count{{-3, -1}, {-1, 2}, {5, 1}} {
		for _, u := range []uint64{0, 7, ^uint64(0)} {
			if n := c.draw(u); n < 0 || n > max(c.Max, c.Min, 0) {
				t.Errorf("%+v drew %d", c, n)
			}
		}
	}
}
