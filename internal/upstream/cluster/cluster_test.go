package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/internal/upstream/cluster"
	"github.com/podstatus/podstatus/simkubelet"
	"github.com/podstatus/podstatus/simkubelet/kubelettest"
)

// Node liveness settings of the test cluster, so that a lost node shows within seconds:
// the node lifecycle controller checks every second and calls a node lost 10 s after its
// last Lease renewal or status; the simulated nodes renew their Lease every 2 s (a
// quarter of 8 s). A real cluster's defaults are 5 s, 50 s and 10 s.
const (
	nodeMonitorGracePeriod = 10 * time.Second
	leaseSeconds           = 8
)

// scenarioLabel selects the pods of one scenario for the simulated kubelet's Behaviors.
const scenarioLabel = "scenario"

// TestCluster starts one control plane and three simulated nodes, and plays each
// scenario on them in turn, each in its own namespace.
func TestCluster(t *testing.T) {
	cp := cluster.StartForTest(t, cluster.Options{
		ControllerManagerFlags: []string{
			"--node-monitor-period=1s",
			"--node-monitor-grace-period=" + nodeMonitorGracePeriod.String(),
		},
	})
	t.Logf("control plane up in %v (kube-apiserver %v, kube-scheduler %v, kube-controller-manager %v)",
		cp.Times.Total.Round(time.Millisecond), cp.Times.APIServer.Round(time.Millisecond),
		cp.Times.Scheduler.Round(time.Millisecond), cp.Times.ControllerManager.Round(time.Millisecond))
	begin := time.Now()
	kubelettest.Start(t, cp.Config, simkubelet.Options{
		Nodes:                    3,
		NodeNamePrefix:           "node-",
		NodeLeaseDurationSeconds: leaseSeconds,
		Behaviors: []simkubelet.Behavior{
			{ // Running, never Ready: a readiness probe that always fails.
				Match:                  simkubelet.MatchLabels(map[string]string{scenarioLabel: "never-ready"}),
				Profile:                "default",
				ReadinessProbeFailures: 1000,
			},
			{ // A Job's pod that exits 42 after a second.
				Match:    simkubelet.MatchLabels(map[string]string{scenarioLabel: "exit-42"}),
				RunTime:  time.Second,
				ExitCode: 42,
			},
			{ // A Job's pod that succeeds after a second.
				Match:   simkubelet.MatchLabels(map[string]string{scenarioLabel: "exit-0"}),
				RunTime: time.Second,
			},
			{ // A sandbox that takes 3 s to be ready.
				Match:        simkubelet.MatchLabels(map[string]string{scenarioLabel: "slow-sandbox"}),
				SandboxDelay: 3 * time.Second,
			},
			{ // A sandbox whose creation fails twice first.
				Match:                 simkubelet.MatchLabels(map[string]string{scenarioLabel: "sandbox-failures"}),
				Profile:               "default",
				SandboxCreateFailures: 2,
			},
		},
	})
	if err := cluster.NodesReady(t.Context(), cp.Client, 3); err != nil {
		t.Fatal(err)
	}
	t.Logf("3 simulated nodes Ready %v after the control plane", time.Since(begin).Round(time.Millisecond))

	scenario := func(name string, f func(t *testing.T, c kubernetes.Interface, ns string)) {
		runScenario(t, cp.Client, name, "", f)
	}
	scenario("workload-verbs", testWorkloadVerbs)
	scenario("pod-ready-plus-plus", func(t *testing.T, c kubernetes.Interface, ns string) { testPodReadyPlusPlus(t, c, ns, true) })
	scenario("pdb-unhealthy-pod-eviction", testUnhealthyPodEviction)
	scenario("job-pod-failure-policy", func(t *testing.T, c kubernetes.Interface, ns string) { testJobPodFailurePolicy(t, c, ns, true) })
	scenario("sandbox-latency", func(t *testing.T, c kubernetes.Interface, ns string) { testSandboxLatency(t, c, ns, true) })
	scenario("node-loss", func(t *testing.T, c kubernetes.Interface, ns string) {
		testNodeLoss(t, cp, ns, lossyNode, func() func() { return startAgent(t, cp) }, true)
	})
}

