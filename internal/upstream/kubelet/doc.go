// Package kubelet holds the differential tests and side-by-side benchmarks that run
// podstatus and the kubelet's own k8s.io/kubernetes/pkg/kubelet/status (v1.37.0) on the
// same inputs. It has no non-test code.
package kubelet
