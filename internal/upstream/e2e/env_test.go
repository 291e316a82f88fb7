package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/kubeclient"
)

const (
	// nodeName is the node every pod is bound to (no Node object is needed).
	nodeName = "node-1"
	// hostIP is the node's address the kubelet reports.
	hostIP = "10.0.0.10"
	// image is the image of every container; nothing pulls it.
	image = "registry.k8s.io/pause:3.10"
	// pollTimeout bounds every wait for something asynchronous on the server (a watch).
	pollTimeout = 15 * time.Second
)

// env is one test's world: its namespace on the shared server, a fake clock, the Manager
// (the code under test) with its counting client, and a second clientset for every other
// actor.
type env struct {
	t     *testing.T
	ctx   context.Context
	ns    string
	clock *clocktesting.FakeClock
	// client is the Manager's client: status/kubeclient over the Manager's own clientset,
	// wrapped to count requests and rejections.
	client *countingClient
	mgr    *status.Manager
	// other is an independent clientset (its own user agent): the scheduler, the
	// load-balancer controller, the deleting controller, the monitoring service, and the
	// kubelet's pod informer. Its requests are not the Manager's and are not counted.
	other kubernetes.Interface
	// updates counts the status updates handed to the Manager (SetPodStatus,
	// SetContainerReadiness, TerminatePod), for the requests-per-update figure.
	updates int
}

// newEnv makes a namespace named after prefix and a Manager whose fake clock starts at
// start. At the end of the test it fails the test if any request of the Manager was
// rejected, and logs the request count.
func newEnv(t *testing.T, prefix string, start time.Time) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	other := srv.NewClient(t, "podstatus-e2e-other-controllers")
	e := &env{
		t:     t,
		ctx:   ctx,
		ns:    srv.CreateNamespace(t, prefix).Name,
		clock: clocktesting.NewFakeClock(start),
		other: other,
	}
	e.client = newCountingClient(kubeclient.New(srv.NewClient(t, "podstatus-e2e-kubelet").CoreV1(), "podstatus-e2e-kubelet"), other)
	e.mgr = e.newManager()
	t.Cleanup(func() { e.client.verify(t) })
	return e
}

// newManager returns a Manager on the env's client and fake clock (a second one plays a
// restarted kubelet).
func (e *env) newManager() *status.Manager {
	return status.NewManager(e.client, status.Options{Clock: e.clock, Retry: status.RetryOptions{Seed: ptr.To[uint64](1)}})
}

// at sets the fake clock.
func (e *env) at(t time.Time) {
	e.t.Helper()
	if t.Before(e.clock.Now()) {
		e.t.Fatalf("fake clock cannot go back from %v to %v", e.clock.Now(), t)
	}
	e.clock.SetTime(t)
}

// now is the fake clock's time.
func (e *env) now() time.Time { return e.clock.Now() }

// newPod returns a pod bound to nodeName with the given containers (each runs image).
func (e *env) newPod(name string, containers ...string) *v1.Pod {
	p := apiserver.NewPod(e.ns, name, nodeName)
	p.Spec.Containers = nil
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: image})
	}
	return p
}

// schedule creates pod and then, as the scheduler would once it bound it, sets
// PodScheduled True with lastTransitionTime at, through the other clientset. It returns
// the server's copy as created (a watch started from its resourceVersion sees the
// scheduler's write) and as scheduled.
func (e *env) schedule(pod *v1.Pod, at time.Time) (created, scheduled *v1.Pod) {
	e.t.Helper()
	created = srv.CreatePod(e.t, pod)
	return created, e.patchCondition(created.Name, v1.PodCondition{
		Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at),
	})
}

// patchCondition writes one condition with a strategic-merge PATCH of pods/status from
// the other clientset, as a controller that owns that condition does, and returns the pod
// the server stored.
func (e *env) patchCondition(name string, c v1.PodCondition) *v1.Pod {
	e.t.Helper()
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []v1.PodCondition{c}}})
	if err != nil {
		e.t.Fatal(err)
	}
	got, err := e.other.CoreV1().Pods(e.ns).Patch(e.ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
	if err != nil {
		e.t.Fatalf("controller PATCH %s of pod %s: %v", body, name, err)
	}
	return got
}

