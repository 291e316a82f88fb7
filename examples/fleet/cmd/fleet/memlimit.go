package main

import (
	"context"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Memory: the agent's peak near 1.5 times its largest live heap, not Go's 2 times.
//
// Nearly all of the agent's live heap is its pods, and Go's collector lets the heap grow to
// 1 + GOGC/100 times what its last collection found live: with Go's defaults, 100,000 pods
// on 1,000 nodes were 396 MB live and a peak RSS of 727 MiB. A lower GOGC brings the peak
// down but makes every collection come sooner, for as long as the program runs: GOGC=50
// cost a tenth more CPU per pod to Ready and while deleting. The peak, though, is only
// ever reached while the live heap is at its largest. So the agent keeps Go's GOGC and
// sets Go's soft memory limit (what GOMEMLIMIT sets) to a multiple of the largest live
// heap it has had, plus some headroom: while the pods grow the collector runs as with a
// GOGC of 50, and while they are deleted or fewer (or few: the headroom) it runs as with
// Go's defaults, since the limit is then above what GOGC alone lets the heap reach.

// limitHeadroom is added to the limit: memory the runtime holds besides the live heap
// (goroutine stacks, its own metadata) counts against a soft limit, and without it a small
// agent would collect continuously.
const limitHeadroom = 32 << 20

// defaultMemoryRatio is --memory-ratio's default.
const defaultMemoryRatio = 1.5

// peakLimit is the memory limit: ratio times the largest live heap observed, plus
// limitHeadroom.
type peakLimit struct {
	ratio   float64
	maxLive uint64
}

// observe takes the live heap of the latest collection and returns the limit.
func (p *peakLimit) observe(live uint64) int64 {
	p.maxLive = max(p.maxLive, live)
	l := p.ratio*float64(p.maxLive) + limitHeadroom
	if l >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(l)
}

// follow reads the live heap every period until ctx is done and sets the limit whenever
// it changes (set is debug.SetMemoryLimit); it then sets the limit found at the start
// again. A live heap that grows within one period is collected as with a lower GOGC
// until the next reading raises the limit: more CPU, never more memory.
func (p *peakLimit) follow(ctx context.Context, every time.Duration, live func() uint64, set func(int64) int64) {
	before := set(-1) // a negative limit reads the current one
	defer set(before)
	var last int64
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if l := p.observe(live()); l != last {
			set(l)
			last = l
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// liveHeap is the Go runtime's live heap after its latest collection
// (/gc/heap/live:bytes).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// startPeakLimit runs peakLimit with ratio in the background until ctx is done; stop
// waits for it to have set the limit back.
func startPeakLimit(ctx context.Context, ratio float64) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&peakLimit{ratio: ratio}).follow(ctx, time.Second, liveHeap, debug.SetMemoryLimit)
	}()
	return func() { cancel(); <-done }
}
