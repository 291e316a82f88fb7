package patch

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	kjson "k8s.io/apimachinery/pkg/util/json"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/internal/patch/patchtest"
)

// reread is what the reference does to a value: marshal it, decode it into maps and slices
// (apimachinery's decoder, which keeps integers as int64) and marshal that again, which sorts
// every object's keys.
func reread(t *rapid.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var x any
	if err := kjson.Unmarshal(b, &x); err != nil {
		t.Fatalf("decode: %v", err)
	}
	out, err := json.Marshal(x)
	if err != nil {
		t.Fatalf("re-marshal: %v", err)
	}
	return out
}

func checkCanonical[T any](t *rapid.T, what string, l []T, enc func([]byte, *T) []byte) {
	for i := range l {
		got := enc(nil, &l[i])
		if want := reread(t, l[i]); !bytes.Equal(got, want) {
			t.Fatalf("%s[%d]:\nours: %s\nref:  %s", what, i, got, want)
		}
	}
}

// TestCanonicalEncodings checks every whole-value encoder against the reference's round
// trip, on values with every field filled at random.
func TestCanonicalEncodings(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := patchtest.Status(t)
		checkCanonical(t, "conditions", s.Conditions, appendCondition)
		checkCanonical(t, "podIPs", s.PodIPs, appendPodIP)
		checkCanonical(t, "hostIPs", s.HostIPs, appendHostIP)
		checkCanonical(t, "containerStatuses", s.ContainerStatuses, appendContainerStatus)
		checkCanonical(t, "initContainerStatuses", s.InitContainerStatuses, appendContainerStatus)
		checkCanonical(t, "resourceClaimStatuses", s.ResourceClaimStatuses, appendPodResourceClaimStatus)
		checkCanonical(t, "nodeAllocatableResourceClaimStatuses", s.NodeAllocatableResourceClaimStatuses, appendNodeAllocatableClaimStatus)
		checkCanonical(t, "volumeHealth", s.VolumeHealth, appendVolumeHealth)
		if s.ExtendedResourceClaimStatus != nil {
			checkCanonical(t, "extendedResourceClaimStatus", []v1.PodExtendedResourceClaimStatus{*s.ExtendedResourceClaimStatus}, appendExtendedResourceClaimStatus)
		}
		if s.Resources != nil {
			checkCanonical(t, "resources", []v1.ResourceRequirements{*s.Resources}, appendResourceRequirements)
		}
		if len(s.AllocatedResources) > 0 {
			if got, want := appendResourceList(nil, s.AllocatedResources), reread(t, s.AllocatedResources); !bytes.Equal(got, want) {
				t.Fatalf("allocatedResources:\nours: %s\nref:  %s", got, want)
			}
		}
	})
}

// TestAppendString checks the string encoder against encoding/json on arbitrary bytes, as
// they read back: invalid UTF-8 replaced by U+FFFD.
func TestAppendString(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := string(rapid.SliceOf(rapid.SampledFrom([]byte("a\"\\<>&\x00\x01\b\f\n\r\t\x7f\xff\xe2\x80\xa8\xa9\xc3\xa9"))).Draw(t, "s"))
		got := appendString(nil, s)
		want, _ := json.Marshal(normString(s))
		if !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
		viaRoundTrip := reread(t, s)
		if !bytes.Equal(got, viaRoundTrip) {
			t.Fatalf("appendString(%q) = %s, round trip gives %s", s, got, viaRoundTrip)
		}
		if !utf8.Valid(got) {
			t.Fatalf("appendString(%q) is not valid UTF-8", s)
		}
		other := string(rapid.SliceOf(rapid.SampledFrom([]byte("a\xff\xfe\xc3\xa9"))).Draw(t, "other"))
		if eqString(s, other) != (normString(s) == normString(other)) {
			t.Fatalf("eqString(%q, %q) disagrees with the round trip", s, other)
		}
	})
}
