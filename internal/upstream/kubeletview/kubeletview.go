// Package kubeletview converts podstatus's runtime facts into the kubelet's own runtime
// types (k8s.io/kubernetes/pkg/kubelet/container and the CRI), so that the tests of this
// module can feed the same facts to the kubelet v1.37.0's generators and to podstatus.
package kubeletview

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/podstatus/podstatus/sandbox"
)

// PodStatus converts our sandboxes into the kubelet's runtime view: a
// kubecontainer.PodStatus whose SandboxStatuses are CRI PodSandboxStatus values, newest
// first. With sparse set, a pod-network sandbox carries no Linux status at all (the CRI
// getters then default to POD), as some runtimes report it.
func PodStatus(pod *v1.Pod, sandboxes []sandbox.Status, sparse bool) *kubecontainer.PodStatus {
	ps := &kubecontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	for _, s := range sandboxes {
		st := &runtimeapi.PodSandboxStatus{
			Id:        s.ID,
			Metadata:  &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: s.Attempt},
			State:     runtimeapi.PodSandboxState_SANDBOX_NOTREADY,
			CreatedAt: s.CreatedAt.UnixNano(),
		}
		if s.Ready {
			st.State = runtimeapi.PodSandboxState_SANDBOX_READY
		}
		mode := runtimeapi.NamespaceMode_POD
		if s.HostNetwork {
			mode = runtimeapi.NamespaceMode_NODE
		}
		if s.HostNetwork || !sparse {
			st.Linux = &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
				Options: &runtimeapi.NamespaceOption{Network: mode, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD},
			}}
		}
		if !s.NoNetworkStatus {
			st.Network = &runtimeapi.PodSandboxNetworkStatus{Ip: s.IP}
		}
		ps.SandboxStatuses = append(ps.SandboxStatuses, st)
	}
	return ps
}
