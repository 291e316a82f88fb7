// Package promobserver exports a status.Manager's events as Prometheus metrics: a
// prometheus.Collector whose Observer method gives the status.Observer hooks that feed it.
//
// A metric carries the kubelet's name only where its semantics are the kubelet's
// (pkg/kubelet/metrics/metrics.go, v1.37.0): kubelet_pod_status_sync_duration_seconds,
// with the kubelet's buckets, is the time from a status change until the API server has
// it, as the kubelet measures it: like the kubelet's syncPod
// (pkg/kubelet/status/status_manager.go), which observes it after PatchPodStatus whether
// or not a patch was sent, it includes syncs that found the server up to date (counted
// apart by podstatus_status_skips_total{reason="Unchanged"}), so that the kubelet's
// dashboards read the same thing. A pod's first status that equals the server's copy (a
// pod adopted after a restart) is no change (status.Observer.OnChange). The others have no kubelet counterpart and are named
// <Namespace>_status_..., Namespace being "podstatus" by default:
//
//	kubelet_pod_status_sync_duration_seconds   histogram  time from a status change until the server has it
//	podstatus_status_changes_total             counter    status changes callers made (patches_total / changes_total: requests per change)
//	podstatus_status_patches_total{result}     counter    PATCHes of pods/status: result="success" or "error"
//	podstatus_status_patch_bytes               histogram  size of each PATCH body
//	podstatus_status_patch_duration_seconds    histogram  duration of each PATCH request
//	podstatus_status_skips_total{reason}       counter    syncs that sent nothing (Unchanged, NotFound, Recreated)
//	podstatus_status_conflicts_total           counter    409 Conflicts (refetched and retried)
//	podstatus_status_retries_total             counter    failed syncs that back off
//	podstatus_status_recoveries_total          counter    times the API server answered again after transport failures
//	podstatus_status_recovered_pods_total      counter    pods those answers rescheduled (RetryOptions.RecoveryWindow)
//
// Every metric carries Options.ConstLabels: two Managers register in one registry when
// their ConstLabels differ in value (say {"manager": "a"} and {"manager": "b"}).
//
// It lives in its own module so that the podstatus root module stays free of
// client_golang.
package promobserver

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/podstatus/podstatus/status"
)

// DefaultNamespace is the namespace (metric-name prefix) of the metrics that have no
// kubelet counterpart when Options.Namespace is empty.
const DefaultNamespace = "podstatus"

// Options configures the metrics of New. The zero value gives the names listed in the
// package documentation, without labels.
type Options struct {
	// Namespace prefixes the names of the metrics that have no kubelet counterpart:
	// <Namespace>_status_changes_total and so on. Default DefaultNamespace. The
	// kubelet-named sync-duration histogram keeps its name whatever the namespace, so
	// that the kubelet's dashboards read it.
	Namespace string
	// ConstLabels are added to every metric. Managers that register in one registry
	// must use the same label names with different values.
	ConstLabels prometheus.Labels
}

// Metrics records a status.Manager's events in Prometheus collectors. Register it with a
// prometheus.Registerer (it is a prometheus.Collector) and pass Observer() as
// status.Options.Observer. It is safe for concurrent use.
type Metrics struct {
	syncDuration   prometheus.Histogram
	changes        prometheus.Counter
	patches        *prometheus.CounterVec
	patchBytes     prometheus.Histogram
	patchDuration  prometheus.Histogram
	skips          *prometheus.CounterVec
	conflicts      prometheus.Counter
	retries        prometheus.Counter
	recoveries     prometheus.Counter
	recoveredPods  prometheus.Counter
	patchesOK      prometheus.Counter
	patchesFailed  prometheus.Counter
	collectorsList []prometheus.Collector
}

var _ prometheus.Collector = (*Metrics)(nil)

// SyncDurationBuckets returns the kubelet's buckets of pod_status_sync_duration_seconds.
func SyncDurationBuckets() []float64 {
	return []float64{0.010, 0.050, 0.100, 0.500, 1, 5, 10, 20, 30, 45, 60}
}

