// Package promobserver exports a status.Manager's events as Prometheus metrics: a
// status.Observer backed by client_golang collectors.
//
// Metric names follow the kubelet's where the kubelet has one
// (pkg/kubelet/metrics/metrics.go, v1.37.0): kubelet_pod_status_sync_duration_seconds
// with the kubelet's buckets. The others have no kubelet counterpart and use the
// podstatus_ prefix:
//
//	kubelet_pod_status_sync_duration_seconds   histogram  time from a status change until the server has it
//	podstatus_status_changes_total             counter    status changes callers made (patches_total / changes_total: requests per change)
//	podstatus_status_patches_total{result}     counter    PATCHes of pods/status: result="success" or "error"
//	podstatus_status_patch_bytes               histogram  size of each PATCH body
//	podstatus_status_patch_duration_seconds    histogram  duration of each PATCH request
//	podstatus_status_skips_total{reason}       counter    syncs that sent nothing (Unchanged, NotFound, Recreated)
//	podstatus_status_conflicts_total           counter    409 Conflicts (refetched and retried)
//	podstatus_status_retries_total             counter    failed syncs that back off
//
// It lives in its own module so that the podstatus root module stays free of
// client_golang.
package promobserver

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podstatus/podstatus/status"
)

// Observer is a status.Observer that records the Manager's events in Prometheus
// collectors. Register it with a prometheus.Registerer (it is a prometheus.Collector) and
// pass it as status.Options.Observer. It is safe for concurrent use.
type Observer struct {
	syncDuration   prometheus.Histogram
	changes        prometheus.Counter
	patches        *prometheus.CounterVec
	patchBytes     prometheus.Histogram
	patchDuration  prometheus.Histogram
	skips          *prometheus.CounterVec
	conflicts      prometheus.Counter
	retries        prometheus.Counter
	patchesOK      prometheus.Counter
	patchesFailed  prometheus.Counter
	collectorsList []prometheus.Collector
}

var (
	_ status.Observer      = (*Observer)(nil)
	_ prometheus.Collector = (*Observer)(nil)
)

// SyncDurationBuckets are the kubelet's buckets of pod_status_sync_duration_seconds.
var SyncDurationBuckets = []float64{0.010, 0.050, 0.100, 0.500, 1, 5, 10, 20, 30, 45, 60}

// New returns an Observer with fresh, unregistered collectors.
func New() *Observer {
	o := &Observer{
		syncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet",
			Name:      "pod_status_sync_duration_seconds",
			Help:      "Duration in seconds to sync a pod status update. Measures time from detection of a change to pod status until the API is successfully updated for that pod, even if multiple intevening changes to pod status occur.",
			Buckets:   SyncDurationBuckets,
		}),
		changes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "podstatus", Subsystem: "status", Name: "changes_total",
			Help: "Changes of cached pod statuses made by SetPodStatus, TerminatePod, SetContainerReadiness and SetContainerStartup: each is one more status for the API server.",
		}),
		patches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "podstatus", Subsystem: "status", Name: "patches_total",
			Help: "PATCH requests of pods/status sent by the status manager, by result (success or error).",
		}, []string{"result"}),
		patchBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "podstatus", Subsystem: "status", Name: "patch_bytes",
			Help:    "Size in bytes of each PATCH body of pods/status.",
			Buckets: prometheus.ExponentialBuckets(128, 2, 8),
		}),
		patchDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "podstatus", Subsystem: "status", Name: "patch_duration_seconds",
			Help:    "Duration in seconds of each PATCH request of pods/status.",
			Buckets: prometheus.DefBuckets,
		}),
		skips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "podstatus", Subsystem: "status", Name: "skips_total",
			Help: "Syncs that ended without a PATCH, by reason (Unchanged, NotFound, Recreated).",
		}, []string{"reason"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "podstatus", Subsystem: "status", Name: "conflicts_total",
			Help: "409 Conflict answers to PATCHes of pods/status (the pod is refetched and the sync retried).",
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "podstatus", Subsystem: "status", Name: "retries_total",
			Help: "Failed syncs of a pod's status that back off before the next attempt.",
		}),
	}
	o.patchesOK = o.patches.WithLabelValues("success")
	o.patchesFailed = o.patches.WithLabelValues("error")
	o.collectorsList = []prometheus.Collector{o.syncDuration, o.changes, o.patches, o.patchBytes, o.patchDuration, o.skips, o.conflicts, o.retries}
	return o
}

// Describe implements prometheus.Collector.
func (o *Observer) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range o.collectorsList {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (o *Observer) Collect(ch chan<- prometheus.Metric) {
	for _, c := range o.collectorsList {
		c.Collect(ch)
	}
}

// OnChange implements status.Observer.
func (o *Observer) OnChange(status.PodRef) { o.changes.Inc() }

// OnPatch implements status.Observer.
func (o *Observer) OnPatch(_ status.PodRef, bytes int, took time.Duration, err error) {
	if err != nil {
		o.patchesFailed.Inc()
	} else {
		o.patchesOK.Inc()
	}
	o.patchBytes.Observe(float64(bytes))
	o.patchDuration.Observe(took.Seconds())
}

// OnSkip implements status.Observer.
func (o *Observer) OnSkip(_ status.PodRef, reason status.SkipReason) {
	o.skips.WithLabelValues(string(reason)).Inc()
}

// OnConflict implements status.Observer.
func (o *Observer) OnConflict(status.PodRef) { o.conflicts.Inc() }

// OnRetry implements status.Observer.
func (o *Observer) OnRetry(status.PodRef, int, time.Duration, error) { o.retries.Inc() }

// OnSynced implements status.Observer.
func (o *Observer) OnSynced(_ status.PodRef, latency time.Duration) {
	o.syncDuration.Observe(latency.Seconds())
}
