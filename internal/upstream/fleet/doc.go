// Package fleet runs the simulated kubelet (simkubelet, the fleet program's engine) against a real kube-apiserver
// v1.37.0 started in-process, and checks every pod version it writes against the
// kubelet's own condition generators (k8s.io/kubernetes/pkg/kubelet/status).
package fleet