// New returns Metrics with fresh, unregistered collectors named as opts says.
func New(opts Options) *Metrics {
	ns := opts.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	labels := opts.ConstLabels
	o := &Metrics{
		syncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet",
			Name:      "pod_status_sync_duration_seconds",
			// The kubelet's help text, without its typo ("intevening").
			Help:        "Duration in seconds to sync a pod status update. Measures time from detection of a change to pod status until the API is successfully updated for that pod, even if multiple intervening changes to pod status occur.",
			Buckets:     SyncDurationBuckets(),
			ConstLabels: labels,
		}),
		changes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "status", Name: "changes_total", ConstLabels: labels,
			Help: "Changes of cached pod statuses made by SetPodStatus, TerminatePod, SetContainerReadiness and SetContainerStartup: each is one more status for the API server.",
		}),
		patches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "status", Name: "patches_total", ConstLabels: labels,
			Help: "PATCH requests of pods/status sent by the status manager, by result (success or error).",
		}, []string{"result"}),
		patchBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: "status", Name: "patch_bytes", ConstLabels: labels,
			Help:    "Size in bytes of each PATCH body of pods/status.",
			Buckets: prometheus.ExponentialBuckets(128, 2, 8),
		}),
		patchDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: "status", Name: "patch_duration_seconds", ConstLabels: labels,
			Help:    "Duration in seconds of each PATCH request of pods/status.",
			Buckets: prometheus.DefBuckets,
		}),
		skips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "status", Name: "skips_total", ConstLabels: labels,
			Help: "Syncs that ended without a PATCH, by reason (Unchanged, NotFound, Recreated).",
		}, []string{"reason"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "status", Name: "conflicts_total", ConstLabels: labels,
			Help: "409 Conflict answers to PATCHes of pods/status (the pod is refetched and the sync retried).",
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "status", Name: "retries_total", ConstLabels: labels,
			Help: "Failed syncs of a pod's status that back off before the next attempt.",
		}),
		recoveries: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "status", Name: "recoveries_total", ConstLabels: labels,
			Help: "Times the API server answered again after requests got no HTTP answer (refused, reset, timed out).",
		}),
		recoveredPods: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: "status", Name: "recovered_pods_total", ConstLabels: labels,
			Help: "Pods whose last failure got no HTTP answer, rescheduled (spread and paced) when the API server answered again.",
		}),
	}
	o.patchesOK = o.patches.WithLabelValues("success")
	o.patchesFailed = o.patches.WithLabelValues("error")
	o.collectorsList = []prometheus.Collector{o.syncDuration, o.changes, o.patches, o.patchBytes, o.patchDuration, o.skips, o.conflicts, o.retries, o.recoveries, o.recoveredPods}
	return o
}

// Describe implements prometheus.Collector.
func (o *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range o.collectorsList {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (o *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range o.collectorsList {
		c.Collect(ch)
	}
}

// Observer returns the hooks that record a Manager's events in o: pass it as
// status.Options.Observer, alone or combined with others by status.Observers.
func (o *Metrics) Observer() *status.Observer {
	return &status.Observer{
		OnChange: func(status.ChangeEvent) { o.changes.Inc() },
		OnPatch: func(ev status.PatchEvent) {
			if ev.Err != nil {
				o.patchesFailed.Inc()
			} else {
				o.patchesOK.Inc()
			}
			o.patchBytes.Observe(float64(ev.Bytes))
			o.patchDuration.Observe(ev.Took.Seconds())
		},
		OnSkip:     func(ev status.SkipEvent) { o.skips.WithLabelValues(string(ev.Reason)).Inc() },
		OnConflict: func(status.ConflictEvent) { o.conflicts.Inc() },
		OnRetry:    func(status.RetryEvent) { o.retries.Inc() },
		OnSynced:   func(ev status.SyncedEvent) { o.syncDuration.Observe(ev.Latency.Seconds()) },
		OnRecovery: func(ev status.RecoveryEvent) {
			o.recoveries.Inc()
			o.recoveredPods.Add(float64(ev.Pods))
		},
	}
}
