package status

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/podstatus/podstatus/conditions"
)

// Run syncs pending changes until ctx is done, then returns nil. A failing pod does not
// stop it: its error is retried with backoff, logged and reported to the Observer (Sync
// returns such errors). It wakes on every change (coalesced, as the kubelet's one-slot
// channel), when a pod's backoff expires, and every SyncPeriod. Each wake-up sends only
// the pods that changed or are due for a retry. Sync may be called alongside.
//
// The loop only decides what is due: Options.Workers goroutines send the requests, and
// the probe of an unreachable server (RetryOptions.ProbeInterval) has a goroutine of its
// own. So a request that hangs until RequestTimeout holds one worker, not the loop: a
// change or a retry that falls due meanwhile goes out on another worker, and the probe
// goes out on time.
//
// Run returns an error only when it cannot run: when another Run of the same Manager is
// running. When it returns, every goroutine it started has ended. It logs with ctx's
// logger (logr.FromContext) when ctx carries one, else with Options.Logger.
func (m *Manager) Run(ctx context.Context) error {
	if !m.running.CompareAndSwap(false, true) {
		return errors.New("status: Run: already running")
	}
	defer m.running.Store(false)
	log := m.logger(ctx)
	log.V(2).Info("Starting pod status sync loop", "syncPeriod", m.opts.SyncPeriod, "workers", m.opts.Workers)
	defer log.V(2).Info("Pod status sync loop stopped")
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	q := &runQueue{wake: make(chan struct{}, m.opts.Workers)}
	for range m.opts.Workers {
		wg.Go(func() { m.work(ctx, q) })
	}
	defer func() {
		cancel()
		wg.Wait()
		m.release(q)
	}()
	ticker := m.clock.NewTicker(m.opts.SyncPeriod)
	defer ticker.Stop()
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		next, probe := m.dispatch(q)
		if probe != nil {
			wg.Go(func() {
				m.runJob(ctx, probe)
				m.mu.Lock()
				m.probes--
				if m.unreachable && !m.probeAt.IsZero() {
					m.wakeByLocked(m.probeAt) // the probe it held back may be due
				}
				m.mu.Unlock()
			})
		}
		var retry <-chan time.Time
		if !next.IsZero() {
			d := next.Sub(m.clock.Now())
			if d <= 0 {
				if ctx.Err() != nil {
					return nil
				}
				continue // a backoff expired while dispatching
			}
			if timer == nil {
				timer = m.clock.NewTimer(d)
			} else {
				timer.Stop()
				timer.Reset(d)
			}
			retry = timer.C()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-m.kick:
		case <-ticker.C():
			m.mu.Lock()
			m.requeueHeldLocked()
			m.mu.Unlock()
		case <-retry:
		}
	}
}

// runQueue holds the pods Run claimed and its workers have yet to send, in the order
// claimed. Its slice is guarded by Manager.mu; wake (buffered, one slot per worker)
// tells idle workers there is work.
type runQueue struct {
	jobs []*entry
	wake chan struct{}
}

// dispatch claims every pending pod that no one else is syncing and whose backoff has
// expired, and queues it for Run's workers. It returns the earliest time a backed-off pod
// or the next probe becomes due (zero if none), which it also records as Run's wake-up
// (wakeAt, see wakeByLocked), and the pod to probe an unreachable server with, if the
// probe is due (probeLocked), claimed, for the caller to send on a goroutine of its own.
func (m *Manager) dispatch(q *runQueue) (next time.Time, probe *entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	queued := 0
	// While the workers have queued pods left, the scan waits: the worker that takes the
	// last one wakes Run. So the pods are walked once per batch, as in the kubelet's
	// sync rounds, not once per change (a change made meanwhile goes out with the next
	// batch, as it would after the round), and a worker stuck in a request holds back
	// no batch.
	if len(q.jobs) == 0 {
		for e := range m.dirty {
			if e.inflight || !e.pending() {
				continue
			}
			if e.notBefore.After(now) {
				if next.IsZero() || e.notBefore.Before(next) {
					next = e.notBefore
				}
				continue
			}
			e.inflight, e.queued = true, true // claimed: nobody else syncs it until finish
			q.jobs = append(q.jobs, e)
			queued++
		}
	}
	// With maxProbes in flight, the next probe waits for one of them to end (it then
	// wakes Run), not for probeAt, which may be past.
	if m.probes < maxProbes {
		if probe = m.probeLocked(now, q); probe != nil {
			m.probes++
		}
		if m.unreachable && !m.probeAt.IsZero() && (next.IsZero() || m.probeAt.Before(next)) {
			next = m.probeAt
		}
	}
	m.wakeAt = next
	for range min(queued, cap(q.wake)) {
		select {
		case q.wake <- struct{}{}:
		default: // every worker already has a wake-up pending
		}
	}
	return next, probe
}

