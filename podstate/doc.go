// Package podstate builds the whole v1.PodStatus a kubelet would report for a pod, from the
// pod, its previous status and runtime facts (sandboxes, pod and host IPs, container states,
// probe results), the way the kubelet v1.37.0's generateAPIPodStatus does: the phase (which
// never leaves a terminal phase), the pod and host IPs, the container statuses with Ready
// and Started set as the prober sets them, and the conditions in the kubelet's exact order,
// foreign conditions first.
//
// It is for node agents that are not a kubelet (virtual-kubelet providers, simulators of
// many nodes, test harnesses): they know what runs, and need the status the API server
// should see. Generate is pure: no clock, no I/O, no globals, and it never mutates its
// input. The result goes straight into the status manager (status.Manager.SetPodStatus),
// which, like the kubelet's, sets lastTransitionTime, startTime and observedGeneration.
// Without a manager, Stamp does that step (the same code as the Manager's) with the time
// in Input.Now.
//
// What Generate takes as given rather than deriving: the container runtime's conversion of
// CRI records into container states (each Container fact is already API-shaped; Generate
// only fills in the containers the runtime does not report, as the kubelet does), the
// pod's QoS class (copied from the server's status, where the API server set it), the
// resize conditions (Input.Resize), eviction decisions (Input.Eviction) and the pod
// cgroup's values (Input.PodCgroup, read back by the node; Generate does the kubelet's
// conversion of them into status.resources).
package podstate
