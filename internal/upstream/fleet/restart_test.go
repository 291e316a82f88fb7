package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/simkubelet"
)

// The restart test's size: PODSTATUS_RESTART_PODS pods (default 200) and
// PODSTATUS_RESTART_KILLS kills (default 4), with PODSTATUS_RESTART_SEED (default 1).
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a whole number", name, v)
	}
	return n
}

// errKilled is every request of an agent process that was killed.
var errKilled = errors.New("agent killed")

// killSwitch cuts one agent's transport at once, as a SIGKILL does: from kill on, no
// request leaves and no response or watch event reaches the agent (a request already on
// the wire may still land, as it would).
type killSwitch struct{ dead atomic.Bool }

func (k *killSwitch) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(req *http.Request) (*http.Response, error) {
		if k.dead.Load() {
			return nil, errKilled
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		if k.dead.Load() {
			resp.Body.Close()
			return nil, errKilled
		}
		resp.Body = killBody{ReadCloser: resp.Body, k: k}
		return resp, nil
	})
}

type killBody struct {
	io.ReadCloser
	k *killSwitch
}

func (b killBody) Read(p []byte) (int, error) {
	if b.k.dead.Load() {
		return 0, errKilled
	}
	return b.ReadCloser.Read(p)
}

// patchRecord is one status PATCH the API server answered 200, with the resourceVersion
// of its answer.
type patchRecord struct {
	agent      int
	uid        types.UID
	name, rv   string
	start, end time.Time
	body       string // the patch
	got        string // the answer's phase and deletion
	// forceDeleted is set when the answer has a deletionTimestamp and a grace period of
	// 0: the server deleted the pod instead of writing the status (ShouldDeleteDuringUpdate
	// in k8s.io/apiserver's pkg/registry/generic/registry/store.go), so the PATCH made no
	// version without being a no-op.
	forceDeleted bool
}

// patchLog records the status PATCHes of every agent process.
type patchLog struct {
	mu      sync.Mutex
	patches []patchRecord
	// notFound counts the requests about pods answered 404 Not Found (all agents).
	notFound atomic.Int64
}

func (l *patchLog) wrap(agent int) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return rtFunc(func(req *http.Request) (*http.Response, error) {
			start := time.Now()
			var sent []byte
			if req.Method == http.MethodPatch && req.GetBody != nil {
				if b, err := req.GetBody(); err == nil {
					sent, _ = io.ReadAll(b)
				}
			}
			resp, err := rt.RoundTrip(req)
			if err == nil && resp.StatusCode == http.StatusNotFound && strings.Contains(req.URL.Path, "/pods/") {
				l.notFound.Add(1)
			}
			if err != nil || req.Method != http.MethodPatch || resp.StatusCode != http.StatusOK ||
				!strings.Contains(req.URL.Path, "/pods/") || !strings.HasSuffix(req.URL.Path, "/status") {
				return resp, err
			}
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			if rerr != nil {
				return resp, nil
			}
			obj, _, derr := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
			if p, ok := obj.(*v1.Pod); ok && derr == nil {
				l.mu.Lock()
				l.patches = append(l.patches, patchRecord{agent: agent, uid: p.UID, name: p.Name, rv: p.ResourceVersion, start: start, end: time.Now(), body: string(sent),
					forceDeleted: p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 0,
					got:          fmt.Sprintf("%s/gen%d/del=%v/ogen%d", p.Status.Phase, p.Generation, p.DeletionTimestamp != nil, p.Status.ObservedGeneration)})
				l.mu.Unlock()
			}
			return resp, nil
		})
	}
}

// versionLog is every version of the test's pods, as the test's own watch saw them.
type versionLog struct {
	mu       sync.Mutex
	versions map[types.UID][]*v1.Pod
}

