package simkubelet

import (
	"unique"

	v1 "k8s.io/api/core/v1"
)

// internPod replaces the strings of p that repeat from pod to pod (namespace, node,
// images, container names, condition types and reasons, policies, IPs of the node…)
// by one canonical copy each (unique.Make). A decoded pod holds a fresh allocation for
// every string it carries, so 10,000 cached pods would otherwise hold 10,000 copies of
// "ContainersReady", of their image and of their node's name. unique's table is weak:
// a string no pod uses any more is collected.
//
// Names, UIDs, resourceVersions, pod IPs and container IDs differ per pod and are left
// alone. p must be the caller's own object (a fresh decode), not yet shared with
// another reader: internPod writes to it, nested slices included.
func internPod(p *v1.Pod) {
	internObject(p)
	internSpec(&p.Spec)
}

// internObject is internPod for the metadata and status of p, not its spec (which
// decodePod may share among pods: see shares).
func internObject(p *v1.Pod) {
	in(&p.Namespace)
	in(&p.GenerateName)
	internStatus(&p.Status)
}

// internSpec is internPod for a spec.
func internSpec(s *v1.PodSpec) {
	in(&s.NodeName)
	in(&s.SchedulerName)
	in(&s.ServiceAccountName)
	in(&s.DeprecatedServiceAccount)
	in(&s.RestartPolicy)
	in(&s.DNSPolicy)
	in(&s.PriorityClassName)
	for _, list := range [][]v1.Container{s.InitContainers, s.Containers} {
		for i := range list {
			c := &list[i]
			in(&c.Name)
			in(&c.Image)
			in(&c.ImagePullPolicy)
			in(&c.TerminationMessagePath)
			in(&c.TerminationMessagePolicy)
			for j := range c.VolumeMounts {
				in(&c.VolumeMounts[j].Name)
				in(&c.VolumeMounts[j].MountPath)
			}
		}
	}
	for i := range s.Tolerations {
		t := &s.Tolerations[i]
		in(&t.Key)
		in(&t.Operator)
		in(&t.Value)
		in(&t.Effect)
	}
}

// internStatus is internPod for a status.
func internStatus(st *v1.PodStatus) {
	in(&st.Phase)
	in(&st.QOSClass)
	in(&st.HostIP)
	for i := range st.HostIPs {
		in(&st.HostIPs[i].IP)
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		in(&c.Type)
		in(&c.Status)
		in(&c.Reason)
		in(&c.Message)
	}
	for _, list := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			c := &list[i]
			in(&c.Name)
			in(&c.Image)
			in(&c.ImageID)
			if w := c.State.Waiting; w != nil {
				in(&w.Reason)
			}
			if t := c.State.Terminated; t != nil {
				in(&t.Reason)
			}
			if t := c.LastTerminationState.Terminated; t != nil {
				in(&t.Reason)
			}
		}
	}
}

// in makes *s its canonical copy.
func in[S ~string](s *S) {
	if *s != "" {
		*s = S(unique.Make(string(*s)).Value())
	}
}
