package status

import (
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podstatus/podstatus/features"
)

// DefaultSyncPeriod is the kubelet's status sync period: how often Run re-queues the pods
// whose terminal phase is held back while containers could run. Changes are sent when
// they are made and failed syncs are retried at their backoff deadline, not on this
// period; see the package documentation for what repairs drift.
const DefaultSyncPeriod = 10 * time.Second

// Options configures a Manager. The zero value is valid: real clock, 10 s sync period,
// v1.37.0 behaviour, no logging, no metrics, no running containers, the
// lastTransitionTime fix on.
type Options struct {
	// Clock is the time source for timestamps, backoff and the sync loop. Tests pass a
	// k8s.io/utils/clock/testing FakeClock. Default: the real clock.
	Clock clock.WithTicker
	// SyncPeriod is how often Run wakes up without a trigger, to re-queue held terminal
	// phases. Default DefaultSyncPeriod.
	SyncPeriod time.Duration
	// Logger receives the logs of a method whose context carries no logger (see the
	// package documentation for the levels).
	// Default: discard.
	Logger logr.Logger
	// Features selects version-dependent behaviour. Default: v1.37.0.
	Features features.Set
	// Observer receives the Manager's events, for metrics. Default: nil, no hooks.
	// The Manager copies *Observer in NewManager; later changes to it have no effect.
	Observer *Observer
	// CouldHaveRunningContainers reports whether some container of the pod (the server's
	// copy is passed) might still run. While it does, a terminal phase is not sent (the
	// kubelet's PodCouldHaveRunningContainers). It is asked only about pods whose statuses
	// come through SetPodStatus: for a pod stepped through SyncPod, the latest
	// SyncPodInput.CouldHaveRunningContainers answers. Default: always false.
	CouldHaveRunningContainers func(*v1.Pod) bool
	// Deleter, when set, deletes each pod object once the pod has a deletionTimestamp,
	// was terminated (TerminatePod, or SyncPod's Stopped) and its terminal status is on
	// the server: with grace period 0 and a UID precondition, right after the PATCH
	// that made the terminal status current, as the kubelet's status manager does
	// (canBeDeleted in pkg/kubelet/status/status_manager.go). Default: nil, the Manager
	// never deletes a pod. status/kubeclient's Client is a PodDeleter.
	Deleter PodDeleter
	// Workers is how many pods one sync sends at once. Default 1, as the kubelet (one
	// request at a time); raise it when the API server's latency, not its rate limit,
	// bounds throughput. Requests for one pod are never concurrent.
	Workers int
	// RequestTimeout bounds each GET and PATCH (a timed-out request is retried with
	// backoff like a 504). Zero means no bound beyond the context passed to Run or Sync.
	RequestTimeout time.Duration
	// Retry sets the backoff of failed syncs.
	Retry RetryOptions
	// UpstreamTransitionTimes turns off the fix for kubernetes#119514 and gives the
	// kubelet's behaviour exactly. With the fix (the default), the lastTransitionTime of
	// a kubelet-owned condition takes the server's copy into account: while the Status
	// agrees with the server's, the server's time is kept; when another writer (the node
	// lifecycle controller) flipped the Status after our last transition, flipping it
	// back gets a fresh time. The kubelet compares only with its own cache and so sends
	// its old time back, which rolls lastTransitionTime backwards.
	UpstreamTransitionTimes bool
}

// RetryOptions sets the per-pod exponential backoff after a failed sync (5xx, 429,
// timeouts and any other error but 404 and 409). The n-th consecutive failure waits
// min(Base·2^(n-1), Max), stretched by a random factor in [1, 1+Jitter), or the
// server's Retry-After when that is longer. A 409 Conflict refetches the pod and retries
// at once, up to MaxConflicts times in one sync. After transport failures, the
// server's first answer cuts the backoff short (RecoveryWindow, RecoveryRate,
// ProbeInterval).
type RetryOptions struct {
	// Base is the first delay. Default 500ms.
	Base time.Duration
	// Max caps the delay. Default 1 minute.
	Max time.Duration
	// Jitter is the maximum relative stretch; default 0.2. Negative means none.
	Jitter float64
	// Seed, when set, seeds the jitter's random source so that runs are reproducible
	// (tests, simulations): any value, 0 included, is a fixed seed. When nil (the
	// default) every Manager draws its own random seed in NewManager, so node agents that
	// lost the API server together retry at different instants instead of all at once:
	// the thundering herd jitter exists to prevent. It is a pointer, not a uint64 whose 0
	// means "random", so that asking for a fixed seed is always explicit and the zero
	// value of RetryOptions is the safe default.
	Seed *uint64
	// MaxConflicts is how many 409s one sync absorbs before backing off. Default 3.
	MaxConflicts int

	// RecoveryWindow governs the retry after an outage. A failure with no HTTP answer
	// (connection refused or reset, EOF, a request that timed out unanswered: a transport
	// failure) says nothing about the pod, only that the API server could not be reached.
	// When a later request of the Manager gets an HTTP answer (a success or any status
	// code), every pod whose last failure was a transport failure is retried promptly
	// instead of at its backoff deadline, and its failure count starts again: the Manager
	// draws a delay in [0, RecoveryWindow) from its own random source (so Managers that
	// see the server come back together do not retry together), then sends the pods one
	// after the other at RecoveryRate, earliest deadline first (a pod whose deadline is
	// already near waits for its turn too, so the retry is never a burst). A pod whose last failure
	// was an answer (4xx, 5xx, 429) keeps its backoff. Default 1 s. Negative turns the
	// rule and the probes (ProbeInterval) off: every failure waits its backoff.
	RecoveryWindow time.Duration
	// RecoveryRate is how many pods per second the Manager retries after the server
	// answers again (see RecoveryWindow), so that a node with many pods does not send
	// them all at once. Default 100, the kubelet's default API burst
	// (--kube-api-burst): a node's default 110 pods are retried in about a second.
	RecoveryRate float64
	// ProbeInterval bounds how long the API server can be back unnoticed. While the last
	// request got no HTTP answer, one pod whose last failure was a transport failure is
	// retried at least every ProbeInterval (stretched by Jitter), whatever its backoff:
	// its answer is what wakes the others. Without it, the first retry after an outage
	// would wait for the earliest backoff deadline, up to Max. Default 1 s.
	ProbeInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Workers <= 0 {
		o.Workers = 1
	}
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = DefaultSyncPeriod
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.CouldHaveRunningContainers == nil {
		o.CouldHaveRunningContainers = func(*v1.Pod) bool { return false }
	}
	if o.Retry.Base <= 0 {
		o.Retry.Base = 500 * time.Millisecond
	}
	if o.Retry.Max <= 0 {
		o.Retry.Max = time.Minute
	}
	if o.Retry.Max < o.Retry.Base {
		o.Retry.Max = o.Retry.Base
	}
	if o.Retry.Jitter == 0 {
		o.Retry.Jitter = 0.2
	}
	if o.Retry.Jitter < 0 {
		o.Retry.Jitter = 0
	}
	if o.Retry.MaxConflicts <= 0 {
		o.Retry.MaxConflicts = 3
	}
	if o.Retry.RecoveryWindow == 0 {
		o.Retry.RecoveryWindow = time.Second
	}
	if o.Retry.RecoveryRate <= 0 {
		o.Retry.RecoveryRate = 100
	}
	if o.Retry.ProbeInterval <= 0 {
		o.Retry.ProbeInterval = time.Second
	}
	return o
}
