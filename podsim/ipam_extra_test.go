package podsim

import (
	"errors"
	"testing"
)

// An exhausted pod CIDR is an error a node agent can test for: the pod stays Pending.
func TestAllocateFromExhaustedCIDR(t *testing.T) {
	ipam, err := NewIPAM("10.9.0.0/30")
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for i := range 8 {
		if _, err := ipam.Allocate(string(rune('a' + i))); err != nil {
			last = err
			break
		}
	}
	if !errors.Is(last, ErrPodCIDRExhausted) {
		t.Fatalf("allocating past the CIDR: %v, want ErrPodCIDRExhausted", last)
	}
}
