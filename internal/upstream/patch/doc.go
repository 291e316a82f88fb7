// Package patch holds the differential tests and side-by-side benchmarks of
// status.PatchBytes against the kubelet's own patch builder
// (k8s.io/kubernetes/pkg/util/pod.PatchPodStatus, which wraps the unexported
// preparePatchBytesForPodStatus).
package patch
