package patch

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/internal/patch/patchtest"
	"github.com/podstatus/podstatus/status"
)

// equivalenceCase is one (old, new) pair plus server statuses to apply both patches to.
type equivalenceCase struct {
	old, new v1.PodStatus
	servers  []v1.PodStatus
}

var genCase = rapid.Custom(func(t *rapid.T) equivalenceCase {
	old := patchtest.Status(t)
	c := equivalenceCase{old: old, new: patchtest.Mutate(t, old)}
	// Servers: an unrelated status, and one that drifted from old (another writer).
	c.servers = []v1.PodStatus{patchtest.Status(t), patchtest.Mutate(t, old)}
	return c
})

func caseCount(t *testing.T, def int) int {
	if s := os.Getenv("PODSTATUS_PATCH_CASES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("PODSTATUS_PATCH_CASES=%q: want a positive integer", s)
		}
		return n
	}
	return def
}

// TestPatchEquivalenceWithUpstream: for random (old, new), status.PatchBytes and the
// kubelet's PatchPodStatus agree on "unchanged", and applying either patch to old, new and
// two other server statuses with apimachinery's StrategicMergePatch ends in the same
// object. Byte-identical patches are counted too.
func TestPatchEquivalenceWithUpstream(t *testing.T) {
	n := caseCount(t, 20000)
	up := newUpstream()
	const uid = types.UID("uid-1")
	mismatches, identical, unchanged := 0, 0, 0
	for seed := 0; seed < n; seed++ {
		c := genCase.Example(seed)
		ours, oursSame := status.PatchBytes(uid, c.old, c.new)
		theirs, theirsSame, err := up.patch(uid, c.old, c.new)
		if err != nil {
			// Upstream fails on inputs CreateTwoWayMergePatch cannot diff; ours must still
			// produce a patch that takes old to new, which the status package tests check.
			t.Logf("seed %d: upstream failed (%v); skipped from the comparison", seed, err)
			continue
		}
		if oursSame != theirsSame {
			mismatches++
			t.Errorf("seed %d: unchanged = %v, upstream %v\nours: %s\nupstream: %s", seed, oursSame, theirsSame, ours, theirs)
			continue
		}
		if oursSame {
			unchanged++
		}
		if bytes.Equal(ours, theirs) {
			identical++
		}
		for i, server := range append([]v1.PodStatus{c.old, c.new}, c.servers...) {
			if ok, diff := sameOutcome(uid, server, ours, theirs); !ok {
				mismatches++
				t.Errorf("seed %d, server %d: outcomes differ\n%s\npatch ours: %s\npatch upstream: %s", seed, i, diff, ours, theirs)
				break
			}
		}
		if mismatches > 10 {
			t.Fatalf("too many mismatches, stopping")
		}
	}
	msg := fmt.Sprintf("patch equivalence: %d cases, %d mismatches, %d byte-identical patches, %d unchanged", n, mismatches, identical, unchanged)
	t.Log(msg)
	fmt.Println(msg)
}