// get reads the server's copy of a pod through the other clientset.
func (e *env) get(name string) *v1.Pod {
	e.t.Helper()
	p, err := e.other.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get pod %s/%s: %v", e.ns, name, err)
	}
	return p
}

// runtimeState is what a container runtime reports about a pod: the facts the kubelet
// turns into a status.
type runtimeState struct {
	// phase is the phase the kubelet derived.
	phase v1.PodPhase
	// sandboxes, newest first.
	sandboxes []sandbox.Status
	// containers are the regular containers' statuses (API-shaped).
	containers []v1.ContainerStatus
}

// kubelet plays one pass of the kubelet's pod worker: it hands the Manager the server's
// current copy of the pod (as the kubelet's pod informer would, through ObservePod) and
// then the status the kubelet generates from rs (SetPodStatus). It returns the copy.
func (e *env) kubelet(name string, rs runtimeState) *v1.Pod {
	e.t.Helper()
	pod := e.get(name)
	e.mgr.ObservePod(context.Background(), pod)
	old, ok := e.mgr.GetPodStatus(pod.UID)
	if !ok {
		old = pod.Status
	}
	if err := e.mgr.SetPodStatus(context.Background(), pod, kubeletStatus(e.t, pod, &old, rs, e.now())); err != nil {
		e.t.Fatalf("SetPodStatus(%s): %v", name, err)
	}
	e.updates++
	return pod
}

// sync flushes the Manager and fails the test on error.
func (e *env) sync() {
	e.t.Helper()
	if err := e.mgr.Sync(e.ctx); err != nil {
		e.t.Fatalf("Sync: %v", err)
	}
}

// kubeletStatus is the status the kubelet's generateAPIPodStatus would hand its status
// manager for rs, built with the readiness engine (Evaluate, then Apply): phase, host
// and pod IPs, the QoS class the API server set, the container statuses, and the
// kubelet-owned conditions in the kubelet's order (PodReadyToStartContainers,
// Initialized, Ready, ContainersReady, PodScheduled True). Readiness gates are read from
// the server's copy of the pod. The Manager sets the lastTransitionTimes.
func kubeletStatus(t *testing.T, pod *v1.Pod, old *v1.PodStatus, rs runtimeState, now time.Time) v1.PodStatus {
	t.Helper()
	s := v1.PodStatus{
		Phase:             rs.phase,
		QOSClass:          pod.Status.QOSClass,
		HostIP:            hostIP,
		HostIPs:           []v1.HostIP{{IP: hostIP}},
		ContainerStatuses: rs.containers,
	}
	// Pod IPs: the newest sandbox's, else (sandbox gone) the ones already reported.
	if len(rs.sandboxes) > 0 && rs.sandboxes[0].IP != "" {
		s.PodIP = rs.sandboxes[0].IP
		s.PodIPs = []v1.PodIP{{IP: s.PodIP}}
	} else if old.PodIP != "" {
		s.PodIP, s.PodIPs = old.PodIP, old.PodIPs
	}
	r, err := readiness.Evaluate(readiness.Input{
		Pod: pod, Phase: rs.phase, ContainerStatuses: rs.containers,
		Conditions: pod.Status.Conditions, Sandboxes: rs.sandboxes, OldStatus: old,
	})
	if err != nil {
		t.Fatalf("readiness.Evaluate: %v", err)
	}
	if _, err := readiness.Apply(&s, readiness.ApplyInput{Result: r, Now: metav1.NewTime(now)}); err != nil {
		t.Fatalf("readiness.Apply: %v", err)
	}
	s.Conditions = append(s.Conditions, v1.PodCondition{
		Type: v1.PodScheduled, Status: v1.ConditionTrue, ObservedGeneration: pod.Generation,
	})
	return s
}

