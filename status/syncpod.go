package status

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podstatus/podstatus/podstate"
)

// PodDeleter deletes pod objects for the Manager once their terminal status is on the
// server (see Options.Deleter).
type PodDeleter interface {
	// DeletePod deletes the pod with grace period 0 and a precondition on its UID, as the
	// kubelet's status manager does (metav1.NewUIDPreconditions), so that a pod recreated
	// under the same name is never deleted. Errors must be apimachinery
	// *errors.StatusError values (or wrap them): a 404 means the pod is already gone and a
	// 409 that the name now belongs to another pod; both end the Manager's work on the pod.
	DeletePod(ctx context.Context, namespace, name string, uid types.UID) error
}

// SyncPodInput is what SyncPod reads: the newest server copy of one pod and what the
// node's runtime and pod worker report about it.
type SyncPodInput struct {
	// Pod is the newest copy of the pod the caller has from the API server (an
	// informer's). Required.
	Pod *v1.Pod
	// Runtime is what the runtime reports about the pod: sandboxes, IPs, containers, and
	// whether the pod worker has decided the pod is terminal (or evicted it). The status
	// is generated from it with podstate.Generate, on top of the status this Manager last
	// accepted, with Options.Features.
	Runtime podstate.Runtime
	// Stopped reports that the pod worker has finished with the pod: the pod is terminal
	// (Runtime.Terminal) and none of its containers runs or will run again. The kubelet
	// then calls its status manager's TerminatePod (SyncTerminatingPod in
	// pkg/kubelet/kubelet.go); SyncPod does the same, once per pod.
	Stopped bool
	// CouldHaveRunningContainers reports that some container of the pod might still run
	// (the kubelet's PodCouldHaveRunningContainers, pkg/kubelet/kubelet_pods.go): while it
	// does, the Manager holds back a terminal phase and sends the rest of the status. The
	// latest SyncPod's value stands until the next; for pods stepped through SyncPod,
	// Options.CouldHaveRunningContainers is not asked. podsim.Pod's method of the same
	// name answers it for a simulated runtime.
	CouldHaveRunningContainers bool
}

