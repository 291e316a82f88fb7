package faults

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/status"
)

// The schedule of TestStatisticalOutageRecovery: after a warm-up, every node loses the
// API server for each of outages in turn (every open connection reset, new ones
// refused), with every writer running; the writers pause at the heal, and run again
// for between before the next outage.
var outages = []time.Duration{15 * time.Second, 60 * time.Second}

const (
	// recoveryBound is how soon after the heal every pod's server status must equal its
	// Manager's cache.
	recoveryBound = 3 * time.Second
	// recoveryLimit is how long the test waits to report how late a recovery is.
	recoveryLimit = 70 * time.Second
	between       = 4 * time.Second
	// writersSettle is how long the writers are paused before the heal, so that what
	// the Managers must converge to is fixed when the network comes back.
	writersSettle = 300 * time.Millisecond
)

// TestStatisticalOutageRecovery is a statistical end-to-end test on the real clock (its
// assertions are bounds that hold for every run; timings vary). 10 Managers (10 nodes) ×
// 50 pods with the Options a node agent gets by default (Retry's defaults: backoff to 1
// minute, RecoveryWindow 1 s, RecoveryRate 100 pods/s, ProbeInterval 1 s, a random seed
// per Manager) run against a real kube-apiserver through one proxy per node, with the
// readiness-gate controller and the node-lifecycle writer racing them; every node loses
// the server for 15 s and then for 60 s while the writers go on (changes, gate flips and
// Ready False pile up as drift). After each heal every pod's server status must equal
// its Manager's cache within recoveryBound, and the Managers' first woken retries must
// spread over at least a second; at the end no gate is lost and the watch saw no
// lastTransitionTime move without its Status and no terminal phase left.
func TestStatisticalOutageRecovery(t *testing.T) {
	testStart := time.Now()
	srv := apiserver.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ns := srv.CreateNamespace(t, "outage-").Name
	w := newWorld(t, ctx, srv, ns)
	w.startNodes(status.RetryOptions{})
	w.start()
	stopWriters := w.startWriters()
	time.Sleep(warmUp)
	healthy := w.tally()

	var woken []time.Duration
	for _, d := range outages {
		woken = append(woken, w.outage(d)...)
		time.Sleep(between)
	}
	stopWriters()
	if took, ok := w.awaitConvergence(converge); !ok {
		t.Errorf("not converged %v after the writers stopped: %s", took, w.firstMismatch())
	}
	w.checkFinal()

	// The spread of the Managers' first woken retries, pooled over the heals (relative
	// to each heal): each is the probe's phase (up to ProbeInterval·1.2) plus the
	// Manager's offset in [0, RecoveryWindow). 20 such draws span less than a second
	// with probability below 1%; Managers that woke together would span milliseconds.
	slices.Sort(woken)
	if len(woken) < 2 || woken[len(woken)-1]-woken[0] < time.Second {
		t.Errorf("first woken retries after heal %v: spread over less than 1s", woken)
	}
	all := w.tally()
	t.Logf("writers: %d status changes by the Managers' callers, %d gate writes, %d Ready flips by the node-lifecycle writer (%d conflicts)",
		all.changes, w.gateWrites, w.notReadyFlips, w.nlcConflicts)
	t.Logf("requests, first status and warm-up (no faults): %s", healthy)
	t.Logf("requests, whole run: %s", all)
	ps := w.proxyStats()
	t.Logf("proxies: %d connections; %d open connections reset by the outages; the test took %v",
		ps.Accepted, ps.DownResets, time.Since(testStart).Round(time.Second))
}

// outage takes every node's network down for d with the writers running, pauses the
// writers, heals, and checks that every pod's server status equals its Manager's cache
// within recoveryBound. It returns, per Manager, how long after the heal its first woken
// retry was due (the server's first answer plus the Manager's drawn offset).
func (w *world) outage(d time.Duration) []time.Duration {
	t := w.t
	before := w.tally()
	for _, n := range w.nodes {
		n.proxy.Down()
	}
	time.Sleep(d - writersSettle)
	w.paused.Store(true)
	time.Sleep(writersSettle)
	during := w.tally()
	heal := time.Now()
	for _, n := range w.nodes {
		if err := n.proxy.Heal(); err != nil {
			t.Fatal(err)
		}
	}
	took, ok := w.awaitConvergence(recoveryLimit)
	switch {
	case !ok:
		t.Errorf("outage %v: not converged %v after heal: %s", d, took, w.firstMismatch())
	case took > recoveryBound:
		t.Errorf("outage %v: converged %v after heal, want within %v", d, took.Round(time.Millisecond), recoveryBound)
	}
	var probes, woken []time.Duration
	pods := 0
	for _, n := range w.nodes {
		if f, ok := n.cli.firstAfter(heal); ok {
			probes = append(probes, f.Sub(heal).Round(time.Millisecond))
		}
		r, ok := n.obs.firstRecoveryAfter(heal)
		if !ok {
			t.Errorf("outage %v: %s woke no pod after heal", d, n.name)
			continue
		}
		woken = append(woken, r.at.Add(r.ev.First).Sub(heal).Round(time.Millisecond))
		pods += r.ev.Pods
	}
	slices.Sort(probes)
	slices.Sort(woken)
	after := w.tally()
	t.Logf("outage %v: every pod as its Manager set it %v after heal (bound %v)", d, took.Round(time.Millisecond), recoveryBound)
	t.Logf("outage %v: first request of each Manager after heal (its probe): %v, spread %v", d, probes, spread(probes))
	t.Logf("outage %v: first woken retry of each Manager after heal: %v, spread %v; %d pods woken", d, woken, spread(woken), pods)
	t.Logf("outage %v: requests during the outage: %d (%d failed); after heal, until converged: %d",
		d, during.gets+during.patches-before.gets-before.patches, during.failed-before.failed,
		after.gets+after.patches-during.gets-during.patches)
	w.paused.Store(false)
	return woken
}

// spread is the span of sorted durations.
func spread(sorted []time.Duration) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[len(sorted)-1] - sorted[0]
}
