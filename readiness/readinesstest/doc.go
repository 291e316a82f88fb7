// Package readinesstest helps property-test readiness rules built on package readiness.
//
// It has two halves.
//
// The generators (Pod, ContainerStatuses, Sandboxes, GateConditions, Phase, OldStatus,
// Features, and the whole-input generators Input, ReadyInput, FaultyInput and
// RandomInput) produce pgregory.net/rapid values that look like what a kubelet sees: pods
// with init containers, sidecars (restartable init containers), regular and ephemeral
// containers and readiness gates; container statuses that are present, missing,
// duplicated, misplaced, nil or empty; sandboxes that are ready, not ready, in the wrong
// network namespace or without an IP; readiness-gate conditions that are missing, True,
// False, Unknown or empty; and old statuses with and without observedGeneration. Input is
// biased so that the interesting cases are common: about four inputs in ten are fully
// ready, three in ten have exactly one thing wrong (see Fault), and the rest are noise.
//
// The checks (Invariants, CheckInvariants, CheckPure) state what must hold for any
// Evaluate result, whatever the input: Ready is True exactly when ContainersReady is True
// and every readiness gate is True; a finished pod is never ready; a pod without init
// containers is initialized; Ready copies ContainersReady's reason and message when
// containers are not ready; every condition has the right Type; Evaluate does not mutate
// its input and is deterministic.
//
// A user who writes a rule on top of readiness (a load balancer that only sends traffic
// to Ready pods, an eviction policy, a node agent's own bookkeeping) draws inputs from
// these generators inside rapid.Check, runs readiness.Evaluate, calls CheckInvariants,
// and then asserts the rule. See the package example.
//
// Both generator kits, this one and podstatetest, follow the same rules: a generator is a
// function named after what it draws, returning a *rapid.Generator built fresh on every
// call; readiness gates never name a condition type the kubelet owns; and Describe
// renders an input for failure messages, which Log writes through t.Logf so that a
// failing rapid property prints the input it drew.
//
// The package holds no state: every generator is built fresh by its function and every
// check is a pure function of its arguments.
package readinesstest