// maxProbes bounds the probes in flight: a probe that hangs (a black-holed connection,
// until RequestTimeout) does not hold back the next one, and hanging probes do not pile
// up.
const maxProbes = 2

// work is one of Run's workers: it sends the queued pods, one at a time, until ctx is
// done.
func (m *Manager) work(ctx context.Context, q *runQueue) {
	for {
		m.mu.Lock()
		var e *entry
		if len(q.jobs) > 0 {
			e = q.jobs[0]
			e.queued = false
			q.jobs[0] = nil
			q.jobs = q.jobs[1:]
			if len(q.jobs) == 0 {
				m.kickLoop() // the batch is out: Run looks for the next
			}
		}
		m.mu.Unlock()
		if e != nil {
			m.runJob(ctx, e)
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		}
	}
}

// release gives back the pods Run claimed but never sent (it stopped first), so that a
// later Run or Sync sends them.
func (m *Manager) release(q *runQueue) {
	m.mu.Lock()
	for _, e := range q.jobs {
		e.inflight, e.queued = false, false
	}
	q.jobs = nil
	m.wakeAt = time.Time{}
	m.wakeWaitersLocked()
	m.mu.Unlock()
}

// runJob syncs a pod Run claimed (a queued one or the probe) and records the outcome.
func (m *Manager) runJob(ctx context.Context, e *entry) {
	m.mu.Lock()
	if e.gone {
		// Forgotten (ForgetPod, RemoveOrphanedStatuses, or dropped by another
		// worker's 404) since it was claimed: nothing may be sent for it.
		e.inflight = false
		m.wakeWaitersLocked()
		m.mu.Unlock()
		return
	}
	snap := e.snapshot() // taken late, so changes made while queued go out too
	m.mu.Unlock()
	res, err := m.syncEntry(ctx, e, snap)
	m.finish(ctx, e, snap, res, err)
}

// wakeByLocked wakes Run if t comes before the wake-up Run has set itself (or it set
// none): a retry deadline or a probe a worker or Sync set after Run last looked.
func (m *Manager) wakeByLocked(t time.Time) {
	if m.wakeAt.IsZero() || t.Before(m.wakeAt) {
		m.wakeAt = t
		m.kickLoop()
	}
}

// Sync sends every change pending when it is called, now, ignoring backoff, and returns
// once each affected pod is up to date on the server or has failed. A pod another
// goroutine is syncing is waited for, until ctx is done (so do not call Sync from an
// Observer). Pods are sent in namespace/name order. The error, "status: Sync: ...",
// joins one error per failed pod (naming it, wrapping the API error or ctx's); failed
// pods stay queued and Run retries them at their backoff deadline. It logs as Run does.
//
// A Sync with nothing pending costs the same however many pods are cached.
func (m *Manager) Sync(ctx context.Context) error {
	m.mu.Lock()
	m.requeueHeldLocked()
	targets := make([]*entry, 0, len(m.dirty))
	for e := range m.dirty {
		targets = append(targets, e)
	}
	m.mu.Unlock()
	if len(targets) == 0 {
		return nil
	}
	// In a fixed order (not the map's), so that a run with one worker sends the same
	// requests in the same order every time: the server's resourceVersions, which a
	// conditional patch carries, then repeat too.
	slices.SortFunc(targets, func(a, b *entry) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name), cmp.Compare(a.uid, b.uid))
	})
	var (
		mu   sync.Mutex
		errs []error
	)
	m.each(targets, func(e *entry) {
		if err := m.syncNow(ctx, e); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("status: Sync: %d of %d pods failed: %w", len(errs), len(targets), errors.Join(errs...))
	}
	return nil
}

