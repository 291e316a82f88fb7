// Package conditions works on lists of pod conditions the way the kubelet does: find one,
// set one with the lastTransitionTime rule, tell which condition types the kubelet owns
// or shares, and validate custom condition types and readiness gates.
//
// The lastTransitionTime rule is the one the kubelet's status manager applies: the time
// changes only when a condition's Status changes (or the condition is new); a change of
// Reason, Message or ObservedGeneration keeps the old time.
package conditions
