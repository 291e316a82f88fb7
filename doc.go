// Package podstatus is the root of podstatus, the kubelet's pod-status job as an
// importable library. This package holds what every package of the module shares: the
// input-error model (ErrInvalidInput, InputError). The work is done in its subpackages:
//
//   - readiness: the pure readiness engine — PodReadyToStartContainers, Initialized,
//     ContainersReady and Ready, byte for byte as the kubelet v1.37.0 computes them;
//   - podstate: the whole v1.PodStatus a kubelet reports, from runtime facts;
//   - status: the status manager — a cache of each pod's status, the kubelet-owned diff,
//     the merge with the server's copy and the minimal strategic-merge PATCH; SyncPod is
//     the kubelet's per-pod status step for node agents;
//   - conditions, sandbox, features: condition lists, the pod sandbox decision, and the
//     version-dependent behaviour as a value;
//   - podsim: a simulated container runtime that yields the runtime facts podstate reads;
//   - readiness/eviction and readiness/nodegate (experimental): the eviction API's answer
//     under PodDisruptionBudgets (KEP-3017) and node readiness gates.
//
// CONTRIBUTING.md in the repository states the conventions every package follows: how
// time, features, options and errors are passed, how logging and lifecycles work.
package podstatus
