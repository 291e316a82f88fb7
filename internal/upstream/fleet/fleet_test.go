package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/internal/upstream/kubeletcheck"
	"github.com/podstatus/podstatus/internal/upstream/kubeletview"
	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/simkubelet"
)

const gate = v1.PodConditionType("example.com/gate")

// kind is a pod's script and expected outcome.
type kind string

const (
	plain     kind = "plain"
	sidecar   kind = "sidecar"   // init container + sidecar with a readiness probe
	probes    kind = "probes"    // startup and readiness probes with delays
	gated     kind = "gated"     // readiness gate set True, later flipped False by a second client
	succeeds  kind = "succeeds"  // restartPolicy Never, exit 0
	fails     kind = "fails"     // restartPolicy Never, exit 1
	crashloop kind = "crashloop" // restartPolicy Always, exits 1 again and again
	deleted   kind = "deleted"   // graceful deletion once running: the object disappears
	deadline  kind = "deadline"  // activeDeadlineSeconds exceeded: Failed/DeadlineExceeded
)

var mix = []struct {
	kind kind
	n    int
}{{plain, 60}, {sidecar, 25}, {probes, 25}, {gated, 30}, {succeeds, 15}, {fails, 15}, {crashloop, 10}, {deleted, 20}, {deadline, 10}}

// fast annotations: every pod's timings are small but not zero, so that statuses go
// through their intermediate steps.
var fastAnnotations = map[string]string{
	podsim.AnnotationSandboxDelay:      "50ms..400ms",
	podsim.AnnotationImagePullDelay:    "0s..300ms",
	podsim.AnnotationStartDelay:        "20ms..200ms",
	podsim.AnnotationInitRunTime:       "100ms..500ms",
	podsim.AnnotationStopDelay:         "0s..500ms",
	podsim.AnnotationStartupFailures:   "0",
	podsim.AnnotationReadinessFailures: "0..1",
}

func newPod(ns string, k kind, i int, node string) *v1.Pod {
	name := fmt.Sprintf("%s-%d", k, i)
	p := apiserver.NewPod(ns, name, node)
	p.Labels = map[string]string{"kind": string(k)}
	p.Annotations = map[string]string{}
	for key, v := range fastAnnotations {
		p.Annotations[key] = v
	}
	app := &p.Spec.Containers[0]
	switch k {
	case sidecar:
		always := v1.ContainerRestartPolicyAlways
		p.Spec.InitContainers = []v1.Container{
			{Name: "setup", Image: "busybox"},
			{Name: "proxy", Image: "envoy", RestartPolicy: &always,
				ReadinessProbe: &v1.Probe{ProbeHandler: execProbe(), PeriodSeconds: 1}},
		}
	case probes:
		app.StartupProbe = &v1.Probe{ProbeHandler: execProbe(), PeriodSeconds: 1, FailureThreshold: 5}
		app.ReadinessProbe = &v1.Probe{ProbeHandler: execProbe(), InitialDelaySeconds: 1, PeriodSeconds: 1}
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "metrics", Image: "metrics"})
	case gated:
		p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
	case succeeds, fails:
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		p.Annotations[podsim.AnnotationRunTime] = "300ms..1s"
		if k == fails {
			p.Annotations[podsim.AnnotationExitCode] = "1"
		}
	case crashloop:
		p.Annotations[podsim.AnnotationRunTime] = "200ms"
		p.Annotations[podsim.AnnotationExitCode] = "1"
	case deleted:
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](3)
	case deadline:
		p.Spec.ActiveDeadlineSeconds = ptr.To[int64](2)
	}
	if i == 0 && k == plain {
		// Bad input: an invalid annotation (a Warning Event, the default used) and
		// features the simulation does not run.
		p.Annotations[podsim.AnnotationStartDelay] = "soon"
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		app.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
		p.Spec.RuntimeClassName = nil
	}
	return p
}

func execProbe() v1.ProbeHandler {
	return v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}
}