// testWorkloadVerbs does what kubectl create deployment, rollout restart, scale, drain and
// delete do, and checks that the controllers answer as on a real cluster.
func testWorkloadVerbs(t *testing.T, c kubernetes.Interface, ns string) {
	ctx := t.Context()
	// kubectl create deployment web --image=x --replicas=20
	t0 := time.Now()
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, newDeployment(ns, "web", 20), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := runningReady(t, c, ns, "app=web", 20, time.Minute)
	deploymentComplete(t, c, ns, "web", time.Minute)
	nodes := map[string]int{}
	for _, p := range pods {
		nodes[p.Spec.NodeName]++
	}
	t.Logf("create: 20 pods Running and Ready in %v, spread over nodes %v", time.Since(t0).Round(100*time.Millisecond), nodes)
	if len(nodes) != 3 {
		t.Errorf("the scheduler put the 20 pods on %d nodes (%v), want all 3", len(nodes), nodes)
	}

	// kubectl rollout restart deployment/web: a new template annotation.
	t0 = time.Now()
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, time.Now().Format(time.RFC3339))
	if _, err := c.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deploymentComplete(t, c, ns, "web", 2*time.Minute)
	newPods := runningReady(t, c, ns, "app=web", 20, time.Minute)
	old := map[types.UID]bool{}
	for _, p := range pods {
		old[p.UID] = true
	}
	for _, p := range newPods {
		if old[p.UID] {
			t.Errorf("pod %s survived the rollout restart", p.Name)
		}
	}
	t.Logf("rollout restart: 20 new pods in %v", time.Since(t0).Round(100*time.Millisecond))

	// kubectl scale deployment/web --replicas=6
	t0 = time.Now()
	if _, err := c.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":6}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pods = runningReady(t, c, ns, "app=web", 6, time.Minute)
	t.Logf("scale to 6: in %v", time.Since(t0).Round(100*time.Millisecond))

	// kubectl drain node-X: cordon, then evict every pod on it through the eviction API.
	t0 = time.Now()
	drained := pods[0].Spec.NodeName
	if _, err := c.CoreV1().Nodes().Patch(ctx, drained, types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Spec.NodeName != drained {
			continue
		}
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name}}
		if err := c.PolicyV1().Evictions(ns).Evict(ctx, ev); err != nil {
			t.Fatalf("evict %s: %v", p.Name, err)
		}
	}
	waitFor(t, time.Minute, "no pod left on the drained node", func(ctx context.Context) (bool, string, error) {
		list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + drained})
		if err != nil {
			return false, err.Error(), nil
		}
		return len(list.Items) == 0, fmt.Sprintf("%d pods on %s", len(list.Items), drained), nil
	})
	pods = runningReady(t, c, ns, "app=web", 6, time.Minute)
	for _, p := range pods {
		if p.Spec.NodeName == drained {
			t.Errorf("pod %s was scheduled on the cordoned node %s", p.Name, drained)
		}
	}
	t.Logf("drain %s: its pods gone and replaced elsewhere in %v", drained, time.Since(t0).Round(100*time.Millisecond))
	if _, err := c.CoreV1().Nodes().Patch(ctx, drained, types.MergePatchType, []byte(`{"spec":{"unschedulable":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	// kubectl delete deployment web: background propagation, the garbage collector
	// deletes the ReplicaSets and they their pods.
	t0 = time.Now()
	if err := c.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "every pod and ReplicaSet of the deleted deployment gone", func(ctx context.Context) (bool, string, error) {
		pl, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		rl, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return len(pl.Items) == 0 && len(rl.Items) == 0, fmt.Sprintf("%d pods, %d ReplicaSets", len(pl.Items), len(rl.Items)), nil
	})
	t.Logf("delete: every pod gone in %v", time.Since(t0).Round(100*time.Millisecond))
}

// lbGate is the readiness gate (KEP-580, "pod ready++") the test's load-balancer
// controller sets.
const lbGate v1.PodConditionType = "lb.example.com/registered"

// testPodReadyPlusPlus: pods with a readiness gate set by a load-balancer controller a
// second after their containers are ready, rolled with maxUnavailable 0. No pod may be
// Ready, counted available, or published ready in an EndpointSlice before its gate is
// True, and the rollout must wait for the gates. With strict false (KWOK, whose stages
// do not know readiness gates) what breaks these rules is logged, not failed.
func testPodReadyPlusPlus(t *testing.T, c kubernetes.Interface, ns string, strict bool) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const replicas = 3
	const lbDelay = time.Second

	d := newDeployment(ns, "lb", replicas)
	maxUnavailableZero(d)
	d.Spec.Template.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: lbGate}}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lb"},
		Spec: v1.ServiceSpec{
			Selector: map[string]string{"app": "lb"},
			Ports:    []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if _, err := c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// gated holds the pods whose gate the controller decided to set, marked BEFORE its
	// PATCH is sent: nothing may count a pod as ready before it is marked.
	var mu sync.Mutex
	gated := map[string]time.Time{}
	gatedByHash := map[string]int{}
	sent := map[string]bool{} // the pods whose gate PATCH the load balancer sent
	var violations []string
	violate := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(violations) < 20 {
			violations = append(violations, fmt.Sprintf(format, args...))
		}
	}
	isGated := func(name string) bool {
		mu.Lock()
		defer mu.Unlock()
		_, ok := gated[name]
		return ok
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	podWatch, err := c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sliceWatch, err := c.DiscoveryV1().EndpointSlices(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rsWatch, err := c.AppsV1().ReplicaSets(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lb := c // the load-balancer controller's writes
	wg.Go(func() {
		defer podWatch.Stop()
		for ev := range podWatch.ResultChan() {
			pod, ok := ev.Object.(*v1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			if podReady(pod) && condStatus(pod.Status.Conditions, lbGate) != v1.ConditionTrue {
				violate("pod %s Ready while its gate is %q", pod.Name, condStatus(pod.Status.Conditions, lbGate))
			}
			mu.Lock()
			byLB := sent[pod.Name]
			mu.Unlock()
			if condStatus(pod.Status.Conditions, lbGate) == v1.ConditionTrue && !byLB {
				violate("pod %s has its gate True before the load balancer set it (Ready %v)", pod.Name, podReady(pod))
			}
			if condStatus(pod.Status.Conditions, v1.ContainersReady) != v1.ConditionTrue || isGated(pod.Name) || pod.DeletionTimestamp != nil {
				continue
			}
			mu.Lock()
			gated[pod.Name] = time.Now()
			gatedByHash[pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]]++
			mu.Unlock()
			name := pod.Name
			wg.Go(func() {
				select {
				case <-time.After(lbDelay):
				case <-ctx.Done():
					return
				}
				mu.Lock()
				sent[name] = true
				mu.Unlock()
				patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":"True","lastTransitionTime":%q}]}}`, lbGate, time.Now().UTC().Format(time.RFC3339))
				if _, err := lb.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
					violate("the load balancer could not set the gate of %s: %v", name, err)
				}
			})
		}
	})
	var readyEndpoints int
	wg.Go(func() {
		defer sliceWatch.Stop()
		for ev := range sliceWatch.ResultChan() {
			es, ok := ev.Object.(*discoveryv1.EndpointSlice)
			if !ok {
				continue
			}
			for _, e := range es.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready && e.TargetRef != nil {
					mu.Lock()
					readyEndpoints++
					mu.Unlock()
					if !isGated(e.TargetRef.Name) {
						violate("EndpointSlice %s publishes pod %s ready before its gate was set", es.Name, e.TargetRef.Name)
					}
				}
			}
		}
	})
	wg.Go(func() {
		defer rsWatch.Stop()
		for ev := range rsWatch.ResultChan() {
			rs, ok := ev.Object.(*appsv1.ReplicaSet)
			if !ok {
				continue
			}
			// Every pod counted available must have been gated (a pod's template hash
			// is its ReplicaSet's).
			mu.Lock()
			n := gatedByHash[rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]]
			mu.Unlock()
			if int(rs.Status.AvailableReplicas) > n {
				violate("ReplicaSet %s counts %d available with %d gated pods", rs.Name, rs.Status.AvailableReplicas, n)
			}
		}
	})

	t0 := time.Now()
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deploymentComplete(t, c, ns, "lb", time.Minute)
	created := time.Since(t0)

	t0 = time.Now()
	patch := `{"spec":{"template":{"metadata":{"annotations":{"rollout":"2"}}}}}`
	if _, err := c.AppsV1().Deployments(ns).Patch(ctx, "lb", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deploymentComplete(t, c, ns, "lb", 2*time.Minute)
	rolled := time.Since(t0)
	runningReady(t, c, ns, "app=lb", replicas, time.Minute)
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("Ready++: create complete in %v, rolling update (maxUnavailable 0) in %v with a %v gate delay per pod; %d gates set, %d ready-endpoint observations, %d violations",
		created.Round(100*time.Millisecond), rolled.Round(100*time.Millisecond), lbDelay, len(gated), readyEndpoints, len(violations))
	if !strict {
		for _, v := range violations {
			t.Log("violation: " + v)
		}
		return
	}
	for _, v := range violations {
		t.Error(v)
	}
	if len(gated) != 2*replicas {
		t.Errorf("the load balancer gated %d pods, want %d (%d created, %d rolled)", len(gated), 2*replicas, replicas, replicas)
	}
	if readyEndpoints == 0 {
		t.Error("no EndpointSlice ever published a ready endpoint: the check saw nothing")
	}
	// maxUnavailable 0, maxSurge 1: the rollout replaces one pod at a time, each waiting
	// for its gate, so it cannot end before replicas gate delays.
	if rolled < replicas*lbDelay {
		t.Errorf("the rollout completed in %v, before %d gate delays of %v", rolled, replicas, lbDelay)
	}
}