func (l *versionLog) run(ctx context.Context, t *testing.T, srv *apiserver.Server, ns string, done chan<- struct{}) {
	defer close(done)
	cs := srv.NewClient(t, "restart-test-watcher")
	rv := "0"
	for ctx.Err() == nil {
		w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() == nil {
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
			if ev.Type == watch.Bookmark || ev.Type == watch.Deleted {
				continue
			}
			l.mu.Lock()
			l.versions[pod.UID] = append(l.versions[pod.UID], pod)
			l.mu.Unlock()
		}
		w.Stop()
	}
}

// restartKind is a pod's behaviour in the restart test.
type restartKind string

const (
	rPlain     restartKind = "plain"     // never exits
	rSidecar   restartKind = "sidecar"   // init container, then a sidecar with a readiness probe
	rProbes    restartKind = "probes"    // readiness probe failing a few times first
	rGated     restartKind = "gated"     // readiness gate the test sets True later
	rSucceeds  restartKind = "succeeds"  // restartPolicy Never, exits 0
	rFails     restartKind = "fails"     // restartPolicy Never, exits 1
	rCrashloop restartKind = "crashloop" // restartPolicy Always, exits 1 again and again
)

var restartMix = []restartKind{rPlain, rPlain, rSidecar, rProbes, rGated, rSucceeds, rFails, rCrashloop}

// neverRestarts reports whether no container of a pod of kind k ever restarts by itself.
func (k restartKind) neverRestarts() bool { return k != rCrashloop }

// steadyReady reports whether a pod of kind k, once Ready, stays Ready until deleted.
func (k restartKind) steadyReady() bool {
	return k == rPlain || k == rSidecar || k == rProbes || k == rGated
}

func newRestartPod(ns string, k restartKind, i int, node string) *v1.Pod {
	p := apiserver.NewPod(ns, fmt.Sprintf("%s-%d", k, i), node)
	p.Labels = map[string]string{"kind": string(k)}
	p.Annotations = map[string]string{
		podsim.AnnotationSandboxDelay:      "50ms..1s",
		podsim.AnnotationImagePullDelay:    "0s..500ms",
		podsim.AnnotationStartDelay:        "20ms..500ms",
		podsim.AnnotationInitRunTime:       "200ms..2s",
		podsim.AnnotationStopDelay:         "200ms..3s",
		podsim.AnnotationStartupFailures:   "0",
		podsim.AnnotationReadinessFailures: "0",
	}
	p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5)
	switch k {
	case rSidecar:
		always := v1.ContainerRestartPolicyAlways
		p.Spec.InitContainers = []v1.Container{
			{Name: "setup", Image: "busybox"},
			{Name: "proxy", Image: "envoy", RestartPolicy: &always,
				ReadinessProbe: &v1.Probe{ProbeHandler: execProbe(), PeriodSeconds: 1}},
		}
	case rProbes:
		p.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: execProbe(), PeriodSeconds: 1}
		p.Annotations[podsim.AnnotationReadinessFailures] = "1..4"
	case rGated:
		p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
	case rSucceeds, rFails:
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		p.Annotations[podsim.AnnotationRunTime] = "1s..12s"
		if k == rFails {
			p.Annotations[podsim.AnnotationExitCode] = "1"
		}
	case rCrashloop:
		p.Annotations[podsim.AnnotationRunTime] = "300ms..2s"
		p.Annotations[podsim.AnnotationExitCode] = "1"
	}
	return p
}

// stepLog follows what the agents generate, through Options.OnStatus: the containers an
// agent started in a pod it knew was being deleted, and, per agent process, when it first
// stepped each pod.
type stepLog struct {
	mu sync.Mutex
	// last is the newest status generated for each pod, and by which agent.
	last      map[types.UID]v1.PodStatus
	lastAgent map[types.UID]int
	// first is, per agent, when it first stepped each pod.
	first []map[types.UID]time.Time
	// startedTerminating lists "agent N: pod/container" for every container started
	// (first start or restart) in a step of a pod with a deletionTimestamp.
	startedTerminating []string
	// adoptedTerminating counts pods an agent other than the first adopted with a
	// deletionTimestamp.
	adoptedTerminating int
	// ipHolder is, per agent, the pod whose newest non-terminal status it generated has
	// an IP (an agent's status the server never got, as it was killed, binds no other);
	// shared lists the pods an agent gave an IP another pod had from it.
	ipHolder []map[string]types.UID
	shared   []sharedIP
}

