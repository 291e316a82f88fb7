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
// It is internal: a program's engine, shared by examples/simnode, its nested module
// examples/simnode/kube and the end-to-end test in internal/upstream, not a library with
// a compatibility promise.
package sim
