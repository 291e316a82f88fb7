package main

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestPeakLimitFollowsTheLargestLiveHeap: the limit is 1.5 times the largest live heap
// seen plus the headroom; it rises with the live heap and stays when the heap shrinks.
func TestPeakLimitFollowsTheLargestLiveHeap(t *testing.T) {
	p := peakLimit{ratio: 1.5}
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, limitHeadroom},
		{100 << 20, 150<<20 + limitHeadroom},
		{400 << 20, 600<<20 + limitHeadroom},
		{100 << 20, 600<<20 + limitHeadroom}, // deleting: the limit stays
		{500 << 20, 750<<20 + limitHeadroom},
	} {
		if got := p.observe(c.live); got != c.want {
			t.Errorf("live %d MiB: limit %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// TestFollowSetsTheLimitAndRestoresIt: follow reads the live heap every period, sets the
// limit when it changes, and sets the limit it found back when ctx ends.
func TestFollowSetsTheLimitAndRestoresIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var sets []int64
		limit := int64(1 << 62) // the runtime's "no limit"
		set := func(l int64) int64 {
			mu.Lock()
			defer mu.Unlock()
			old := limit
			if l >= 0 {
				limit = l
				sets = append(sets, l)
			}
			return old
		}
		heaps := []uint64{10 << 20, 10 << 20, 40 << 20, 20 << 20}
		read := 0
		live := func() uint64 {
			h := heaps[min(read, len(heaps)-1)]
			read++
			return h
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			(&peakLimit{ratio: 1.5}).follow(ctx, time.Second, live, set)
		}()
		time.Sleep(3*time.Second + time.Millisecond)
		synctest.Wait()
		cancel()
		<-done
		want := []int64{15<<20 + limitHeadroom, 60<<20 + limitHeadroom, 1 << 62}
		if len(sets) != len(want) {
			t.Fatalf("limits set %v, want %v", sets, want)
		}
		for i := range want {
			if sets[i] != want[i] {
				t.Errorf("limit %d set to %d, want %d", i, sets[i], want[i])
			}
		}
	})
}
