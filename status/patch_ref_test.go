package status

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/podstatus/podstatus/internal/patch/patchtest"
)

// fataler is the part of testing.TB and *rapid.T the checks use.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// referencePatch is what the kubelet does (pkg/util/pod/pod.go, preparePatchBytesForPodStatus):
// marshal both pods, diff them with
// CreateTwoWayMergePatch, and call the result unchanged when it is the bare uid precondition.
func referencePatch(uid types.UID, old, new v1.PodStatus) ([]byte, bool, error) {
	oldData, err := json.Marshal(v1.Pod{Status: old})
	if err != nil {
		return nil, false, fmt.Errorf("marshal old: %w", err)
	}
	newData, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: new})
	if err != nil {
		return nil, false, fmt.Errorf("marshal new: %w", err)
	}
	p, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Pod{})
	if err != nil {
		return nil, false, fmt.Errorf("CreateTwoWayMergePatch: %w", err)
	}
	return p, bytes.Equal(p, fmt.Appendf(nil, `{"metadata":{"uid":%q}}`, uid)), nil
}

// applyPatch applies p to a pod with the given uid and status the way the API server does,
// and returns the resulting document.
func applyPatch(uid types.UID, server v1.PodStatus, p []byte) ([]byte, error) {
	orig, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: server})
	if err != nil {
		return nil, err
	}
	return strategicpatch.StrategicMergePatch(orig, p, v1.Pod{})
}

// checkAgainstReference fails t unless PatchBytes agrees with the reference for (old, new):
// (a) on unchanged, (b) on the state every server status ends in once the patch is applied,
// (c) applying our patch to old gives new (when no merge list has a duplicate key, since
// then no patch can), and (d) byte for byte.
func checkAgainstReference(t fataler, uid types.UID, old, new v1.PodStatus, servers []v1.PodStatus) {
	t.Helper()
	got, gotSame := PatchBytes(uid, old, new)
	want, wantSame, err := referencePatch(uid, old, new)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	if gotSame != wantSame {
		t.Fatalf("unchanged = %v, reference says %v\nours: %s\nref:  %s", gotSame, wantSame, got, want)
	}
	for i, server := range append([]v1.PodStatus{old, new}, servers...) {
		a, errA := applyPatch(uid, server, got)
		b, errB := applyPatch(uid, server, want)
		if (errA != nil) != (errB != nil) || !bytes.Equal(a, b) {
			t.Fatalf("server %d ends differently\nours: %s (err %v)\nref:  %s (err %v)\npatch ours: %s\npatch ref:  %s", i, a, errA, b, errB, got, want)
		}
	}
	if storable(old) && storable(new) && !hasDuplicateKeys(old) && !hasDuplicateKeys(new) {
		res, err := applyPatch(uid, old, got)
		if err != nil {
			t.Fatalf("applying our patch to old: %v\npatch: %s", err, got)
		}
		var pod v1.Pod
		if err := json.Unmarshal(res, &pod); err != nil {
			t.Fatalf("decoding the patched pod: %v", err)
		}
		// Round trips twice: a time in the first second of year 1 is not zero but reads back
		// as zero, so one trip is not always a fixed point.
		gotJSON, _ := json.Marshal(mustRoundTrip(mustRoundTrip(pod.Status)))
		wantJSON, _ := json.Marshal(mustRoundTrip(mustRoundTrip(new)))
		if !bytes.Equal(gotJSON, wantJSON) {
			t.Fatalf("old + our patch != new\ngot:  %s\nwant: %s\npatch: %s", gotJSON, wantJSON, got)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("patch bytes differ from the reference\nours: %s\nref:  %s", got, want)
	}
}

// storable reports whether s survives a JSON round trip, as it must to be stored.
func storable(s v1.PodStatus) bool {
	_, err := patchtest.RoundTrip(s)
	return err == nil
}

func mustRoundTrip(s v1.PodStatus) v1.PodStatus {
	out, err := patchtest.RoundTrip(s)
	if err != nil {
		panic(err)
	}
	return out
}

// hasDuplicateKeys reports whether a merge list of s repeats a key (after the JSON round
// trip, which may make two keys equal).
func hasDuplicateKeys(s v1.PodStatus) bool {
	s = mustRoundTrip(s)
	seen := func(n int, key func(int) string) bool {
		m := map[string]bool{}
		for i := range n {
			if m[key(i)] {
				return true
			}
			m[key(i)] = true
		}
		return false
	}
	if seen(len(s.Conditions), func(i int) string { return string(s.Conditions[i].Type) }) ||
		seen(len(s.PodIPs), func(i int) string { return s.PodIPs[i].IP }) ||
		seen(len(s.HostIPs), func(i int) string { return s.HostIPs[i].IP }) ||
		seen(len(s.ResourceClaimStatuses), func(i int) string { return s.ResourceClaimStatuses[i].Name }) {
		return true
	}
	nc := s.NodeAllocatableResourceClaimStatuses
	if seen(len(nc), func(i int) string { return nc[i].ResourceClaimName }) {
		return true
	}
	for _, c := range nc {
		if seen(len(c.Mapping), func(i int) string { return string(c.Mapping[i].Name) }) ||
			seen(len(c.Overhead), func(i int) string { return string(c.Overhead[i].Name) }) {
			return true
		}
	}
	return false
}
