// Package podsim simulates the kubelet's pod worker and a container runtime for pods on a
// simulated node: from a pod, a behaviour profile, a seed and the time it yields the
// runtime facts that podstate.Generate turns into a pod status.
package podsim