// syncNow syncs e for Sync: it waits for a sync of e in flight elsewhere, then syncs e if
// it still has something to send.
func (m *Manager) syncNow(ctx context.Context, e *entry) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pod %s/%s (uid %s): %w", e.namespace, e.name, e.uid, err)
	}
	m.mu.Lock()
	for e.inflight && !e.gone {
		if m.idle == nil {
			m.idle = make(chan struct{})
		}
		idle := m.idle
		m.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return fmt.Errorf("pod %s/%s (uid %s): waiting for a sync in flight: %w", e.namespace, e.name, e.uid, ctx.Err())
		}
		m.mu.Lock()
	}
	if e.gone || !e.pending() {
		m.mu.Unlock()
		return nil
	}
	e.inflight = true
	snap := e.snapshot()
	m.mu.Unlock()
	res, err := m.syncEntry(ctx, e, snap)
	m.finish(ctx, e, snap, res, err)
	if err != nil {
		return fmt.Errorf("pod %s/%s (uid %s): %w", e.namespace, e.name, e.uid, err)
	}
	return nil
}

// wakeWaitersLocked wakes every Sync waiting for a sync in flight elsewhere.
func (m *Manager) wakeWaitersLocked() {
	if m.idle != nil {
		close(m.idle)
		m.idle = nil
	}
}

// requeueHeldLocked queues again every pod whose terminal phase is held back, to find
// out whether its containers stopped. Only those pods are visited.
func (m *Manager) requeueHeldLocked() {
	for e := range m.held {
		if !e.pending() {
			e.version++
			m.dirty[e] = struct{}{}
		}
	}
}

// each calls f for every entry, on Options.Workers goroutines.
func (m *Manager) each(list []*entry, f func(*entry)) {
	n := min(m.opts.Workers, len(list))
	if n <= 1 {
		for _, e := range list {
			f(e)
		}
		return
	}
	ch := make(chan *entry)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range ch {
				f(e)
			}
		}()
	}
	for _, e := range list {
		ch <- e
	}
	close(ch)
	wg.Wait()
}

// finish records the outcome of a sync of e: on success the synced version moves up (it
// never goes back, and a change made meanwhile stays pending); on failure the base is
// marked stale (unless the request never left, see unsent) and the pod backs off. It
// wakes Run if the pod's retry comes before Run's next wake-up (wakeByLocked).
//
// A server copy ObservePod adopted after the sync last compared one (res.checked) came
// while the sync was in flight, and ObservePod left it to the sync: it is compared here
// with what the sync merged (drifted), and a drift queues the pod again.
func (m *Manager) finish(ctx context.Context, e *entry, snap snapshot, res syncResult, err error) {
	var (
		retryAt time.Time
		delay   time.Duration
		attempt int
		synced  bool
		latency time.Duration
	)
	m.mu.Lock()
	e.inflight = false
	if !e.gone {
		if err == nil {
			if snap.version > e.synced {
				e.synced = snap.version
			}
			if res.held {
				m.held[e] = struct{}{}
			} else {
				delete(m.held, e)
			}
			if !m.opts.UpstreamTransitionTimes && e.base != nil {
				adoptTransitionTimes(&e.status, &e.base.Status, m.own)
			}
			e.attempts, e.notBefore, e.transport = 0, time.Time{}, false
			if res.want != nil && e.base != res.checked && !e.deleted && !e.pending() && drifted(e.base, res.want, m.own) {
				m.logger(ctx).V(4).Info("Pod status changed by another writer during the sync; queued", "pod", e.ref(), "podUID", e.uid, "resourceVersion", e.base.ResourceVersion)
				e.version++
				m.markDirtyLocked(e)
			}
			if !e.pending() {
				if e.base != nil {
					shareBase(&e.status, &e.base.Status, false)
				}
				delete(m.dirty, e)
				synced = true
				if !e.at.IsZero() {
					latency = m.clock.Since(e.at)
				}
				e.at = time.Time{}
			} else {
				m.kickLoop() // a change arrived while this one was in flight
			}
		} else {
			if !unsent(err) {
				e.baseStale = true
			}
			e.attempts++
			attempt = e.attempts
			delay = m.backoff.delay(e.attempts, err)
			retryAt = m.clock.Now().Add(delay)
			e.notBefore = retryAt
			e.transport = !answered(err) && ctx.Err() == nil
			m.wakeByLocked(retryAt)
		}
	}
	m.wakeWaitersLocked()
	m.mu.Unlock()
	switch {
	case err != nil:
		log := m.logger(ctx)
		if ctx.Err() != nil {
			// Interrupted by the caller (Run or Sync stopping), not a failure to report.
			log.V(2).Info("Pod status sync interrupted; will retry", "pod", e.ref(), "podUID", e.uid, "err", err.Error())
		} else {
			log.Error(err, "Pod status sync failed; will retry", "pod", e.ref(), "podUID", e.uid,
				"attempt", attempt, "delay", delay, "timeout", isTimeout(err))
		}
		if f := m.obs.OnRetry; f != nil {
			f(RetryEvent{Pod: e.ref(), Attempt: attempt, Delay: delay, Err: err})
		}
	case synced:
		if f := m.obs.OnSynced; f != nil {
			f(SyncedEvent{Pod: e.ref(), Latency: latency})
		}
	}
}