// requestLog records every request an agent sends, by verb, resource and code.
type requestLog struct {
	mu     sync.Mutex
	counts map[string]int
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		code := "error"
		switch {
		case err == nil:
			code = strconv.Itoa(resp.StatusCode)
		case errors.Is(err, context.Canceled):
			code = "canceled"
		}
		key := req.Method + " " + resource(req.URL.Path) + " " + code
		l.mu.Lock()
		l.counts[key]++
		l.mu.Unlock()
		return resp, err
	})
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// resource names the resource of an API path: "pods", "pods/status", "leases", ...
func resource(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		switch parts[i] {
		case "pods", "nodes", "leases", "events":
			if i+2 < len(parts) {
				return parts[i] + "/" + parts[i+2]
			}
			return parts[i]
		}
	}
	return path
}

// allowed reports whether a rejected request is one of the documented races: a Lease not
// found before the agent creates it (as the kubelet GETs it first), a node that already
// exists when an agent restarts, and the 404/409/422 of a pod deleted while its status or
// its DELETE was in flight.
func allowed(key string) bool {
	f := strings.Fields(key)
	verb, res, code := f[0], f[1], f[2]
	switch {
	case code < "400":
		return true
	case code == "canceled":
		// Not an answer of the server: a request the agent cut off itself while stopping
		// for the restart (its status stays pending and the next agent sends it).
		return true
	case verb == "GET" && res == "leases" && code == "404":
		return true
	case verb == "POST" && res == "nodes" && code == "409":
		return true
	case res == "pods" && verb == "DELETE" && (code == "404" || code == "409"):
		return true
	case res == "pods/status" && (code == "404" || code == "409" || code == "422"):
		return true
	}
	return false
}

// recorder keeps every version of every pod seen on a watch.
type recorder struct {
	mu       sync.Mutex
	versions map[types.UID][]*v1.Pod
	gone     map[string]bool // namespace/name deleted
	count    int
}

func (r *recorder) run(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, done chan<- struct{}) {
	defer close(done)
	rv := "0"
	for ctx.Err() == nil {
		w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() == nil {
				t.Logf("watch: %v (retrying)", err)
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue
			}
			rv = pod.ResourceVersion
			if ev.Type == watch.Bookmark {
				continue
			}
			r.mu.Lock()
			if ev.Type == watch.Deleted {
				r.gone[pod.Namespace+"/"+pod.Name] = true
			} else {
				r.versions[pod.UID] = append(r.versions[pod.UID], pod)
				r.count++
			}
			r.mu.Unlock()
		}
		w.Stop()
	}
}

// generated records, per pod, the PodReadyToStartContainers conditions the kubelet's
// generator computes from the runtime facts the agent had (the sandboxes are not in the
// pod status, so a watch version is checked against these).
type generated struct {
	mu        sync.Mutex
	prtsc     map[types.UID]map[string]bool
	checked   atomic.Int64
	mismatch  atomic.Int64
	firstDiff atomic.Pointer[string]
}

func condKey(c v1.PodCondition) string { return kubeletcheck.Key(c) }

func findCond(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	_, c := podutil.GetPodConditionFromList(conds, t)
	return c
}

// onStatus runs the kubelet's four generators on the very input the agent gave
// podstate.Generate and compares them with what it produced.
func (g *generated) onStatus(pod *v1.Pod, in podstate.Input, s v1.PodStatus) {
	old := pod.Status.DeepCopy()
	if in.OldStatus != nil {
		old = in.OldStatus.DeepCopy()
	}
	all := append(append([]v1.ContainerStatus{}, s.InitContainerStatuses...), s.ContainerStatuses...)
	prtsc := kubeletstatus.GeneratePodReadyToStartContainersCondition(pod, old, kubeletview.PodStatus(in.Pod, in.Sandboxes, false))
	want := []v1.PodCondition{prtsc,
		kubeletstatus.GeneratePodInitializedCondition(pod, old, all, s.Phase)}
	foreign := []v1.PodCondition{}
	for _, c := range pod.Status.Conditions {
		if c.Type == gate {
			foreign = append(foreign, c)
		}
	}
	want = append(want, kubeletstatus.GeneratePodReadyCondition(pod, old, append(foreign, want...), all, s.Phase),
		kubeletstatus.GenerateContainersReadyCondition(pod, old, all, s.Phase))
	g.checked.Add(1)
	for _, w := range want {
		got := findCond(s.Conditions, w.Type)
		if got == nil || condKey(*got) != condKey(w) {
			g.mismatch.Add(1)
			msg := fmt.Sprintf("generated status of %s/%s: %s is %v, the kubelet's generator says %s", pod.Namespace, pod.Name, w.Type, got, condKey(w))
			g.firstDiff.CompareAndSwap(nil, &msg)
		}
	}
	g.mu.Lock()
	if g.prtsc[pod.UID] == nil {
		g.prtsc[pod.UID] = map[string]bool{}
	}
	g.prtsc[pod.UID][condKey(prtsc)] = true
	g.mu.Unlock()
}