type sharedIP struct {
	holder, taker types.UID
	ip            string
	agent         int
}

func (l *stepLog) onStatus(agent int) func(*v1.Pod, podstate.Input, v1.PodStatus) {
	return func(pod *v1.Pod, _ podstate.Input, s v1.PodStatus) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, seen := l.first[agent][pod.UID]; !seen {
			l.first[agent][pod.UID] = time.Now()
			if agent > 0 && pod.DeletionTimestamp != nil {
				l.adoptedTerminating++
			}
		}
		base, ok := l.last[pod.UID]
		adopted := !ok || l.lastAgent[pod.UID] != agent
		if adopted {
			base = pod.Status // adopted: the previous agent's work is what the server has
		}
		if pod.DeletionTimestamp != nil {
			for _, c := range slices.Concat(s.InitContainerStatuses, s.ContainerStatuses) {
				if b := findStatus(base, c.Name); started(c, b) {
					l.startedTerminating = append(l.startedTerminating, fmt.Sprintf("agent %d: %s/%s (adopted in this step: %v; deletion %s; before %s, now %s)",
						agent, pod.Name, c.Name, adopted, pod.DeletionTimestamp.Format(time.RFC3339), containerState(b), containerState(&c)))
				}
			}
		}
		if ip := s.PodIP; ip != "" && !terminalPhase(s.Phase) {
			if h, ok := l.ipHolder[agent][ip]; ok && h != pod.UID {
				l.shared = append(l.shared, sharedIP{holder: h, taker: pod.UID, ip: ip, agent: agent})
			}
			l.ipHolder[agent][ip] = pod.UID
		}
		l.last[pod.UID], l.lastAgent[pod.UID] = s, agent
	}
}

func containerState(c *v1.ContainerStatus) string {
	if c == nil {
		return "none"
	}
	st := fmt.Sprintf("restarts %d, id %q, ", c.RestartCount, c.ContainerID)
	switch {
	case c.State.Running != nil:
		st += "running since " + c.State.Running.StartedAt.Format(time.RFC3339)
	case c.State.Terminated != nil:
		st += "terminated " + c.State.Terminated.Reason
	case c.State.Waiting != nil:
		st += "waiting " + c.State.Waiting.Reason
	}
	return st
}

func findStatus(s v1.PodStatus, name string) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// started reports whether c shows a container start that before does not: a restart
// counted, or a container ID where there was none (a container that never ran has none,
// even once TerminatePod marked it terminated).
func started(c v1.ContainerStatus, before *v1.ContainerStatus) bool {
	if before == nil {
		return c.ContainerID != ""
	}
	return c.RestartCount > before.RestartCount || (c.ContainerID != "" && before.ContainerID == "")
}

// agentRun is one agent process of the restart test.
type agentRun struct {
	kill    *killSwitch
	cancel  context.CancelFunc
	done    chan error
	started time.Time
	// pods are the test's pods that could still run when it started.
	pods []types.UID
}

