// Package podstatetest generates random inputs for podstate.Generate, for property tests
// of code built on package podstate and for differential tests against the kubelet.
//
// The generators (Input and its parts: Pod, Container, Fact, State, Conditions,
// OldStatus, Sandboxes) produce pgregory.net/rapid values that look like what a node
// agent hands Generate: pods with init containers, sidecars, regular containers with and
// without their own restartPolicy and restartPolicyRules, probes, readiness gates and
// hostNetwork; server statuses with foreign and kubelet-owned conditions and every phase;
// previous statuses; sandboxes that are ready or not, in either network namespace, with
// and without an IP or a network status; and runtime facts in every container state
// (running, waiting, exited 0, 1, 42 or 137, unknown), some healthy, some restarting,
// some in an older sandbox. Options narrows them for properties that hold only for
// inputs a real runtime reports.
//
// Names are fixed so that failures read well: the pod is ns/p (UID uid-1), init
// containers are i0, i1, ..., regular containers c0, c1, ..., sandboxes sb-new (newest)
// and sb-old, and every time is T0.
//
// Both generator kits, this one and readinesstest, follow the same rules: a generator is a
// function named after what it draws, returning a *rapid.Generator built fresh on every
// call; readiness gates never name a condition type the kubelet owns; and Describe
// renders an input for failure messages, which Log writes through t.Logf so that a
// failing rapid property prints the input it drew.
//
// The package holds no state: every generator is built fresh by its function.
package podstatetest
