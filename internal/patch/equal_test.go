package patch

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/internal/patch/patchtest"
)

// TestEqualStatusIsConservative: whenever the typed check calls two statuses equal, the
// encoder finds nothing to patch. The property tests in package status check the encoder
// against the reference, so together the shortcut is checked against the reference too.
func TestEqualStatusIsConservative(t *testing.T) {
	equal := 0
	rapid.Check(t, func(t *rapid.T) {
		old := patchtest.Plain(patchtest.Status(t))
		var new v1.PodStatus
		if rapid.Bool().Draw(t, "leaf") {
			new = patchtest.Plain(patchtest.MutateLeaf(t, old))
		} else {
			new = patchtest.Plain(patchtest.Mutate(t, old))
		}
		if !equalStatus(&old, &new) {
			return
		}
		equal++
		if got := appendStatus([]byte("{"), &old, &new); string(got) != "{" {
			t.Fatalf("equalStatus said equal, but the encoder wrote %s", got[1:])
		}
	})
	if equal == 0 {
		t.Fatalf("no equal pair was drawn; the test checks nothing")
	}
}
