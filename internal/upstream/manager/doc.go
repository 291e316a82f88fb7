// Package manager compares podstatus's status.Manager with the kubelet v1.37.0's own
// status manager (k8s.io/kubernetes/pkg/kubelet/status), end to end, against client-go
// fake clientsets.
//
// The tests (sequence_test.go) drive both managers through the same seeded random
// operation sequences: SetPodStatus along legal container lifecycles, readiness and
// startup flips, TerminatePod, readiness-gate conditions written on the server by another
// controller, and sync points. At every sync point the two servers' pod statuses must
// be equal, timestamps aside, and the request counts of both are reported. The
// benchmarks (bench_test.go) time the same work side by side.
//
// Only exported upstream API is used: the kubelet's manager is started with Start and
// its asynchronous sync is awaited through the fake clientset's actions. The package
// has no non-test code beyond this documentation.
package manager