// syncEntry brings the server's copy of one pod up to date with snap. It is the kubelet's
// syncPod with two differences: the patch is computed against the newest known server
// copy (the last PATCH response or a watch event) and a GET is made only when there is
// none or after an error; and a 409 refetches and retries at once. A nil error means the
// server is up to date or the pod is gone (its status is then dropped).
//
// Another writer's change to a kubelet-owned condition (the node lifecycle controller's
// Ready=False, say) made after the base was taken and before the PATCH reaches the
// Manager inside the PATCH response: the response, newer than that change's watch
// events, becomes the base and ObservePod ignores those events. So the newest server
// copy after the PATCH is compared with what was merged (drifted) and, if another writer
// changed a kubelet-owned condition, merged and patched again against it at once, at
// most Retry.MaxConflicts times. (The kubelet finds such a change on its 10 s
// needsReconcile.) A copy that comes later, while the sync is still in flight, is
// compared by finish.
func (m *Manager) syncEntry(ctx context.Context, e *entry, snap snapshot) (res syncResult, err error) {
	ref := e.ref()
	log := m.logger(ctx)
	base := snap.base
	needGet := base == nil || snap.stale
	conflicts, drifts := 0, 0
	// res.checked is the entry's base as this sync last saw it: a newer one is a server
	// copy adopted since (a PATCH response, or an event that came meanwhile).
	res.checked = snap.base
	for {
		if needGet {
			got, err := m.get(ctx, e)
			if errors.Is(err, errForgotten) {
				return res, nil
			}
			if err != nil {
				if classify(err) == classNotFound {
					m.drop(log, e, SkipNotFound)
					return res, nil
				}
				return res, fmt.Errorf("get pod: %w", err)
			}
			if got == nil {
				return res, errors.New("get pod: the client returned no pod and no error")
			}
			if got.UID != e.uid {
				m.drop(log, e, SkipRecreated)
				return res, nil
			}
			base = got
			res.checked = m.setBase(log, e, got)
			needGet = false
		}
		now := metav1.NewTime(m.clock.Now()).Rfc3339Copy()
		cfg := mergeConfig{
			now: now, features: m.opts.Features, generation: base.Generation, hasGeneration: true,
			serverLTT: !m.opts.UpstreamTransitionTimes, keepTerminal: true,
		}
		couldRun := snap.couldRun
		if !snap.syncPodSeen {
			couldRun = m.opts.CouldHaveRunningContainers(base)
		}
		merged := merge(&base.Status, snap.status, couldRun, &cfg)
		// A terminal phase held back while containers could run must be retried later
		// even though nothing else changes (the kubelet's 10 s reconcile does that).
		res.held = terminal(snap.status.Phase) && !terminal(merged.Phase)
		res.want = merged.Conditions
		patch, unchanged := PatchBytes(e.uid, base.Status, merged)
		if unchanged {
			log.V(3).Info("Pod status is up to date", "pod", ref, "podUID", ref.UID, "version", snap.version)
			if f := m.obs.OnSkip; f != nil {
				f(SkipEvent{Pod: ref, Reason: SkipUnchanged})
			}
			return res, m.deleteIfDone(ctx, e)
		}
		if base.ResourceVersion != "" && readyLost(&base.Status, &merged) {
			// Ready leaves True: a new lastTransitionTime, for the one transition another
			// controller also makes (the node lifecycle controller's MarkPodsNotReady,
			// pkg/controller/util/node/controller_utils.go). If it made it while this PATCH
			// was computed or on the wire, an unconditional patch would replace its
			// lastTransitionTime with ours with no change of Status (kubernetes#119514 by a
			// race). Conditional on the base's resourceVersion, the patch gets a 409; the
			// Manager refetches and the merge keeps the other writer's time.
			patch = withResourceVersion(patch, base.ResourceVersion)
		}
		start := m.clock.Now()
		got, err := m.patch(ctx, e, patch)
		if errors.Is(err, errForgotten) {
			return res, nil
		}
		if f := m.obs.OnPatch; f != nil {
			f(PatchEvent{Pod: ref, Bytes: len(patch), Took: m.clock.Since(start), Err: err})
		}
		if err == nil {
			log.V(3).Info("Patched pod status", "pod", ref, "podUID", ref.UID, "version", snap.version, "patch", string(patch))
			if cur := m.setBase(log, e, got); cur != res.checked {
				res.checked = cur
				if drifts < m.opts.Retry.MaxConflicts && drifted(cur, merged.Conditions, m.own) {
					log.V(3).Info("Pod status changed by another writer before this PATCH; patching again", "pod", ref, "podUID", ref.UID, "resourceVersion", cur.ResourceVersion)
					drifts++
					base = cur
					continue
				}
			}
			return res, m.deleteIfDone(ctx, e)
		}
		switch classify(err) {
		case classConflict:
			log.V(3).Info("Conflict patching pod status; refetching", "pod", ref, "podUID", ref.UID, "version", snap.version)
			if f := m.obs.OnConflict; f != nil {
				f(ConflictEvent{Pod: ref})
			}
			conflicts++
			if conflicts > m.opts.Retry.MaxConflicts {
				return res, fmt.Errorf("patch status: %d conflicts in a row: %w", conflicts, err)
			}
			needGet = true
			continue
		case classNotFound:
			m.drop(log, e, SkipNotFound)
			return res, nil
		case classInvalid:
			// The metadata.uid precondition fails with 422 when the pod was recreated.
			cur, gerr := m.get(ctx, e)
			switch {
			case errors.Is(gerr, errForgotten):
				return res, nil
			case gerr != nil && classify(gerr) == classNotFound:
				m.drop(log, e, SkipNotFound)
				return res, nil
			case gerr == nil && cur != nil && cur.UID != e.uid:
				m.drop(log, e, SkipRecreated)
				return res, nil
			}
		}
		return res, fmt.Errorf("patch status: %w", err)
	}
}

