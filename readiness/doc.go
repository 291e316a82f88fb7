// Package readiness is the pure readiness engine: from a pod's spec, its sandboxes, its
// container statuses and its readiness-gate conditions it computes the four conditions
// the kubelet owns — PodReadyToStartContainers, Initialized, ContainersReady and Ready —
// with the same Status, Reason, Message and ObservedGeneration as the kubelet v1.37.0.
//
// Evaluate has no clock, no I/O and no globals; it never mutates its input, and on a ready
// pod it does not allocate. Explain returns, as data, why a pod is not ready. Apply writes
// a Result into a v1.PodStatus with the kubelet's lastTransitionTime rule.
//
// Behaviour that differs between Kubernetes versions is selected with the Features field of
// Input and PhaseInput (a features.Set); its zero value is v1.37.0. Malformed input (a nil
// pod, two containers of one name) is the one error, a *podstatus.InputError (it matches
// podstatus.ErrInvalidInput), wrapped with the function's name: "readiness: Evaluate: ...".
package readiness