// testUnhealthyPodEviction: KEP-3017. Three Running pods that are never Ready, under a
// PDB minAvailable 2 whose status the disruption controller writes (0 healthy, 0
// disruptions allowed). With unhealthyPodEvictionPolicy IfHealthyBudget the eviction of
// such a pod is refused (429: the guarded application is already disrupted); with
// AlwaysAllow it is granted.
func testUnhealthyPodEviction(t *testing.T, c kubernetes.Interface, ns string) {
	ctx := t.Context()
	d := newDeployment(ns, "unready", 3)
	d.Spec.Template.Labels[scenarioLabel] = "never-ready"
	d.Spec.Template.Spec.Containers[0].ReadinessProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}},
		PeriodSeconds: 1,
	}
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []v1.Pod
	waitFor(t, time.Minute, "3 pods Running and not Ready", func(ctx context.Context) (bool, string, error) {
		var err error
		pods, err = livePods(ctx, c, ns, "app=unready")
		if err != nil {
			return false, err.Error(), nil
		}
		n := 0
		for _, p := range pods {
			if p.Status.Phase == v1.PodRunning && condStatus(p.Status.Conditions, v1.PodReady) == v1.ConditionFalse {
				n++
			}
		}
		return n == 3 && len(pods) == 3, fmt.Sprintf("%d of %d Running and not Ready", n, len(pods)), nil
	})

	for _, tc := range []struct {
		policy  policyv1.UnhealthyPodEvictionPolicyType
		allowed bool
	}{
		{policyv1.IfHealthyBudget, false},
		{policyv1.AlwaysAllow, true},
	} {
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pdb-" + strings.ToLower(string(tc.policy))},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable:               ptr.To(intstr.FromInt32(2)),
				Selector:                   &metav1.LabelSelector{MatchLabels: map[string]string{"app": "unready"}},
				UnhealthyPodEvictionPolicy: ptr.To(tc.policy),
			},
		}
		t0 := time.Now()
		if _, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var st policyv1.PodDisruptionBudgetStatus
		waitFor(t, time.Minute, "the disruption controller's status of "+pdb.Name, func(ctx context.Context) (bool, string, error) {
			got, err := c.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, pdb.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			st = got.Status
			return st.ObservedGeneration == got.Generation && st.ExpectedPods == 3, fmt.Sprintf("%+v", st), nil
		})
		if st.CurrentHealthy != 0 || st.DesiredHealthy != 2 || st.DisruptionsAllowed != 0 {
			t.Errorf("%s status: currentHealthy %d desiredHealthy %d disruptionsAllowed %d, want 0, 2, 0", pdb.Name, st.CurrentHealthy, st.DesiredHealthy, st.DisruptionsAllowed)
		}
		statusIn := time.Since(t0)

		victim := pods[0].Name
		err := c.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: victim}})
		switch {
		case tc.allowed && err != nil:
			t.Errorf("%s: eviction of the Running, not Ready pod %s refused: %v", tc.policy, victim, err)
		case !tc.allowed && !apierrors.IsTooManyRequests(err):
			t.Errorf("%s: eviction of the Running, not Ready pod %s: %v, want 429 TooManyRequests", tc.policy, victim, err)
		}
		t.Logf("%s: PDB status written in %v (healthy %d/%d, allowed %d); eviction of a Running, not Ready pod: %v",
			tc.policy, statusIn.Round(100*time.Millisecond), st.CurrentHealthy, st.DesiredHealthy, st.DisruptionsAllowed, errString(err))
		if err := c.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, pdb.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "granted"
	}
	return err.Error()
}