// syncResult is what finish needs to know of a sync that syncEntry made.
type syncResult struct {
	// held reports that a terminal phase was held back because containers could still
	// run.
	held bool
	// checked is the entry's base (Manager's newest server copy) as the sync last saw it,
	// after its last request: finish compares a newer one with want.
	checked *v1.Pod
	// want is the conditions the sync last merged; nil when it merged nothing (the pod is
	// gone, or a GET failed first).
	want []v1.PodCondition
}

// drifted reports whether another writer changed a kubelet-owned condition in p, the
// server's copy, away from want, what a sync merged: a kubelet-owned or shared condition
// type that one of them has and the other lacks, or that they give different Statuses.
// Only the conditions' Status is compared, the field other controllers write (the node
// lifecycle controller's Ready=False, an eviction's DisruptionTarget): other fields may
// come back otherwise from a server whose strategic merge differs (client-go's fake
// clientset keeps what a real server deletes), which would cost a PATCH for nothing. A
// difference the merge keeps (a shared condition another writer added) is found again
// by the next merge and costs no request.
func drifted(p *v1.Pod, want []v1.PodCondition, own conditions.Ownership) bool {
	if p == nil {
		return false
	}
	got := p.Status.Conditions
	for _, list := range [][]v1.PodCondition{got, want} {
		for i := range list {
			t := list[i].Type
			if !own.Owned(t) && !own.Shared(t) {
				continue
			}
			if !sameStatus(conditions.Get(got, t), conditions.Get(want, t)) {
				return true
			}
		}
	}
	return false
}

// readyLost reports whether next takes Ready from True, in base, to another Status.
func readyLost(base, next *v1.PodStatus) bool {
	o, c := conditions.Get(base.Conditions, v1.PodReady), conditions.Get(next.Conditions, v1.PodReady)
	return o != nil && c != nil && o.Status == v1.ConditionTrue && c.Status != v1.ConditionTrue
}