// Sandboxes and containers as a runtime reports them.

func readySandbox(attempt uint32, ip string, created time.Time) sandbox.Status {
	return sandbox.Status{ID: fmt.Sprintf("sandbox-%d", attempt), Attempt: attempt, Ready: true, IP: ip, CreatedAt: created}
}

func notReadySandbox(attempt uint32, created time.Time) sandbox.Status {
	return sandbox.Status{ID: fmt.Sprintf("sandbox-%d", attempt), Attempt: attempt, IP: "", CreatedAt: created}
}

func containerID(name string, restarts int32) string {
	return fmt.Sprintf("containerd://%s-%d", name, restarts)
}

func waiting(name, reason, message string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, Image: image,
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason, Message: message}}}
}

func running(name string, restarts int32, since time.Time, ready bool) v1.ContainerStatus {
	started := true
	return v1.ContainerStatus{
		Name: name, Image: image, ImageID: image, ContainerID: containerID(name, restarts),
		RestartCount: restarts, Ready: ready, Started: &started,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(since)}},
	}
}

func exited(name string, restarts int32, from, to time.Time, code int32, reason string) v1.ContainerStatus {
	started := false
	return v1.ContainerStatus{
		Name: name, Image: image, ImageID: image, ContainerID: containerID(name, restarts),
		RestartCount: restarts, Started: &started,
		State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, StartedAt: metav1.NewTime(from), FinishedAt: metav1.NewTime(to),
			ContainerID: containerID(name, restarts),
		}},
	}
}

// Condition checks.

func cond(pod *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	return conditions.Get(pod.Status.Conditions, t)
}

// want describes a condition expected on the server. A zero ltt is not checked.
type want struct {
	status          v1.ConditionStatus
	ltt             time.Time
	reason, message string
}

// expect checks one condition of the server's copy of the pod.
func expect(t *testing.T, pod *v1.Pod, typ v1.PodConditionType, w want) {
	t.Helper()
	c := cond(pod, typ)
	if c == nil {
		t.Errorf("%s: no %s condition on the server; conditions: %s", pod.Name, typ, condString(pod))
		return
	}
	if c.Status != w.status || c.Reason != w.reason || c.Message != w.message ||
		(!w.ltt.IsZero() && !c.LastTransitionTime.Time.Equal(w.ltt)) {
		t.Errorf("%s: %s on the server = {%s %q %q ltt %s}, want {%s %q %q ltt %s}", pod.Name, typ,
			c.Status, c.Reason, c.Message, ts(c.LastTransitionTime.Time), w.status, w.reason, w.message, ts(w.ltt))
	}
}

func condString(pod *v1.Pod) string {
	var b []byte
	for _, c := range pod.Status.Conditions {
		b = fmt.Appendf(b, "[%s=%s %q ltt %s] ", c.Type, c.Status, c.Reason, ts(c.LastTransitionTime.Time))
	}
	return string(b)
}

// ts formats a time as the API server stores it.
func ts(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// sandboxLatency is the KEP-3085 SLI read from the server's copy: PodReadyToStartContainers'
// lastTransitionTime minus PodScheduled's, valid only when both are True.
func sandboxLatency(t *testing.T, pod *v1.Pod) time.Duration {
	t.Helper()
	r, s := cond(pod, v1.PodReadyToStartContainers), cond(pod, v1.PodScheduled)
	if r == nil || s == nil || r.Status != v1.ConditionTrue || s.Status != v1.ConditionTrue {
		t.Fatalf("%s: no sandbox-creation latency: conditions %s", pod.Name, condString(pod))
	}
	return r.LastTransitionTime.Sub(s.LastTransitionTime.Time)
}

// rvOf parses a resourceVersion (etcd's are integers).
func rvOf(t testing.TB, rv string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q is not an integer: %v", rv, err)
	}
	return n
}

