// Package readiness is the pure readiness engine: from a pod's spec, its sandboxes, its
// container statuses and its readiness-gate conditions it computes the four conditions
// the kubelet owns — PodReadyToStartContainers, Initialized, ContainersReady and Ready —
// with the same Status, Reason, Message and ObservedGeneration as the kubelet v1.37.0.
//
// Evaluate has no clock, no I/O and no globals; it never mutates its input, and on a ready
// pod it does not allocate. Explain returns, as data, why a pod is not ready. Apply writes
// a Result into a v1.PodStatus with the kubelet's lastTransitionTime rule.
//
// Behaviour that differs between Kubernetes versions is selected with WithFeatures; the
// default is v1.37.0.
package readiness
