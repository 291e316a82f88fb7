package status

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// PodRef names the pod an Observer event is about.
type PodRef struct {
	Namespace, Name string
	UID             types.UID
}

// SkipReason says why a sync of a pod sent no PATCH.
type SkipReason string

const (
	// SkipUnchanged: the merged status equals the server's; nothing to send (the
	// kubelet's "status is up-to-date").
	SkipUnchanged SkipReason = "Unchanged"
	// SkipNotFound: the pod is gone from the server; its cached status was dropped.
	SkipNotFound SkipReason = "NotFound"
	// SkipRecreated: the server's pod of that name has another UID (deleted and
	// recreated); the cached status of the old pod was dropped.
	SkipRecreated SkipReason = "Recreated"
)

// Observer receives the Manager's events, for metrics. Calls are made without the
// Manager's lock held, from the goroutine doing the sync, and must return quickly. Embed
// NopObserver to implement only some of the methods.
type Observer interface {
	// OnChange follows a SetPodStatus, TerminatePod, SetContainerReadiness or
	// SetContainerStartup that changed a kubelet-owned field of the cached status: one
	// more status for the server. Counting these against OnPatch gives requests per
	// status change. Not reported: a forced new version of the same status (as
	// SetPodStatus makes for a pod with a deletionTimestamp, like the kubelet), and the
	// Ready changes the Manager derives itself when another controller flips a
	// readiness gate.
	OnChange(pod PodRef)
	// OnPatch follows every PATCH request: the patch size, how long the request took,
	// and its error (nil on success).
	OnPatch(pod PodRef, bytes int, took time.Duration, err error)
	// OnSkip follows a sync that ended without a PATCH, with the reason.
	OnSkip(pod PodRef, reason SkipReason)
	// OnConflict follows a 409 Conflict: the Manager refetches the pod and tries again.
	OnConflict(pod PodRef)
	// OnRetry follows a failed sync: attempt counts the consecutive failures of this pod
	// and delay is the backoff before the background loop tries again.
	OnRetry(pod PodRef, attempt int, delay time.Duration, err error)
	// OnSynced follows a sync that brought the server up to date, with the time since
	// the oldest change it carried was made (the kubelet's pod_status_sync_duration).
	OnSynced(pod PodRef, latency time.Duration)
}

// NopObserver is an Observer that ignores every event.
type NopObserver struct{}

// OnChange implements Observer.
func (NopObserver) OnChange(PodRef) {}

// OnPatch implements Observer.
func (NopObserver) OnPatch(PodRef, int, time.Duration, error) {}

// OnSkip implements Observer.
func (NopObserver) OnSkip(PodRef, SkipReason) {}

// OnConflict implements Observer.
func (NopObserver) OnConflict(PodRef) {}

// OnRetry implements Observer.
func (NopObserver) OnRetry(PodRef, int, time.Duration, error) {}

// OnSynced implements Observer.
func (NopObserver) OnSynced(PodRef, time.Duration) {}