// requestTotals are request counts.
type requestTotals struct {
	gets, patches, rejected, uidMismatches, rvConflicts int
}

// totals are the counts over every test of the binary.
var totals struct {
	sync.Mutex
	requestTotals
}

// countingClient is the Manager's status.Client: it forwards to status/kubeclient and
// counts GETs, PATCHes and rejections. A rejection is any error from the server (4xx,
// 5xx or no answer) except the deliberate one: a 422 Invalid on a PATCH whose
// metadata.uid is not the UID of the pod now stored under that name (the UID
// precondition protecting a re-created pod), and a 409 Conflict on a PATCH that carries
// metadata.resourceVersion (the Manager makes a patch that takes Ready from True to
// False conditional on the copy it was computed against, and refetches on 409), which
// are counted apart.
type countingClient struct {
	inner status.Client
	// check reads the stored pod to classify a 422; its requests are not counted.
	check kubernetes.Interface

	mu                                        sync.Mutex
	gets, patches, uidMismatches, rvConflicts int
	rejections                                []string
	patchBodies                               [][]byte
	responses                                 []*v1.Pod
	onPatch                                   func(patch []byte, resp *v1.Pod)
}

func newCountingClient(inner status.Client, check kubernetes.Interface) *countingClient {
	return &countingClient{inner: inner, check: check}
}

var _ status.Client = (*countingClient)(nil)

// GetPod implements status.Client.
func (c *countingClient) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	p, err := c.inner.GetPod(ctx, namespace, name)
	c.mu.Lock()
	c.gets++
	if err != nil {
		c.rejections = append(c.rejections, fmt.Sprintf("GET %s/%s: %v", namespace, name, err))
	}
	c.mu.Unlock()
	addTotals(requestTotals{gets: 1, rejected: b2i(err != nil)})
	return p, err
}

// PatchPodStatus implements status.Client.
func (c *countingClient) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	p, err := c.inner.PatchPodStatus(ctx, namespace, name, patch)
	deliberate := err != nil && c.uidMismatch(ctx, namespace, name, patch, err)
	conflict := err != nil && apierrors.IsConflict(err) && hasResourceVersion(patch)
	c.mu.Lock()
	c.patches++
	c.patchBodies = append(c.patchBodies, patch)
	hook := c.onPatch
	switch {
	case deliberate:
		c.uidMismatches++
	case conflict:
		c.rvConflicts++
	case err != nil:
		c.rejections = append(c.rejections, fmt.Sprintf("PATCH %s/%s %s: %v", namespace, name, patch, err))
	default:
		c.responses = append(c.responses, p)
	}
	c.mu.Unlock()
	addTotals(requestTotals{patches: 1, rejected: b2i(err != nil && !deliberate && !conflict), uidMismatches: b2i(deliberate), rvConflicts: b2i(conflict)})
	if err == nil && hook != nil {
		hook(patch, p)
	}
	return p, err
}

// hasResourceVersion reports whether a patch carries a metadata.resourceVersion
// precondition.
func hasResourceVersion(patch []byte) bool {
	var body struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	return json.Unmarshal(patch, &body) == nil && body.Metadata.ResourceVersion != ""
}

