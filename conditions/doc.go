// Package conditions works on lists of pod conditions the way the kubelet does: find one,
// tell which condition types the kubelet owns or shares with other writers, read a pod's
// Ready condition as the eviction API does, and validate custom condition types and
// readiness gates as the API server does.
//
// Writing a condition with the kubelet's lastTransitionTime rule (a new time only when the
// Status changes) is done for you by readiness.Apply, podstate.Stamp and status.Manager.
package conditions
