// Package sim is the simulated node behind examples/simnode: it runs a set of pods through
// their lives — sandbox creation with delays and failures, init containers, a sidecar,
// readiness probes, a readiness gate set by a simulated load-balancer controller, a
// crash-looping container, a sandbox crash and recreation, a batch job that completes, and
// graceful termination — on podsim, the simulated container runtime the fleet agent
// serves (each lifecycle is a pod spec with sim.podstatus.io/ annotations), each pod
// stepped through status.Manager.SyncPod, which builds its status from the runtime facts
// and sends it to an API server.
//
// Time is a fake clock stepped one second at a time, so a run takes seconds and, for a
// given seed, prints the same timeline every time. The API server is anything that
// implements Cluster: the in-memory statustest.Server by default (see Memory), or a real
// cluster.
//
// It is a program's engine, not a library: shared by examples/simnode, its nested module
// examples/simnode/kube and the end-to-end test in internal/upstream/simnode, it has no
// compatibility promise and may change in any release. It lives beside its program, not
// under the root's internal/, so that the library's package graph has no arrow from a
// low-level directory up to status and podsim; an internal directory here
// (examples/simnode/internal/sim) would shut out internal/upstream/simnode.
package sim
