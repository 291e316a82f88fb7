package manager

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	kubepod "k8s.io/kubernetes/pkg/kubelet/pod"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
	kubeletutil "k8s.io/kubernetes/pkg/kubelet/util"

	"github.com/podstatus/podstatus/status"
)

// settleTimeout bounds the wait for the kubelet's sync goroutine. It only turns a hang
// into a failure; no result depends on timing.
const settleTimeout = 30 * time.Second

// quiet is the logger both managers get: the kubelet's manager logs at Info level on
// paths the sequences take on purpose (readiness of an unknown container, rejected
// transitions).
var quiet = logr.Discard()

// quietContext returns a context carrying the discarding logger, which the kubelet's
// sync goroutine reads with klog.FromContext.
func quietContext(ctx context.Context) context.Context { return klog.NewContext(ctx, quiet) }

// noRunningContainers is the kubelet's PodDeletionSafetyProvider for the comparison:
// no container could still run, as our Manager assumes by default
// (Options.CouldHaveRunningContainers). It is statustest.FakePodDeletionSafetyProvider
// without the mock package that would add a module requirement.
type noRunningContainers struct{}

// PodCouldHaveRunningContainers implements kubeletstatus.PodDeletionSafetyProvider.
func (noRunningContainers) PodCouldHaveRunningContainers(*v1.Pod) bool { return false }

// runningFlag is a PodDeletionSafetyProvider (and our Options.CouldHaveRunningContainers)
// whose answer the sequence sets: true while the simulated runtime is still stopping the
// containers of a pod that has reached a terminal phase. Both managers hold the terminal
// phase back from the server meanwhile. It is read by the kubelet's sync goroutine.
type runningFlag struct{ atomic.Bool }

// PodCouldHaveRunningContainers implements kubeletstatus.PodDeletionSafetyProvider.
func (f *runningFlag) PodCouldHaveRunningContainers(*v1.Pod) bool { return f.Load() }

// upstreamSide is the kubelet v1.37.0's status manager on its own fake server, built as
// the kubelet's newTestManager builds it (a basic pod manager, a deletion-safety provider
// that reports no running containers, a startup latency tracker) and started with Start.
//
// Its sync runs in a goroutine on every change, and only exported API is available, so
// settle waits for it with a sentinel pod: two consecutive changes to the sentinel, each
// awaited until its PATCH reaches the server. The second sentinel change is made after
// the first sentinel PATCH, that is while (or after) the batch carrying it runs, so it
// triggers a batch strictly after that one; when its PATCH arrives, every batch that
// could carry an earlier change of the pod under test has finished. The sentinel's
// requests are not counted.
type upstreamSide struct {
	srv      *fakeServer
	pm       kubepod.Manager
	m        kubeletstatus.Manager
	sentinel *v1.Pod
	n        int
	patched  chan struct{}
}

// newUpstreamSide starts the kubelet's manager for pod (and the sentinel) on a new fake
// server; running says whether a pod could still have running containers. The sync goroutine cannot be stopped (the kubelet's loop ignores ctx); close
// empties its cache so that its periodic full sync finds nothing to do.
func newUpstreamSide(ctx context.Context, pod *v1.Pod, running kubeletstatus.PodDeletionSafetyProvider) *upstreamSide {
	sentinel := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: "sentinel", UID: "sentinel-uid", Generation: 1},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "s"}}},
	}
	u := &upstreamSide{srv: newFakeServer(pod, sentinel), sentinel: sentinel, patched: make(chan struct{}, 16)}
	u.srv.onPatch = func(name string) {
		if name == sentinel.Name {
			u.patched <- struct{}{}
		}
	}
	u.pm = kubepod.NewBasicPodManager()
	u.pm.AddPod(pod.DeepCopy())
	u.pm.AddPod(sentinel)
	u.m = kubeletstatus.NewManager(u.srv.cs, u.pm, running, kubeletutil.NewPodStartupLatencyTracker())
	u.m.Start(quietContext(ctx))
	return u
}

// settle returns once the kubelet's manager has synced every change made so far.
func (u *upstreamSide) settle() error {
	for range 2 {
		u.n++
		if _, changed := u.m.SetPodStatus(quiet, u.sentinel, v1.PodStatus{Message: strconv.Itoa(u.n)}); !changed {
			return fmt.Errorf("sentinel status %d was not accepted", u.n)
		}
		select {
		case <-u.patched:
		case <-time.After(settleTimeout):
			return fmt.Errorf("the kubelet's manager did not sync within %v", settleTimeout)
		}
	}
	return nil
}

// close forgets every cached status, so that the leaked sync goroutine stays idle.
func (u *upstreamSide) close() { u.m.RemoveOrphanedStatuses(quiet, map[types.UID]bool{}) }

// containerID converts a runtime://id string to the kubelet's type.
func containerID(id string) kubecontainer.ContainerID {
	return kubecontainer.ParseContainerID(quiet, id)
}

// ourSide is podstatus's Manager on its own fake server. eager sides are synced after
// every operation (the schedule the kubelet's goroutine follows), the others only at the
// sequence's sync points.
type ourSide struct {
	srv   *fakeServer
	m     *status.Manager
	eager bool
}

// newOurSide returns our Manager for pod on a new fake server, with running as
// Options.CouldHaveRunningContainers and the kubelet's
// lastTransitionTime behaviour (Options.UpstreamTransitionTimes): the comparison ignores
// times anyway, but this keeps the two managers on the same rule.
func newOurSide(pod *v1.Pod, eager bool, running kubeletstatus.PodDeletionSafetyProvider) *ourSide {
	srv := newFakeServer(pod)
	opts := status.Options{UpstreamTransitionTimes: true, CouldHaveRunningContainers: running.PodCouldHaveRunningContainers}
	return &ourSide{srv: srv, m: status.NewManager(client{srv.cs}, opts), eager: eager}
}
