// Package features describes the pod-status behaviours that changed between Kubernetes
// versions, as a plain value instead of the kubelet's global feature gates.
//
// The zero Set is the behaviour of the kubelet v1.37.0 with its default gates. Each field
// switches one behaviour back to what an older kubelet (or one with the gate turned off)
// does, so that a node agent imitating an older kubelet, or a test pinning a version, can
// say so explicitly. V1_34 returns the set that matches the kubelet v1.34.
package features
