// Package sandbox models the pod sandbox as a container runtime reports it and decides,
// the way the kubelet does, whether a new sandbox is needed and why.
//
// The decision drives the PodReadyToStartContainers condition (KEP-3085): the condition is
// True exactly when no new sandbox is needed.
package sandbox