// withResourceVersion adds a metadata.resourceVersion precondition to a patch PatchBytes
// made ({"metadata":{"uid":...},...}); the API server then answers 409 Conflict if the
// pod changed since rv. A patch without metadata (no UID) is returned as it is. The patch
// is the caller's own and is rewritten in place when its buffer has room (PatchBytes
// leaves some), so the precondition costs no second copy of it.
func withResourceVersion(patch []byte, rv string) []byte {
	const prefix = `{"metadata":{`
	if !bytes.HasPrefix(patch, []byte(prefix)) {
		return patch
	}
	q, err := json.Marshal(rv)
	if err != nil {
		return patch
	}
	member := append(append([]byte(`"resourceVersion":`), q...), ',')
	return slices.Insert(patch, len(prefix), member...)
}

// request makes one request to the API server about e's pod (a GET, a PATCH, or the
// DELETE of Options.Deleter): do runs bounded by Options.RequestTimeout, and its outcome
// feeds the wake-up rule (reached).
//
// Nothing is sent for a pod the Manager has forgotten (ForgetPod, RemoveOrphanedStatuses,
// or a 404 met by another request): the check and the registration of the request's
// cancel func are made under one lock, and dropLocked cancels a request registered
// before it. So once ForgetPod returns, a request for the pod is either not sent at all
// or cut off where it is, waiting in the client (a busy connection pool, a client-side
// rate limit) or on the wire; only one whose bytes the server already read may still
// land. Such a request returns errForgotten unless it got an answer, which is returned
// as it is (a 404, most likely).
//
// A request made with cutOff false is checked before it is sent but never cut off: the
// Manager's own DELETE, whose success is what makes the watch report the pod gone (the
// DELETED event often arrives before the DELETE's answer; cutting it off then would only
// turn a success into a request the server records as timed out, 504).
func (m *Manager) request(ctx context.Context, e *entry, cutOff bool, do func(ctx context.Context) error) error {
	var (
		rctx   context.Context
		cancel context.CancelFunc
	)
	if m.opts.RequestTimeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, m.opts.RequestTimeout)
	} else {
		rctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	m.mu.Lock()
	if e.gone {
		m.mu.Unlock()
		return errForgotten
	}
	if cutOff {
		e.stop = cancel
	}
	m.mu.Unlock()
	err := do(rctx)
	m.mu.Lock()
	e.stop = nil
	gone := e.gone
	m.mu.Unlock()
	if gone && !answered(err) {
		return errForgotten // cut off by dropLocked: says nothing about the server
	}
	m.reached(ctx, err)
	return err
}

// errForgotten is what request returns for a request it did not send, or cut off,
// because the pod was forgotten: its callers end the sync as the pod's 404 does, with
// nothing to report or retry.
var errForgotten = errors.New("pod forgotten: request not sent")

func (m *Manager) get(ctx context.Context, e *entry) (p *v1.Pod, err error) {
	err = m.request(ctx, e, true, func(ctx context.Context) error {
		p, err = m.client.GetPod(ctx, e.namespace, e.name)
		return err
	})
	return p, err
}

func (m *Manager) patch(ctx context.Context, e *entry, patch []byte) (p *v1.Pod, err error) {
	err = m.request(ctx, e, true, func(ctx context.Context) error {
		p, err = m.client.PatchPodStatus(ctx, e.namespace, e.name, patch)
		return err
	})
	return p, err
}

// reached records the outcome of one request for the wake-up rule of
// RetryOptions.RecoveryWindow: a transport failure marks the server unreachable and arms
// the probe; the first HTTP answer after that reschedules, spread and paced, every pod
// whose last failure was a transport failure. ctx is the caller's (Run's or Sync's): a
// request it cancelled says nothing about the server.
func (m *Manager) reached(ctx context.Context, err error) {
	if m.opts.Retry.RecoveryWindow < 0 || (err != nil && ctx.Err() != nil) {
		return
	}
	ok := answered(err)
	m.mu.Lock()
	if !ok {
		first := !m.unreachable
		m.unreachable = true
		if m.probeAt.IsZero() {
			m.probeAt = m.clock.Now().Add(m.backoff.probeDelay())
			m.wakeByLocked(m.probeAt)
		}
		m.mu.Unlock()
		if first {
			m.logger(ctx).V(2).Info("API server unreachable; probing it while pods back off",
				"err", err.Error(), "probeInterval", m.opts.Retry.ProbeInterval)
		}
		return
	}
	if !m.unreachable {
		m.mu.Unlock()
		return
	}
	m.unreachable, m.probeAt = false, time.Time{}
	ev := m.recoverLocked(m.clock.Now())
	m.mu.Unlock()
	if ev.Pods > 0 {
		m.kickLoop()
	}
	m.logger(ctx).V(2).Info("API server answers again; retrying the pods that could not reach it",
		"pods", ev.Pods, "first", ev.First, "last", ev.Last)
	if f := m.obs.OnRecovery; f != nil {
		f(ev)
	}
}