// testJobPodFailurePolicy: a Job whose pod exits 42, matched by a FailJob rule of its
// podFailurePolicy, fails with reason PodFailurePolicy; one whose pods exit 0 completes.
// With exitCodes false (KWOK: its default stages complete every Job pod with exit code 0)
// only the second runs.
func testJobPodFailurePolicy(t *testing.T, c kubernetes.Interface, ns string, exitCodes bool) {
	ctx := t.Context()
	newJob := func(name, scenario string, completions int32) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: batchv1.JobSpec{
				Completions:  ptr.To(completions),
				Parallelism:  ptr.To(completions),
				BackoffLimit: ptr.To[int32](6),
				PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
					Action:      batchv1.PodFailurePolicyActionFailJob,
					OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: ptr.To("app"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
				}}},
				Template: v1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{scenarioLabel: scenario}},
					Spec: v1.PodSpec{
						RestartPolicy: v1.RestartPolicyNever,
						Containers:    []v1.Container{{Name: "app", Image: "registry.k8s.io/busybox:1.36"}},
					},
				},
			},
		}
	}
	type jobCase struct {
		job    *batchv1.Job
		want   batchv1.JobConditionType
		reason string
	}
	cases := []jobCase{{newJob("completes", "exit-0", 2), batchv1.JobComplete, batchv1.JobReasonCompletionsReached}}
	if exitCodes {
		cases = append(cases, jobCase{newJob("fails", "exit-42", 1), batchv1.JobFailed, batchv1.JobReasonPodFailurePolicy})
	}
	for _, tc := range cases {
		t0 := time.Now()
		if _, err := c.BatchV1().Jobs(ns).Create(ctx, tc.job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var got batchv1.JobCondition
		waitFor(t, time.Minute, "job "+tc.job.Name+" finished", func(ctx context.Context) (bool, string, error) {
			j, err := c.BatchV1().Jobs(ns).Get(ctx, tc.job.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			for _, cnd := range j.Status.Conditions {
				if (cnd.Type == batchv1.JobComplete || cnd.Type == batchv1.JobFailed) && cnd.Status == v1.ConditionTrue {
					got = cnd
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("active %d succeeded %d failed %d", j.Status.Active, j.Status.Succeeded, j.Status.Failed), nil
		})
		if got.Type != tc.want || got.Reason != tc.reason {
			t.Errorf("job %s: condition %s reason %q (%s), want %s reason %q", tc.job.Name, got.Type, got.Reason, got.Message, tc.want, tc.reason)
		}
		t.Logf("job %s: %s (%s) in %v", tc.job.Name, got.Type, got.Reason, time.Since(t0).Round(100*time.Millisecond))
	}
}

// testSandboxLatency: KEP-3085. The PodReadyToStartContainers condition turns True when
// the sandbox is ready; its lastTransitionTime minus PodScheduled's is the sandbox's
// creation latency as a user reads it (second precision). With behaviors false (KWOK:
// its stages have no sandbox) a plain pod's conditions are reported.
func testSandboxLatency(t *testing.T, c kubernetes.Interface, ns string, behaviors bool) {
	ctx := t.Context()
	type sandboxCase struct {
		scenario string
		min, max time.Duration
	}
	cases := []sandboxCase{
		{"slow-sandbox", 2 * time.Second, 6 * time.Second},  // SandboxDelay 3 s
		{"sandbox-failures", time.Second, 30 * time.Second}, // two failed attempts, then a sandbox of the default profile
	}
	if !behaviors {
		cases = []sandboxCase{{"plain", 0, time.Minute}}
	}
	for _, tc := range cases {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.scenario, Labels: map[string]string{scenarioLabel: tc.scenario}},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if _, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var falseSeen bool
		var p *v1.Pod
		waitFor(t, time.Minute, tc.scenario+" Ready", func(ctx context.Context) (bool, string, error) {
			var err error
			p, err = c.CoreV1().Pods(ns).Get(ctx, tc.scenario, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			if condStatus(p.Status.Conditions, v1.PodReadyToStartContainers) == v1.ConditionFalse {
				falseSeen = true
			}
			return podReady(p), string(p.Status.Phase), nil
		})
		sched, rtsc := cond(p.Status.Conditions, v1.PodScheduled), cond(p.Status.Conditions, v1.PodReadyToStartContainers)
		if !behaviors && rtsc == nil {
			t.Logf("%s: Ready without a PodReadyToStartContainers condition (conditions %v): no sandbox latency to read", tc.scenario, conditionTypes(p.Status.Conditions))
			continue
		}
		if sched == nil || rtsc == nil || rtsc.Status != v1.ConditionTrue {
			t.Fatalf("%s: PodScheduled %+v, PodReadyToStartContainers %+v", tc.scenario, sched, rtsc)
		}
		latency := rtsc.LastTransitionTime.Sub(sched.LastTransitionTime.Time)
		if latency < tc.min || latency > tc.max {
			t.Errorf("%s: sandbox latency %v, want %v to %v", tc.scenario, latency, tc.min, tc.max)
		}
		if !falseSeen {
			t.Logf("%s: PodReadyToStartContainers was never seen False by the poll (it is while the sandbox is created)", tc.scenario)
		}
		t.Logf("%s: PodReadyToStartContainers.lastTransitionTime - PodScheduled.lastTransitionTime = %v", tc.scenario, latency)
	}
}

func conditionTypes(conds []v1.PodCondition) []string {
	var out []string
	for _, c := range conds {
		out = append(out, string(c.Type)+"="+string(c.Status))
	}
	return out
}