// SyncPod is the kubelet's per-pod status step, for a node agent that is not a kubelet:
// one call whenever the runtime's facts about a pod change or a new copy of the pod
// arrives from the API server (a watch event of it). A copy that differs from the one
// before it in its status alone (the watch event of this Manager's own PATCH, another
// controller's condition) needs ObservePod only, which orders copies by resourceVersion
// (a copy without one gets SyncPod), as the kubelet's pod config hands such a
// copy to reconciliation instead of to the pod worker (checkAndUpdatePod in
// pkg/kubelet/config/config.go; the examples/fleet agent does the same). In order, as the
// kubelet's pod worker and status manager do it (syncPod and SyncTerminatingPod in
// pkg/kubelet/kubelet.go, syncPod and canBeDeleted in
// pkg/kubelet/status/status_manager.go):
//
//  1. the pod is observed as ObservePod does: it becomes the base of the next patch, and
//     readiness gates or drift on the server are acted on;
//  2. the status is generated from the facts with podstate.Generate, on top of the
//     status this Manager last accepted for the pod;
//  3. the status is set as SetPodStatus does (and queued for Run or Sync to send);
//  4. when in.Stopped is first reported, the pod is terminated as TerminatePod does;
//  5. once the pod has a deletionTimestamp, its terminal status is on the server
//     and it was terminated, the Manager deletes the pod object through Options.Deleter
//     (grace period 0, UID precondition), from Run or Sync, right after the PATCH that
//     made the terminal status current. Without a Deleter nothing is deleted.
//
// It returns the status the Manager accepted and caches (the caller's own copy): what
// Generate produced, with the Manager's rules for accepting a status applied (a terminal
// phase is final; see SetPodStatus) and its times stamped, as GetPodStatus would return
// it. After the Manager deleted the pod, further calls for it do nothing and return its
// last status, until ForgetPod or RemoveOrphanedStatuses.
//
// The error wraps a *podstatus.InputError (matching podstatus.ErrInvalidInput) for input
// the Manager's checks or podstate.Generate cannot use, or a *TransitionError for a
// status the Manager rejects; the status is then not set.
func (m *Manager) SyncPod(ctx context.Context, in SyncPodInput) (v1.PodStatus, error) {
	pod := in.Pod
	if err := checkPod(pod); err != nil {
		return v1.PodStatus{}, fmt.Errorf("status: SyncPod: %w", err)
	}
	m.ObservePod(ctx, pod)

	facts := podstate.Input{Pod: pod, Runtime: in.Runtime, Features: m.opts.Features}
	var finished bool
	m.mu.Lock()
	if e := m.pods[pod.UID]; e != nil {
		if e.deleted {
			s := *e.status.DeepCopy()
			m.mu.Unlock()
			return s, nil
		}
		if e.hasStatus {
			// e.status is replaced, never modified in place, and Generate only reads it.
			prev := e.status
			facts.OldStatus = &prev
		}
		finished = e.finished
		e.couldRun, e.syncPodSeen = in.CouldHaveRunningContainers, true
	}
	m.mu.Unlock()

	s, err := podstate.Generate(facts)
	if err != nil {
		return v1.PodStatus{}, fmt.Errorf("status: SyncPod: %w", err)
	}
	if err := m.setPodStatus(m.logger(ctx), pod, s); err != nil {
		return v1.PodStatus{}, fmt.Errorf("status: SyncPod: %w", err)
	}
	if in.Stopped && !finished {
		if err := m.terminatePod(m.logger(ctx), pod); err != nil {
			return v1.PodStatus{}, fmt.Errorf("status: SyncPod: %w", err)
		}
	}
	got, _ := m.GetPodStatus(pod.UID)
	return got, nil
}

// deletableLocked is the kubelet's canBeDeleted (pkg/kubelet/status/status_manager.go):
// the server's copy of the pod has a deletionTimestamp and a terminal phase, and the pod
// was terminated (TerminatePod, the kubelet's podIsFinished). Only with a Deleter.
func (m *Manager) deletableLocked(e *entry) bool {
	return m.opts.Deleter != nil && !e.deleted && e.finished && e.base != nil &&
		e.base.DeletionTimestamp != nil && terminal(e.base.Status.Phase)
}

// deleteIfDone deletes e's pod when its terminal status is on the server (base is the
// server's copy after this sync), as the kubelet's status manager does at the end of its
// syncPod. A 404 or 409 (the UID precondition failed: the name belongs to another pod)
// ends the work on the pod as a successful DELETE does. Any other error is returned, and
// the sync is retried with backoff.
func (m *Manager) deleteIfDone(ctx context.Context, e *entry) error {
	m.mu.Lock()
	ok := !e.gone && m.deletableLocked(e)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	err := m.request(ctx, e, false, func(ctx context.Context) error {
		return m.opts.Deleter.DeletePod(ctx, e.namespace, e.name, e.uid)
	})
	if errors.Is(err, errForgotten) {
		return nil
	}
	switch c := classify(err); {
	case err == nil, c == classNotFound, c == classConflict:
		m.logger(ctx).V(3).Info("Deleted terminated pod", "pod", e.ref(), "podUID", e.uid, "answer", answer(err))
		m.mu.Lock()
		e.deleted = true
		delete(m.dirty, e)
		delete(m.held, e)
		m.mu.Unlock()
		return nil
	default:
		return fmt.Errorf("delete pod: %w", err)
	}
}

// answer names the outcome of a DELETE for the log: "deleted", or the error that counts
// as done (404: already gone; 409: the name belongs to another pod).
func answer(err error) string {
	if err == nil {
		return "deleted"
	}
	return err.Error()
}
