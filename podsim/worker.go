package podsim

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/status"
)

// StatusSyncer is where a Worker sends a pod's runtime facts: the kubelet's per-pod status
// step. *status.Manager is one; a wrapper of a Manager (vkstatus.Client, whose SyncPod
// returns the pod it hands to virtual-kubelet) adapts its own SyncPod to this shape.
type StatusSyncer interface {
	// SyncPod is status.Manager.SyncPod: it generates the pod's status from the facts,
	// sets it, terminates the pod once in.Stopped is reported and, with a deleter,
	// deletes the pod object once a deleted pod's terminal status is on the server. It
	// returns the status it accepted. It logs with ctx's logger.
	SyncPod(ctx context.Context, in status.SyncPodInput) (v1.PodStatus, error)
}

// Worker is a simulated kubelet's pod worker for one pod bound to its node: the one path
// from a pod's simulated runtime (Pod) to its status. Each Sync gives the runtime the
// newest copy of the pod (once per resourceVersion), advances it to the clock's time and
// hands its facts to the StatusSyncer, as the kubelet's pod worker hands its runtime's
// state to its status manager (syncPod and SyncTerminatingPod in pkg/kubelet/kubelet.go):
// the status is generated and queued, a pod whose containers have all stopped is
// terminated, a terminal phase is held back while a container may still run, and a
// deleted pod's object is deleted once its terminal status is on the server (the
// Manager's Options.Deleter).
//
// A node agent keeps one Worker per pod, from the first copy it sees until the pod leaves
// its informer (the watch's DELETED event, after the Manager deleted it or another writer
// force-deleted it), and then calls Release and the Manager's ForgetPod:
//
//	w, warnings, err := podsim.NewWorker(pod, manager, ipam, podsim.Config{...})
//	// on every watch event of the pod, and at step.Next:
//	step, err := w.Sync(newestCopy)
//	// step.Status is the status the Manager accepted; call Sync again at step.Next
//	// on DELETED:
//	w.Release(); manager.ForgetPod(pod.UID)
//
// A copy that differs from the one before it in its status alone (the watch event of the
// Manager's own PATCH, another controller's condition) needs no step: give it to Update
// and to the Manager's ObservePod, as the kubelet's pod config sends such a copy to
// reconciliation instead of to the pod worker (checkAndUpdatePod in
// pkg/kubelet/config/config.go).
//
// A Worker is not safe for concurrent use: one goroutine at a time steps a pod, as the
// kubelet runs one pod worker per pod. Distinct Workers may run concurrently (their
// shared Config.IPAM and Config.Cache are safe for that, and so is a status.Manager).
type Worker struct {
	syncer StatusSyncer
	sim    *Pod // its pod field is the copy last given (no second reference per pod)
}

// Step is what one Worker.Sync did.
type Step struct {
	// Status is the status the StatusSyncer accepted for the pod.
	Status v1.PodStatus
	// Facts are the runtime's facts the status was generated from.
	Facts Facts
	// Next is when the runtime changes next on its own (a container starts or exits, a
	// probe succeeds, a grace period ends): call Sync again then. The zero time means
	// nothing changes until a new copy of the pod arrives (see Pod.Next).
	Next time.Time
}

// NewWorker starts simulating pod (podsim.New, which resumes a pod an earlier agent
// process ran) and returns its Worker; nothing is sent until the first Sync. syncer is
// required (a *status.Manager).
//
// The error, a *podstatus.InputError (matching podstatus.ErrInvalidInput), is New's (a nil
// pod, a nil ipam for a pod that needs one) or a nil syncer; the Worker is then nil. The Warnings are New's:
// what was adjusted to simulate the pod.
func NewWorker(pod *v1.Pod, syncer StatusSyncer, ipam *IPAM, cfg Config) (*Worker, Warnings, error) {
	if syncer == nil {
		ref := ""
		if pod != nil {
			ref = pod.Namespace + "/" + pod.Name
		}
		return nil, Warnings{}, fmt.Errorf("podsim: NewWorker: %w", &podstatus.InputError{Pod: ref,
			Errs: field.ErrorList{field.Required(field.NewPath("syncer"), "a StatusSyncer (a *status.Manager)")}})
	}
	sim, w, err := New(pod, ipam, cfg)
	if err != nil {
		return nil, w, err
	}
	return &Worker{syncer: syncer, sim: sim}, w, nil
}

// Update gives the simulated runtime a newer copy of the pod without a status step: a
// deletionTimestamp starts graceful termination, a changed activeDeadlineSeconds moves the
// deadline (Pod.Update). A copy of the resourceVersion the runtime has already seen is
// ignored; so is the copy it already has. A copy without a resourceVersion (a fake
// clientset's) is always taken.
func (w *Worker) Update(pod *v1.Pod) {
	last := w.sim.pod
	if pod == nil || pod == last || (pod.ResourceVersion != "" && pod.ResourceVersion == last.ResourceVersion) {
		return
	}
	w.sim.Update(pod)
}

// Sync is one step of the pod worker: pod, the newest copy the caller has (nil: the one
// last given), goes to the runtime as Update gives it; the runtime advances to its clock's
// time; and its facts go to the StatusSyncer's SyncPod with whether the pod is stopped and
// whether a container could still run. The error is the StatusSyncer's; the runtime has
// advanced all the same, so the next Sync reports its newest facts. ctx is passed to
// SyncPod (its logger logs the step).
func (w *Worker) Sync(ctx context.Context, pod *v1.Pod) (Step, error) {
	if pod != nil {
		w.Update(pod)
	} else {
		pod = w.sim.pod
	}
	facts := w.sim.Advance()
	st, err := w.syncer.SyncPod(ctx, status.SyncPodInput{
		Pod:                        pod,
		Runtime:                    facts.Runtime,
		Stopped:                    facts.Stopped,
		CouldHaveRunningContainers: w.sim.CouldHaveRunningContainers(),
	})
	return Step{Status: st, Facts: facts, Next: w.sim.Next()}, err
}

// ResourceVersion is the resourceVersion of the copy of the pod the runtime last took: a
// caller that polls a lister compares it to find copies the Worker has not seen.
func (w *Worker) ResourceVersion() string { return w.sim.pod.ResourceVersion }

// Release frees what the simulation holds on the node (the pod IP in Config.IPAM), once
// the pod has left the agent's informer. The Worker must not be used after it.
func (w *Worker) Release() { w.sim.Release() }
