// Package fleet runs the fleet agent (examples/fleet/agent) against a real kube-apiserver
// v1.37.0 started in-process, and checks every pod version it writes against the
// kubelet's own condition generators (k8s.io/kubernetes/pkg/kubelet/status).
package fleet