func TestFleetAgentAgainstRealAPIServer(t *testing.T) {
	began := time.Now()
	srv := apiserver.Start(t)
	ctx := context.Background()
	ns := srv.CreateNamespace(t, "fleet-").Name
	watcher := srv.NewClient(t, "fleet-test-watcher")
	gateController := srv.NewClient(t, "gate-controller")

	rec := &recorder{versions: map[types.UID][]*v1.Pod{}, gone: map[string]bool{}}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan struct{})
	go rec.run(watchCtx, t, watcher, ns, watchDone)
	defer func() { stopWatch(); <-watchDone }()

	gen := &generated{prtsc: map[types.UID]map[string]bool{}}
	reqs := &requestLog{counts: map[string]int{}}
	const nodes = 3
	prefix := "fleet-e2e-"
	startAgent := func(name string) (stop func()) {
		rc := rest.CopyConfig(srv.Config)
		rc.UserAgent = "fleet-agent/" + name
		rc.Wrap(reqs.wrap)
		actx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- runKubelet(actx, rc, simkubelet.Options{
				Nodes:                    nodes,
				NodeNamePrefix:           prefix,
				NodeLeaseDurationSeconds: 4, // renewed every second
				Seed:                     7,
				ProgressInterval:         5 * time.Second,
				Logger:                   testr.NewWithOptions(t, testr.Options{Verbosity: 0}).WithName(name),
				OnStatus:                 gen.onStatus,
			})
		}()
		return func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("agent %s: Run: %v", name, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("agent %s did not stop within 30 s of its context being cancelled", name)
			}
		}
	}
	stop := startAgent("first")
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	// Create the pods, spread over the nodes.
	var all []*v1.Pod
	i := 0
	for _, m := range mix {
		for j := range m.n {
			p := srv.CreatePod(t, newPod(ns, m.kind, j, fmt.Sprintf("%s%d", prefix, i%nodes)))
			all = append(all, p)
			i++
		}
	}
	kindOf := func(p *v1.Pod) kind { return kind(p.Labels["kind"]) }
	t.Logf("created %d pods on %d nodes", len(all), nodes)

	get := func(p *v1.Pod) (*v1.Pod, error) {
		return watcher.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
	}
	// waitFor polls until every pod selected satisfies cond, or fails with the pods that do not.
	waitFor := func(what string, timeout time.Duration, sel func(*v1.Pod) bool, cond func(*v1.Pod, error) bool) {
		t.Helper()
		var pending []string
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
			pending = pending[:0]
			for _, p := range all {
				if !sel(p) {
					continue
				}
				cur, err := get(p)
				if !cond(cur, err) {
					desc := p.Name
					if err != nil {
						desc += " (" + err.Error() + ")"
					} else {
						desc += fmt.Sprintf(" (%s, ready %v)", cur.Status.Phase, readyStatus(cur))
					}
					pending = append(pending, desc)
				}
			}
			return len(pending) == 0, nil
		})
		if err != nil {
			if len(pending) > 10 {
				pending = append(pending[:10], fmt.Sprintf("and %d more", len(pending)-10))
			}
			t.Fatalf("after %v, %s: not yet for %v", timeout, what, pending)
		}
	}
	is := func(ks ...kind) func(*v1.Pod) bool {
		return func(p *v1.Pod) bool { return slices.Contains(ks, kindOf(p)) }
	}
	running := func(p *v1.Pod, err error) bool { return err == nil && p.Status.Phase == v1.PodRunning }
	containersReady := func(p *v1.Pod, err error) bool {
		c := findCond(podConds(p, err), v1.ContainersReady)
		return c != nil && c.Status == v1.ConditionTrue
	}

	// Phase 1: pods start under the first agent.
	waitFor("long-running pods Running", 30*time.Second, is(plain, sidecar, gated, deleted, crashloop), running)
	waitFor("gated pods ContainersReady", 20*time.Second, is(gated), containersReady)
	setGate := func(p *v1.Pod, s v1.ConditionStatus) {
		t.Helper()
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q,"reason":"Test","lastTransitionTime":%q}]}}`,
			gate, s, time.Now().UTC().Format(time.RFC3339))
		if _, err := gateController.CoreV1().Pods(ns).Patch(ctx, p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("gate controller: %v", err)
		}
	}
	for _, p := range all {
		if kindOf(p) == gated {
			setGate(p, v1.ConditionTrue)
		}
	}
	waitFor("gated pods Ready after the gate is True", 10*time.Second, is(gated), func(p *v1.Pod, err error) bool { return err == nil && readyStatus(p) == v1.ConditionTrue })

	// Phase 2: restart the agent in the middle of the run.
	restartAt := time.Now()
	stop()
	stopped = true
	stop = startAgent("second")
	stopped = false
	t.Logf("agent restarted at %v", restartAt.Sub(began).Round(time.Millisecond))

	// Phase 3: the second agent carries on; the gate controller flips half the gates False;
	// the deletions begin.
	flipped := map[string]bool{}
	var flippedAt = map[string]time.Time{}
	for _, p := range all {
		if kindOf(p) == gated && len(flipped) < 15 {
			flipped[p.Name] = true
			flippedAt[p.Name] = time.Now()
			setGate(p, v1.ConditionFalse)
		}
	}
	for _, p := range all {
		if kindOf(p) == deleted {
			if err := gateController.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete %s: %v", p.Name, err)
			}
		}
	}

	// Outcomes.
	waitFor("flipped gates turn Ready False", 10*time.Second, func(p *v1.Pod) bool { return flipped[p.Name] }, func(p *v1.Pod, err error) bool {
		c := findCond(podConds(p, err), v1.PodReady)
		return c != nil && c.Status == v1.ConditionFalse && c.Reason == "ReadinessGatesNotReady"
	})
	waitFor("ready pods Running and Ready", 30*time.Second, func(p *v1.Pod) bool {
		return slices.Contains([]kind{plain, sidecar, probes, gated}, kindOf(p)) && !flipped[p.Name]
	}, func(p *v1.Pod, err error) bool { return running(p, err) && readyStatus(p) == v1.ConditionTrue })
	waitFor("jobs Succeeded", 30*time.Second, is(succeeds), func(p *v1.Pod, err error) bool { return err == nil && p.Status.Phase == v1.PodSucceeded })
	waitFor("jobs Failed", 30*time.Second, is(fails), func(p *v1.Pod, err error) bool { return err == nil && p.Status.Phase == v1.PodFailed })
	waitFor("deadline pods Failed with DeadlineExceeded", 30*time.Second, is(deadline), func(p *v1.Pod, err error) bool {
		return err == nil && p.Status.Phase == v1.PodFailed && p.Status.Reason == "DeadlineExceeded"
	})
	waitFor("crash-looping pods restarted", 30*time.Second, is(crashloop), func(p *v1.Pod, err error) bool {
		return err == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	waitFor("deleted pods gone", 30*time.Second, is(deleted), func(_ *v1.Pod, err error) bool { return apierrors.IsNotFound(err) })

	// The invalid annotation got its Warning Event.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		evs, err := watcher.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		found := false
		var others []string
		for _, e := range evs.Items {
			if e.Reason == simkubelet.ReasonInvalidSimAnnotation && e.Type == v1.EventTypeWarning && e.InvolvedObject.Name == "plain-0" {
				found = true
			} else {
				others = append(others, fmt.Sprintf("%s %s %s: %s", e.Type, e.Reason, e.InvolvedObject.Name, e.Message))
			}
		}
		if found && len(others) > 0 {
			t.Errorf("unexpected events: %d, first %v", len(others), others[0])
		}
		return found, nil
	})
	if err != nil {
		t.Errorf("no %s Warning Event for plain-0", simkubelet.ReasonInvalidSimAnnotation)
	}

	// Leases are renewed: each within its duration (4 s; renewed every second).
	for n := range nodes {
		l, err := watcher.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, fmt.Sprintf("%s%d", prefix, n), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("lease: %v", err)
		}
		checkLease(t, l)
	}
	stop()
	stopped = true
	stopWatch()
	<-watchDone

	// Every watch version against the kubelet's generators.
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var compared, skippedEmpty, skippedForeign, mismatches, heldBack int
	var firstMismatch []string
	byName := map[string]*v1.Pod{}
	for _, p := range all {
		byName[p.Name] = p
	}
	var gateFlips, gateFlipsNextWrite int
	for uid, versions := range rec.versions {
		var prevGate *v1.PodCondition
		awaitingFlip := false
		for vi, v := range versions {
			g := findCond(v.Status.Conditions, gate)
			foreign := vi > 0 && !sameGate(prevGate, g)
			prevGate = g
			if foreign && g != nil && g.Status == v1.ConditionFalse && readyStatus(v) == v1.ConditionTrue {
				gateFlips++
				awaitingFlip = true
			} else if awaitingFlip && !foreign {
				// The agent's first write after the gate went False must carry Ready False
				// (ObservePod re-evaluates Ready on the watch event).
				awaitingFlip = false
				if readyStatus(v) == v1.ConditionFalse {
					gateFlipsNextWrite++
				}
			}
			if findCond(v.Status.Conditions, v1.PodReady) == nil {
				skippedEmpty++ // created, no status yet
				continue
			}
			if foreign {
				skippedForeign++ // the gate controller's own write
				continue
			}
			compared++
			diffs, held := diffVersion(v, gen.prtscFor(uid))
			if held {
				heldBack++
			}
			for _, d := range diffs {
				mismatches++
				if len(firstMismatch) < 10 {
					firstMismatch = append(firstMismatch, fmt.Sprintf("%s rv %s: %s", v.Name, v.ResourceVersion, d))
				}
			}
		}
	}

	// No Ready flap: no pod whose script keeps it Ready goes Ready True→False (across the
	// restart or otherwise), no phase goes back, no restart counted for pods that never exit.
	var flaps []string
	for _, versions := range rec.versions {
		name := versions[0].Name
		k := kindOf(byName[name])
		wasReady := false
		var lastPhase v1.PodPhase
		for _, v := range versions {
			r := readyStatus(v) == v1.ConditionTrue
			scripted := k == crashloop || k == succeeds || k == fails || k == deleted || k == deadline ||
				(flipped[name] && v.Status.Conditions != nil && gateStatus(v) == v1.ConditionFalse)
			if wasReady && !r && !scripted {
				flaps = append(flaps, fmt.Sprintf("%s: Ready True→False at rv %s", name, v.ResourceVersion))
			}
			wasReady = r
			if phaseRank(v.Status.Phase) < phaseRank(lastPhase) {
				flaps = append(flaps, fmt.Sprintf("%s: phase %s→%s", name, lastPhase, v.Status.Phase))
			}
			lastPhase = v.Status.Phase
			if k == plain || k == sidecar || k == probes || k == gated {
				for _, cs := range append(slices.Clone(v.Status.InitContainerStatuses), v.Status.ContainerStatuses...) {
					if cs.RestartCount != 0 {
						flaps = append(flaps, fmt.Sprintf("%s: container %s restartCount %d", name, cs.Name, cs.RestartCount))
					}
				}
			}
		}
	}
	if len(flaps) > 10 {
		flaps = append(flaps[:10], fmt.Sprintf("and %d more", len(flaps)-10))
	}

	reqs.mu.Lock()
	var keys []string
	var rejected []string
	for k := range reqs.counts {
		keys = append(keys, k)
		if !allowed(k) {
			rejected = append(rejected, fmt.Sprintf("%s ×%d", k, reqs.counts[k]))
		}
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("  %-28s %d", k, reqs.counts[k]))
	}
	reqs.mu.Unlock()

	summary := fmt.Sprintf("fleet e2e: %d pods on %d nodes, agent restarted at %v; %d watch versions: %d compared with the kubelet's generators (%d mismatches; %d with a terminal phase held back while containers stop), %d before any status, %d written by the gate controller; %d generated statuses compared at generation (%d mismatches); %d gates flipped False, Ready False in the agent's next write for %d; took %v\nrequests by verb, resource and code:\n%s",
		len(all), nodes, restartAt.Sub(began).Round(time.Millisecond), rec.count, compared, mismatches, heldBack, skippedEmpty, skippedForeign,
		gen.checked.Load(), gen.mismatch.Load(), gateFlips, gateFlipsNextWrite, time.Since(began).Round(time.Millisecond), strings.Join(lines, "\n"))
	t.Log(summary)
	if os.Getenv("PODSTATUS_FLEET_VERBOSE") != "" {
		fmt.Println(summary)
	}
	if compared < len(all) {
		t.Errorf("only %d watch versions compared for %d pods", compared, len(all))
	}
	if mismatches > 0 {
		t.Errorf("%d watch versions differ from the kubelet's generators; first: %s", mismatches, strings.Join(firstMismatch, "\n"))
	}
	if n := gen.mismatch.Load(); n > 0 {
		t.Errorf("%d generated conditions differ from the kubelet's generators; first: %s", n, *gen.firstDiff.Load())
	}
	if gateFlips != len(flipped) || gateFlipsNextWrite != gateFlips {
		t.Errorf("%d gates flipped False (want %d), Ready False in the agent's next write for %d", gateFlips, len(flipped), gateFlipsNextWrite)
	}
	if len(flaps) > 0 {
		t.Errorf("unscripted changes: %s", strings.Join(flaps, "\n"))
	}
	if len(rejected) > 0 {
		t.Errorf("requests rejected beyond the documented races: %v", rejected)
	}
	if n := countMatching(reqs.counts, "PUT leases 200"); n < 3*nodes {
		t.Errorf("%d lease renewals, want at least %d", n, 3*nodes)
	}
}

func countMatching(m map[string]int, key string) int { return m[key] }

func (g *generated) prtscFor(uid types.UID) map[string]bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.prtsc[uid]
}

// diffVersion compares the kubelet-owned conditions of one pod version with the kubelet's
// generators (kubeletcheck.Diff); PodReadyToStartContainers, which depends on the
// runtime's sandboxes, must be one the generator computed from the agent's runtime facts.
func diffVersion(v *v1.Pod, prtsc map[string]bool) (diffs []string, heldBack bool) {
	diffs, heldBack = kubeletcheck.Diff(v, func(t v1.PodConditionType) bool { return t == gate })
	got := findCond(v.Status.Conditions, v1.PodReadyToStartContainers)
	if got == nil || !prtsc[condKey(*got)] {
		diffs = append(diffs, fmt.Sprintf("PodReadyToStartContainers: server %v, not computed by the kubelet's generator from any runtime facts of the pod (%v)", condKeyPtr(got), prtsc))
	}
	return diffs, heldBack
}

func condKeyPtr(c *v1.PodCondition) string {
	if c == nil {
		return "<missing>"
	}
	return condKey(*c)
}

func sameGate(a, b *v1.PodCondition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Status == b.Status && a.Reason == b.Reason && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}

func podConds(p *v1.Pod, err error) []v1.PodCondition {
	if err != nil || p == nil {
		return nil
	}
	return p.Status.Conditions
}

func readyStatus(p *v1.Pod) v1.ConditionStatus {
	if c := findCond(p.Status.Conditions, v1.PodReady); c != nil {
		return c.Status
	}
	return ""
}

func gateStatus(p *v1.Pod) v1.ConditionStatus {
	if c := findCond(p.Status.Conditions, gate); c != nil {
		return c.Status
	}
	return ""
}

func phaseRank(p v1.PodPhase) int {
	switch p {
	case v1.PodRunning:
		return 1
	case v1.PodSucceeded, v1.PodFailed:
		return 2
	}
	return 0
}

func checkLease(t *testing.T, l *coordinationv1.Lease) {
	t.Helper()
	if l.Spec.RenewTime == nil || time.Since(l.Spec.RenewTime.Time) > 4*time.Second {
		t.Errorf("lease %s: renewTime %v, want within the lease duration (4 s)", l.Name, l.Spec.RenewTime)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != l.Name || ptr.Deref(l.Spec.LeaseDurationSeconds, 0) != 4 {
		t.Errorf("lease %s: holder %v duration %v", l.Name, l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds)
	}
}