// A simulated kubelet killed (SIGKILL: no flush, no goodbye) at random moments and
// restarted, while pods of mixed behaviours run, start, crash, finish and are deleted,
// keeps its promise on adoption: no phase goes back, no container starts in a pod being
// deleted, no restart is counted that the pod's behaviour does not explain, no Ready
// condition of a Ready pod flaps, and no PATCH after a restart leaves a pod as it was
// (counted at the API server: a PATCH that changes nothing makes no new resourceVersion,
// and the server answers it with the version it had). It reports how long each new
// agent took to take over (every pod stepped, the PATCHes that started meanwhile
// answered).
//
// PODSTATUS_RESTART_PODS, PODSTATUS_RESTART_KILLS and PODSTATUS_RESTART_SEED make a
// larger or another run.
func TestKilledAgentAdoptsItsPods(t *testing.T) {
	pods := envInt(t, "PODSTATUS_RESTART_PODS", 200)
	kills := envInt(t, "PODSTATUS_RESTART_KILLS", 4)
	seed := uint64(envInt(t, "PODSTATUS_RESTART_SEED", 1))
	rnd := rand.New(rand.NewPCG(seed, 0x7e57))
	nodes := max(2, (pods+99)/100)

	srv := apiserver.Start(t)
	ctx := context.Background()
	ns := srv.CreateNamespace(t, "restart-").Name
	gateCtl := srv.NewClient(t, "gate-controller")

	versions := &versionLog{versions: map[types.UID][]*v1.Pod{}}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan struct{})
	go versions.run(watchCtx, t, srv, ns, watchDone)
	defer func() {
		stopWatch()
		<-watchDone
	}()

	patches := &patchLog{}
	steps := &stepLog{last: map[types.UID]v1.PodStatus{}, lastAgent: map[types.UID]int{}}
	var (
		mu      sync.Mutex
		created = map[string]types.UID{}
		kinds   = map[types.UID]restartKind{}
		deleted = map[types.UID]bool{}
	)
	// runningPods lists the test's pods that may still run (not terminal): those a new
	// agent steps (a finished pod is settled, never stepped).
	runningPods := func() []types.UID {
		list, err := srv.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("list pods: %v", err)
			return nil
		}
		var uids []types.UID
		for i := range list.Items {
			if !terminalPhase(list.Items[i].Status.Phase) {
				uids = append(uids, list.Items[i].UID)
			}
		}
		return uids
	}

	var agents []*agentRun
	start := func() *agentRun {
		i := len(agents)
		steps.mu.Lock()
		steps.first = append(steps.first, map[types.UID]time.Time{})
		steps.ipHolder = append(steps.ipHolder, map[string]types.UID{})
		steps.mu.Unlock()
		ks := &killSwitch{}
		rc := rest.CopyConfig(srv.Config)
		rc.UserAgent = "fleet-restart"
		rc.Wrap(ks.wrap)
		rc.Wrap(patches.wrap(i))
		actx, cancel := context.WithCancel(ctx)
		a := &agentRun{kill: ks, cancel: cancel, done: make(chan error, 1), started: time.Now(), pods: runningPods()}
		go func() {
			a.done <- runKubelet(actx, rc, simkubelet.Options{
				Nodes: nodes, NodeNamePrefix: "restart-node-", MaxPods: 250,
				NodeLeaseDurationSeconds: 10, Profile: "fast", Seed: seed,
				ShutdownTimeout: 2 * time.Second, ProgressInterval: -1,
				OnStatus: steps.onStatus(i),
				Logger:   testr.NewWithOptions(t, testr.Options{Verbosity: 0}).WithName(strconv.Itoa(i)),
			})
		}()
		agents = append(agents, a)
		return a
	}
	stop := func(a *agentRun) {
		a.cancel()
		select {
		case err := <-a.done:
			if err != nil {
				t.Errorf("agent Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("an agent did not stop within 30 s of its context being cancelled")
		}
	}
	defer func() {
		if a := agents[len(agents)-1]; a.cancel != nil {
			stop(a)
		}
	}()
	start()

	// The script: pods created over the first 3 s, gates set, ~10% deleted (a third of them force-deleted), and the agent
	// killed and restarted, each at a random moment.
	type action struct {
		at time.Duration
		do func()
	}
	var script []action
	span := 20 * time.Second
	for i := range pods {
		k := restartMix[i%len(restartMix)]
		at := time.Duration(rnd.Int64N(int64(3 * time.Second)))
		p := newRestartPod(ns, k, i, fmt.Sprintf("restart-node-%d", i%nodes))
		script = append(script, action{at, func() {
			got, err := srv.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			if err != nil {
				t.Errorf("create pod %s: %v", p.Name, err)
				return
			}
			mu.Lock()
			created[got.Name], kinds[got.UID] = got.UID, k
			mu.Unlock()
		}})
		if k == rGated {
			script = append(script, action{at + time.Duration(rnd.Int64N(int64(10*time.Second))), func() {
				patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":"True"}]}}`, gate)
				_, err := gateCtl.CoreV1().Pods(ns).Patch(ctx, p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
				if err != nil && !strings.Contains(err.Error(), "not found") {
					t.Errorf("set gate of %s: %v", p.Name, err)
				}
			}})
		}
		if rnd.IntN(10) == 0 {
			grace := int64(5)
			if rnd.IntN(3) == 0 {
				grace = 0
			}
			script = append(script, action{at + time.Duration(rnd.Int64N(int64(span-at))), func() {
				mu.Lock()
				uid, ok := created[p.Name]
				mu.Unlock()
				if !ok {
					return
				}
				mu.Lock()
				deleted[uid] = true // before: its IP may be another pod's as soon as it is gone
				mu.Unlock()
				err := srv.Client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
				if err != nil {
					t.Errorf("delete pod %s: %v", p.Name, err)
				}
			}})
		}
	}
	// Kills spread over the span, each in its own slot so that every agent runs a while.
	// Before each, a pod whose containers take 6 s to stop is deleted, so that every new
	// agent adopts at least one terminating pod.
	slot := span / time.Duration(kills+1)
	for i := range kills {
		at := slot*time.Duration(i+1) - slot/2 + time.Duration(rnd.Int64N(int64(slot/2)))
		down := 200*time.Millisecond + time.Duration(rnd.Int64N(int64(1300*time.Millisecond)))
		slow := newRestartPod(ns, rPlain, pods+i, fmt.Sprintf("restart-node-%d", i%nodes))
		slow.Name = fmt.Sprintf("slowstop-%d", i)
		slow.Annotations[podsim.AnnotationStopDelay] = "6s"
		slow.Spec.TerminationGracePeriodSeconds = ptr.To[int64](10)
		script = append(script, action{0, func() {
			got, err := srv.Client.CoreV1().Pods(ns).Create(ctx, slow, metav1.CreateOptions{})
			if err != nil {
				t.Errorf("create pod %s: %v", slow.Name, err)
				return
			}
			mu.Lock()
			created[got.Name], kinds[got.UID] = got.UID, rPlain
			mu.Unlock()
		}}, action{at - 700*time.Millisecond, func() {
			mu.Lock()
			deleted[created[slow.Name]] = true
			mu.Unlock()
			if err := srv.Client.CoreV1().Pods(ns).Delete(ctx, slow.Name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete pod %s: %v", slow.Name, err)
			}
		}})
		script = append(script, action{at, func() {
			a := agents[len(agents)-1]
			a.kill.dead.Store(true) // SIGKILL: nothing more leaves
			a.cancel()
			select {
			case <-a.done:
			case <-time.After(30 * time.Second):
				t.Errorf("a killed agent's Run did not return within 30 s")
			}
			a.cancel = nil
			time.Sleep(down)
			start()
		}})
	}
	slices.SortStableFunc(script, func(a, b action) int { return int(a.at - b.at) })
	began := time.Now()
	for _, a := range script {
		if d := a.at - time.Since(began); d > 0 {
			time.Sleep(d)
		}
		a.do()
	}

	// The end: jobs finished, deleted pods gone, the others Running; every agent's
	// pods stepped.
	poll := func(what string, timeout time.Duration, cond func() (bool, error)) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond() }); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	poll("every pod settled", 60*time.Second, func() (bool, error) {
		list, err := srv.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		mu.Lock()
		defer mu.Unlock()
		left := 0
		for _, u := range created {
			if !deleted[u] {
				left++
			}
		}
		if len(list.Items) != left {
			return false, nil
		}
		for i := range list.Items {
			p := &list.Items[i]
			want := v1.PodRunning
			switch kinds[p.UID] {
			case rSucceeds:
				want = v1.PodSucceeded
			case rFails:
				want = v1.PodFailed
			}
			if p.Status.Phase != want {
				return false, nil
			}
			if kinds[p.UID].steadyReady() && readyStatus(p) != v1.ConditionTrue {
				return false, nil
			}
		}
		return true, nil
	})
	last := agents[len(agents)-1]
	stop(last)
	last.cancel = nil
	time.Sleep(500 * time.Millisecond) // the watch's last events
	stopWatch()
	<-watchDone

	// Server-side counts, from every version of every pod.
	versions.mu.Lock()
	defer versions.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	var phaseRegressions, agentRestarts, readyFlaps []string
	statusChanged := map[types.UID]map[string]bool{} // resourceVersions whose status differs from the version before
	for uid, vs := range versions.versions {
		k := kinds[uid]
		statusChanged[uid] = map[string]bool{}
		for i, v := range vs {
			if i == 0 {
				continue
			}
			prev := vs[i-1]
			if !equalStatus(&prev.Status, &v.Status) {
				statusChanged[uid][v.ResourceVersion] = true
			}
			if (terminalPhase(prev.Status.Phase) && !terminalPhase(v.Status.Phase)) ||
				(prev.Status.Phase == v1.PodRunning && v.Status.Phase == v1.PodPending) {
				phaseRegressions = append(phaseRegressions, fmt.Sprintf("%s: %s → %s (rv %s)", v.Name, prev.Status.Phase, v.Status.Phase, v.ResourceVersion))
			}
			for _, c := range slices.Concat(v.Status.InitContainerStatuses, v.Status.ContainerStatuses) {
				b := findStatus(prev.Status, c.Name)
				if b != nil && (c.RestartCount < b.RestartCount || (k.neverRestarts() && c.RestartCount > b.RestartCount)) {
					agentRestarts = append(agentRestarts, fmt.Sprintf("%s/%s: restartCount %d → %d (rv %s)", v.Name, c.Name, b.RestartCount, c.RestartCount, v.ResourceVersion))
				}
			}
			if k.steadyReady() && v.DeletionTimestamp == nil && readyStatus(prev) == v1.ConditionTrue && readyStatus(v) != v1.ConditionTrue {
				readyFlaps = append(readyFlaps, fmt.Sprintf("%s: Ready True → %s (rv %s)", v.Name, readyStatus(v), v.ResourceVersion))
			}
		}
	}

	// PATCHes that made no new version: the server answered with a version some other
	// write made (one whose status did not change), or with the version another PATCH's
	// answer already had.
	patches.mu.Lock()
	defer patches.mu.Unlock()
	type stats struct{ patches, noop int }
	perAgent := make([]stats, len(agents))
	seenRV := map[string]bool{}
	var noops []string
	metForceDelete := 0
	for _, p := range patches.patches {
		perAgent[p.agent].patches++
		if p.forceDeleted {
			metForceDelete++
			continue
		}
		key := string(p.uid) + "/" + p.rv
		noop := seenRV[key]
		seenRV[key] = true
		if ch, ok := statusChanged[p.uid]; ok && !ch[p.rv] {
			noop = true
		}
		if noop {
			perAgent[p.agent].noop++
			if p.agent > 0 {
				var hist []string
				for _, v := range versions.versions[p.uid] {
					hist = append(hist, fmt.Sprintf("%s:%s/gen%d/del=%v/ogen%d/changed=%v", v.ResourceVersion, v.Status.Phase, v.Generation, v.DeletionTimestamp != nil, v.Status.ObservedGeneration, statusChanged[p.uid][v.ResourceVersion]))
				}
				noops = append(noops, fmt.Sprintf("agent %d: %s rv %s, %s after the agent started: %s; answer %s; versions %v", p.agent, p.name, p.rv,
					p.start.Sub(agents[p.agent].started).Round(time.Millisecond), p.body, p.got, hist))
			}
		}
	}

	// Time to take over: from a restarted agent's start until it stepped every pod that
	// existed then (and was not deleted meanwhile), and the PATCHes it started until then
	// were answered.
	steps.mu.Lock()
	defer steps.mu.Unlock()
	var takeover []string
	for i, a := range agents[1:] {
		i++
		done, missed := a.started, 0
		for _, uid := range a.pods {
			f, ok := steps.first[i][uid]
			switch {
			case !ok && !deleted[uid]:
				missed++
			case ok && f.After(done):
				done = f
			}
		}
		if missed > 0 && i+1 < len(agents) {
			takeover = append(takeover, fmt.Sprintf("killed after %s with %d pods not stepped",
				agents[i+1].started.Sub(a.started).Round(time.Millisecond), missed))
			continue
		}
		if missed > 0 {
			t.Errorf("the last agent never stepped %d of the pods it listed", missed)
		}
		for _, p := range patches.patches {
			if p.agent == i && !p.start.After(done) && p.end.After(done) {
				done = p.end
			}
		}
		takeover = append(takeover, done.Sub(a.started).Round(time.Millisecond).String())
	}
	// Pod IPs given to a second pod while the first still ran: only a first pod that was
	// never deleted and never finishes counts (a finished or deleted pod's IP is free).
	var sharedIPs []string
	names := map[types.UID]string{}
	for n, u := range created {
		names[u] = n
	}
	for _, sh := range steps.shared {
		if k := kinds[sh.holder]; !deleted[sh.holder] && k != rSucceeds && k != rFails {
			sharedIPs = append(sharedIPs, fmt.Sprintf("agent %d: %s given %s, the IP of %s", sh.agent, names[sh.taker], sh.ip, names[sh.holder]))
		}
	}
	restartedNoop := 0
	for _, s := range perAgent[1:] {
		restartedNoop += s.noop
	}
	nVersions := 0
	for _, vs := range versions.versions {
		nVersions += len(vs)
	}
	t.Logf("restart e2e (seed %d): %d pods on %d nodes, %d deleted, %d kills; %d pod versions, %d status PATCHes (per agent process: %v)",
		seed, len(created), nodes, len(deleted), kills, nVersions, len(patches.patches), perAgent)
	t.Logf("status PATCHes that met a force deletion (the server deleted the pod instead of writing it): %d; requests about pods answered 404: %d",
		metForceDelete, patches.notFound.Load())
	t.Logf("phase regressions %d, containers started in terminating pods %d (pods adopted while terminating: %d), restarts counted because of the agent %d, Ready flaps %d, pod IPs shared %d, needless PATCHes after a restart %d; time to take over after each restart: %v",
		len(phaseRegressions), len(steps.startedTerminating), steps.adoptedTerminating, len(agentRestarts), len(readyFlaps), len(sharedIPs), restartedNoop, takeover)
	report := func(what string, list []string) {
		t.Helper()
		if len(list) == 0 {
			return
		}
		t.Errorf("%d %s, want 0:\n%s", len(list), what, strings.Join(list[:min(len(list), 20)], "\n"))
	}
	if steps.adoptedTerminating < kills {
		t.Errorf("%d pods adopted while terminating, want at least one per kill (%d)", steps.adoptedTerminating, kills)
	}
	report("phase regressions", phaseRegressions)
	report("containers started in terminating pods", steps.startedTerminating)
	report("restarts counted because of the agent", agentRestarts)
	report("Ready flaps", readyFlaps)
	report("pod IPs shared by two running pods", sharedIPs)
	report("needless PATCHes after a restart", noops)
}

func terminalPhase(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// equalStatus reports whether two statuses are the same, as the API server would store
// them (a PATCH that leaves a status so makes no new version).
func equalStatus(a, b *v1.PodStatus) bool {
	x, err1 := a.Marshal()
	y, err2 := b.Marshal()
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
