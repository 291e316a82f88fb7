package status

import (
	"encoding/json"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
)

// PodRef names the pod an event or a log line is about. As a logged value it is what
// klog.KObj makes of the pod: it prints as "namespace/name" and marshals (JSON, and
// logr.Marshaler) as {"name":...,"namespace":...}; the UID is logged separately under
// the key "podUID".
type PodRef struct {
	Namespace, Name string
	UID             types.UID
}

// String returns "namespace/name", or "name" when the namespace is empty.
func (r PodRef) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// objectRef is klog.ObjectRef's shape, without importing klog.
type objectRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// MarshalLog implements logr.Marshaler: structured log sinks see {name, namespace}.
func (r PodRef) MarshalLog() any { return objectRef{Name: r.Name, Namespace: r.Namespace} }

// MarshalJSON marshals r as {"name":...,"namespace":...}, as klog.ObjectRef does.
func (r PodRef) MarshalJSON() ([]byte, error) {
	return json.Marshal(objectRef{Name: r.Name, Namespace: r.Namespace})
}

var _ logr.Marshaler = PodRef{}

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

// Observer receives the Manager's events, for metrics and tracing: a struct of optional
// hooks, as net/http/httptrace.ClientTrace and client-go's
// cache.ResourceEventHandlerFuncs are. Set only the hooks you need; a nil hook is not
// called and costs nothing. Each hook takes one event struct, so hooks and event fields
// can be added without breaking callers. Combine several with Observers.
//
// Hooks are called without the Manager's lock held, from the goroutine doing the work
// (the caller's for OnChange, a sync's for the others), possibly from several goroutines
// at once when Options.Workers > 1. They must return quickly and must not call Sync.
type Observer struct {
	// OnChange follows a SetPodStatus, TerminatePod, SetContainerReadiness or
	// SetContainerStartup that changed a kubelet-owned field of the cached status: one
	// more status for the server. Counting these against OnPatch gives requests per
	// status change. Not reported: a pod's first status when it equals the server's
	// copy on every kubelet-owned field (a pod adopted after a restart, which costs no
	// PATCH), a forced new version of the same status (as
	// SetPodStatus makes for a pod with a deletionTimestamp, like the kubelet), and the
	// Ready changes the Manager derives itself when another controller flips a
	// readiness gate.
	OnChange func(ChangeEvent)
	// OnPatch follows every PATCH request, successful or not.
	OnPatch func(PatchEvent)
	// OnSkip follows a sync that ended without a PATCH.
	OnSkip func(SkipEvent)
	// OnConflict follows a 409 Conflict: the Manager refetches the pod and tries again.
	OnConflict func(ConflictEvent)
	// OnRetry follows a failed sync that backs off.
	OnRetry func(RetryEvent)
	// OnSynced follows a sync that brought the server up to date with every change
	// cached for the pod.
	OnSynced func(SyncedEvent)
	// OnRecovery follows a request that got an HTTP answer after requests that got none
	// (the API server is reachable again): the pods whose last failure was a transport
	// failure were rescheduled (see RetryOptions.RecoveryWindow).
	OnRecovery func(RecoveryEvent)
}

// ChangeEvent is passed to Observer.OnChange.
type ChangeEvent struct {
	Pod PodRef
}

// PatchEvent is passed to Observer.OnPatch.
type PatchEvent struct {
	Pod PodRef
	// Bytes is the size of the patch body.
	Bytes int
	// Took is how long the request took, on Options.Clock.
	Took time.Duration
	// Err is the request's error, nil on success.
	Err error
}

// SkipEvent is passed to Observer.OnSkip.
type SkipEvent struct {
	Pod    PodRef
	Reason SkipReason
}

// ConflictEvent is passed to Observer.OnConflict.
type ConflictEvent struct {
	Pod PodRef
}

// RetryEvent is passed to Observer.OnRetry.
type RetryEvent struct {
	Pod PodRef
	// Attempt counts the consecutive failed syncs of this pod, from 1.
	Attempt int
	// Delay is the backoff before the background loop tries again.
	Delay time.Duration
	// Err is the sync's error.
	Err error
}

// SyncedEvent is passed to Observer.OnSynced.
type SyncedEvent struct {
	Pod PodRef
	// Latency is the time since the oldest change the sync carried was made, on
	// Options.Clock (the kubelet's pod_status_sync_duration).
	Latency time.Duration
}

// RecoveryEvent is passed to Observer.OnRecovery.
type RecoveryEvent struct {
	// Pods is how many pods were rescheduled; 0 when none was waiting.
	Pods int
	// First and Last are how long after the answer the first and the last of them are
	// due, on Options.Clock.
	First, Last time.Duration
}

// Observers returns an Observer that calls the hooks of each of obs, in order. Nil
// Observers and nil hooks are skipped; a hook none of obs sets stays nil, so it still
// costs nothing.
func Observers(obs ...*Observer) *Observer {
	var out Observer
	out.OnChange = fanOut(obs, func(o *Observer) func(ChangeEvent) { return o.OnChange })
	out.OnPatch = fanOut(obs, func(o *Observer) func(PatchEvent) { return o.OnPatch })
	out.OnSkip = fanOut(obs, func(o *Observer) func(SkipEvent) { return o.OnSkip })
	out.OnConflict = fanOut(obs, func(o *Observer) func(ConflictEvent) { return o.OnConflict })
	out.OnRetry = fanOut(obs, func(o *Observer) func(RetryEvent) { return o.OnRetry })
	out.OnSynced = fanOut(obs, func(o *Observer) func(SyncedEvent) { return o.OnSynced })
	out.OnRecovery = fanOut(obs, func(o *Observer) func(RecoveryEvent) { return o.OnRecovery })
	return &out
}

// fanOut combines the non-nil hooks hook picks from obs into one (nil if there are none).
func fanOut[E any](obs []*Observer, hook func(*Observer) func(E)) func(E) {
	var fs []func(E)
	for _, o := range obs {
		if o == nil {
			continue
		}
		if f := hook(o); f != nil {
			fs = append(fs, f)
		}
	}
	switch len(fs) {
	case 0:
		return nil
	case 1:
		return fs[0]
	}
	return func(ev E) {
		for _, f := range fs {
			f(ev)
		}
	}
}