// uidMismatch reports whether err is the 422 of the metadata.uid precondition: the
// patch names a UID that is not the stored pod's.
func (c *countingClient) uidMismatch(ctx context.Context, namespace, name string, patch []byte, err error) bool {
	var se apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &se) {
		return false
	}
	var body struct {
		Metadata struct {
			UID types.UID `json:"uid"`
		} `json:"metadata"`
	}
	if json.Unmarshal(patch, &body) != nil || body.Metadata.UID == "" {
		return false
	}
	stored, gerr := c.check.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if gerr != nil || stored.UID == body.Metadata.UID {
		return false
	}
	for _, cause := range se.Status().Details.Causes {
		if cause.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

func (c *countingClient) counts() (gets, patches, uidMismatches int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets, c.patches, c.uidMismatches
}

func (c *countingClient) setOnPatch(f func(patch []byte, resp *v1.Pod)) {
	c.mu.Lock()
	c.onPatch = f
	c.mu.Unlock()
}

// verify fails t for every rejected request and logs the counts.
func (c *countingClient) verify(t *testing.T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.rejections {
		t.Errorf("request rejected by the API server: %s", r)
	}
	line := fmt.Sprintf("e2e: %d requests, %d rejected (%d GET, %d PATCH", c.gets+c.patches, len(c.rejections), c.gets, c.patches)
	if c.uidMismatches > 0 {
		line += fmt.Sprintf("; %d deliberate UID-precondition 422", c.uidMismatches)
	}
	if c.rvConflicts > 0 {
		line += fmt.Sprintf("; %d resourceVersion-precondition 409", c.rvConflicts)
	}
	line += ")"
	t.Log(line)
	fmt.Printf("%s [%s]\n", line, t.Name())
}

func addTotals(d requestTotals) {
	totals.Lock()
	totals.gets += d.gets
	totals.patches += d.patches
	totals.rejected += d.rejected
	totals.uidMismatches += d.uidMismatches
	totals.rvConflicts += d.rvConflicts
	totals.Unlock()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// podWatch follows one pod (by UID) on the server through a watch of the other
// clientset, from the resourceVersion it is started at, and calls onEvent with every
// version of the pod it sees, in order.
type podWatch struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every event
	lastRV  uint64
	err     error
	// stop ends the watch and waits for its goroutine; it may be called more than once.
	stop func()
}

// watchPod starts a watch of pod (name and UID) from pod's resourceVersion; it stops at
// the end of the test. onEvent runs on the watch goroutine.
func (e *env) watchPod(pod *v1.Pod, onEvent func(*v1.Pod)) *podWatch {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	w, err := e.other.CoreV1().Pods(e.ns).Watch(ctx, metav1.ListOptions{
		FieldSelector:   "metadata.name=" + pod.Name,
		ResourceVersion: pod.ResourceVersion,
	})
	if err != nil {
		cancel()
		e.t.Fatalf("watch pod %s: %v", pod.Name, err)
	}
	pw := &podWatch{changed: make(chan struct{})}
	done := make(chan struct{})
	var once sync.Once
	pw.stop = func() { once.Do(func() { cancel(); w.Stop(); <-done }) }
	e.t.Cleanup(pw.stop)
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
			case watch.Error:
				pw.fail(fmt.Errorf("watch error: %v", apierrors.FromObject(ev.Object)))
				return
			default:
				continue
			}
			p, ok := ev.Object.(*v1.Pod)
			if !ok || p.UID != pod.UID {
				continue
			}
			rv, err := strconv.ParseUint(p.ResourceVersion, 10, 64)
			if err != nil {
				pw.fail(fmt.Errorf("resourceVersion %q: %v", p.ResourceVersion, err))
				return
			}
			if onEvent != nil {
				onEvent(p)
			}
			pw.mu.Lock()
			pw.lastRV = rv
			close(pw.changed)
			pw.changed = make(chan struct{})
			pw.mu.Unlock()
		}
	}()
	return pw
}

func (pw *podWatch) fail(err error) {
	pw.mu.Lock()
	pw.err = err
	close(pw.changed)
	pw.changed = make(chan struct{})
	pw.mu.Unlock()
}

// waitFor waits, at most pollTimeout, until the watch has delivered resourceVersion rv.
func (pw *podWatch) waitFor(t *testing.T, rv string) {
	t.Helper()
	target := rvOf(t, rv)
	deadline := time.NewTimer(pollTimeout)
	defer deadline.Stop()
	for {
		pw.mu.Lock()
		last, err, ch := pw.lastRV, pw.err, pw.changed
		pw.mu.Unlock()
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if last >= target {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("watch did not deliver resourceVersion %s within %v (last %d)", rv, pollTimeout, last)
		}
	}
}
