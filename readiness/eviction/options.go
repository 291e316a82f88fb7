package eviction

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Options describe the eviction request and the evaluation environment for
// [Decide]. The zero value is a plain eviction request for the pod with no
// delete options, no dry-run, the upstream health predicate and the zero time
// as Now (callers always pass the time they mean: nothing reads a clock).
type Options struct {
	// Now is the time the API server handles the request. It becomes the
	// pod's entry in the PDB's status.disruptedPods, the lastTransitionTime of
	// a DisruptionAllowed condition the handler changes, and the
	// lastTransitionTime of the DisruptionTarget condition.
	Now metav1.Time

	// EvictionName is metadata.name of the Eviction object in the request
	// body. The pod named in the URL is the pod passed to Decide; when this
	// name differs the server answers 400. Empty means the pod's name.
	EvictionName string

	// DeleteOptions is the Eviction object's deleteOptions (nil when the body
	// has none): dry-run, preconditions, grace period and so on.
	DeleteOptions *metav1.DeleteOptions

	// DryRun is the request's dryRun query parameter (CreateOptions.DryRun).
	// The only value the API server accepts is metav1.DryRunAll ("All").
	DryRun []string

	// IsPodReady decides whether a pod is healthy. Nil means
	// [conditions.IsPodReady], the upstream rule. Pass another predicate only for what-if analysis: the real
	// server always uses the reported Ready condition.
	IsPodReady func(*v1.Pod) bool

	// StrictUnknownPolicy makes an unrecognized unhealthyPodEvictionPolicy
	// value disallow the IfHealthyBudget shortcut for unhealthy pods, as the
	// policy/v1 API documentation asks of clients. False (the default) is
	// upstream parity: the server treats every value other than AlwaysAllow
	// like IfHealthyBudget. Validation keeps unknown values out of a real
	// server, so this matters only for objects built elsewhere.
	StrictUnknownPolicy bool
}
