package vkstatus

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podstatus/podstatus/status"
)

// SyncPod is the provider's status step for one pod: call it whenever the runtime's facts
// about the pod change and on every new server copy of the pod, with in.Pod the
// newest copy from the informer. It runs status.Manager.SyncPod (podstate.Generate, the
// Manager's acceptance rules, TerminatePod once in.Stopped is reported, the
// UID-preconditioned delete once a deleted pod's terminal status is on the server) and
// returns a copy of in.Pod carrying the status the Manager accepted: what the
// provider hands to virtual-kubelet's NotifyPods callback and returns from GetPodStatus.
// From then on UpdateStatus leaves the pod's status to SyncPod. It logs with ctx's
// logger, else as UpdateStatus does.
//
// The error is status.Manager.SyncPod's (a *podstatus.InputError for input it cannot use,
// such as a nil in.Pod; a *status.TransitionError for a status it rejects), wrapped.
func (c *Client) SyncPod(ctx context.Context, in status.SyncPodInput) (*v1.Pod, error) {
	if _, err := c.mgr.SyncPod(c.logCtx(ctx), in); err != nil {
		return nil, fmt.Errorf("vkstatus: SyncPod: %w", err)
	}
	pod := in.Pod
	c.mu.Lock()
	key := pod.Namespace + "/" + pod.Name
	st := c.known[key]
	if st == nil || st.pod.UID != pod.UID {
		st = &podState{pod: pod, refLabels: pod.Labels, refAnnotations: pod.Annotations}
		c.known[key] = st
	}
	st.synced = true
	c.mu.Unlock()
	out := pod.DeepCopy()
	if s, ok := c.mgr.GetPodStatus(pod.UID); ok {
		out.Status = s
	}
	return out, nil
}

// GetPodStatus returns a copy of the status the Manager holds for the pod with that UID,
// for a provider's GetPodStatus, and false when it has none: status.Manager.GetPodStatus.
func (c *Client) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	return c.mgr.GetPodStatus(uid)
}