// recoverLocked schedules every pod whose last failure was a transport failure again:
// after a delay drawn from the Manager's own random source, one pod every
// 1/RecoveryRate, earliest deadline first, whatever its backoff deadline (one due now
// or soon takes its turn too, so that deadlines bunched by the outage do not go out in
// a burst). Their failure counts start again. A pod in flight is left alone (its request
// tells on its own).
func (m *Manager) recoverLocked(now time.Time) RecoveryEvent {
	var woken []*entry
	for e := range m.dirty {
		if e.transport && !e.inflight && !e.gone && e.pending() {
			woken = append(woken, e)
		}
	}
	if len(woken) == 0 {
		return RecoveryEvent{}
	}
	// Deterministic for a fixed seed: by deadline, then by name (not the map's order).
	slices.SortFunc(woken, func(a, b *entry) int {
		return cmp.Or(a.notBefore.Compare(b.notBefore), cmp.Compare(a.namespace, b.namespace),
			cmp.Compare(a.name, b.name), cmp.Compare(a.uid, b.uid))
	})
	offset, gap := m.backoff.recoveryOffset(), m.backoff.recoveryGap()
	ev := RecoveryEvent{Pods: len(woken), First: offset}
	for i, e := range woken {
		d := offset + time.Duration(i)*gap
		e.notBefore = now.Add(d)
		e.attempts, e.transport = 0, false
		ev.Last = d
	}
	return ev
}

// probeLocked picks the pod to probe the unreachable server with when the probe is due:
// of the pods whose last failure was a transport failure and whose request is not on its
// way, the one due soonest. dispatch calls it after claiming the pods due now, so it is
// usually one due later; but while Run's workers are all held (requests hanging until
// RequestTimeout), a pod waiting in their queue is taken from it to go first, as the
// probe. It claims the pod and sets the next probe. When every such pod's request is on
// its way, the probe is put off by one ProbeInterval (those requests tell on their own);
// with no such pod at all, it is disarmed until the next transport failure.
func (m *Manager) probeLocked(now time.Time, q *runQueue) *entry {
	if !m.unreachable || m.probeAt.IsZero() || now.Before(m.probeAt) {
		return nil
	}
	var p *entry
	busy := false
	for e := range m.dirty {
		if !e.transport || !e.pending() {
			continue
		}
		if e.inflight && !e.queued {
			busy = true
			continue
		}
		if p == nil || e.notBefore.Before(p.notBefore) {
			p = e
		}
	}
	switch {
	case p != nil:
		if p.queued {
			q.jobs = slices.DeleteFunc(q.jobs, func(e *entry) bool { return e == p })
			p.queued = false
			if len(q.jobs) == 0 {
				m.kickLoop() // as a worker taking the last one would
			}
		}
		p.inflight = true
		m.probeAt = now.Add(m.backoff.probeDelay())
	case busy:
		m.probeAt = now.Add(m.backoff.probeDelay())
	default:
		m.probeAt = time.Time{}
	}
	return p
}

// setBase records a server copy of e's pod (if newer than the one e has) and returns
// the newest copy e has: p, or one ObservePod adopted meanwhile.
func (m *Manager) setBase(log logr.Logger, e *entry, p *v1.Pod) *v1.Pod {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !e.gone {
		m.adoptBaseLocked(log, e, p)
	}
	return e.base
}

// drop forgets e because its pod is gone from the server or was recreated.
func (m *Manager) drop(log logr.Logger, e *entry, why SkipReason) {
	m.mu.Lock()
	m.dropLocked(e)
	m.mu.Unlock()
	log.V(2).Info("Dropping cached status", "pod", e.ref(), "podUID", e.uid, "reason", string(why))
	if f := m.obs.OnSkip; f != nil {
		f(SkipEvent{Pod: e.ref(), Reason: why})
	}
}

// logger is the logger of a method that takes ctx: ctx's, else Options.Logger.
func (m *Manager) logger(ctx context.Context) logr.Logger {
	if l, err := logr.FromContext(ctx); err == nil {
		return l
	}
	return m.log
}
