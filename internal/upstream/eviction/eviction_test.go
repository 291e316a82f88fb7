package eviction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	predict "github.com/podstatus/podstatus/readiness/eviction"
)

// minCases is the number of cases a run makes at least.
const minCases = 200

// defaultSeed makes runs reproducible unless PODSTATUS_EVICTION_SEED is set.
const defaultSeed = 20260121

// workers is how many cases run at once. Most of a case's time is spent
// waiting (some requests make the handler retry for about ten seconds), so
// more workers than cores keep the run short.
const workers = 12

// caseResult is what one case found.
type caseResult struct {
	spec     caseSpec
	path     predict.Path
	code     int32
	allowed  bool
	dryRun   bool
	problems []string // mismatches between Decide and the server
	setupErr error    // the case could not be set up or observed
	evict    bool     // the request went through client-go's Evict
	detail   string   // the kind of refusal, for the outcome table
}

// TestDecideAgainstAPIServer runs the random cases against a real
// kube-apiserver and fails on any difference between Decide's prediction and
// the server's answer or side effects.
func TestDecideAgainstAPIServer(t *testing.T) {
	n := minCases
	if v := os.Getenv("PODSTATUS_EVICTION_CASES"); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("PODSTATUS_EVICTION_CASES=%q: %v", v, err)
		}
		n = max(n, k)
	}
	seed := uint64(defaultSeed)
	if v := os.Getenv("PODSTATUS_EVICTION_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("PODSTATUS_EVICTION_SEED=%q: %v", v, err)
		}
		seed = s
	}

	srv := apiserver.Start(t)
	ctx := t.Context()
	begin := time.Now()

	decoy, err := createDecoy(ctx, srv.Client)
	if err != nil {
		t.Fatalf("decoy PDB: %v", err)
	}

	etcd, err := newEtcdWriter(ctx, srv.EtcdEndpoints, decoy)
	if err != nil {
		t.Fatalf("etcd: %v", err)
	}
	defer etcd.Close()

	results := make([]caseResult, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		cap := &capture{}
		evictClient, err := newCapturingClient(srv.Config, cap)
		if err != nil {
			t.Fatalf("capturing client: %v", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = runCase(ctx, srv.Client, evictClient, cap, etcd, decoy, genCase(seed, i))
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()

	// The decoy is never touched.
	if got, err := srv.Client.PolicyV1().PodDisruptionBudgets(decoy.Namespace).Get(ctx, decoy.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("read decoy PDB: %v", err)
	} else if got.ResourceVersion != decoy.ResourceVersion {
		t.Errorf("decoy PDB %s/%s was written (resourceVersion %s -> %s)", decoy.Namespace, decoy.Name, decoy.ResourceVersion, got.ResourceVersion)
	}

	mismatches, setupErrors, viaEvict := 0, 0, 0
	paths := map[predict.Path]int{}
	outcomes := map[string]int{}
	for _, r := range results {
		if r.setupErr != nil {
			setupErrors++
			t.Errorf("%v\n  setup: %v", r.spec, r.setupErr)
			continue
		}
		paths[r.path]++
		outcomes[fmt.Sprintf("%s -> %d allowed=%t dryRun=%t%s", r.path, r.code, r.allowed, r.dryRun, r.detail)]++
		if r.evict {
			viaEvict++
		}
		if len(r.problems) > 0 {
			mismatches++
			t.Errorf("%v\n  %s", r.spec, strings.Join(r.problems, "\n  "))
		}
	}

	var lines []string
	for k, v := range outcomes {
		lines = append(lines, fmt.Sprintf("%4d  %s", v, k))
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][5:] < lines[j][5:] })
	t.Logf("outcomes (count, Decide's path -> code):\n%s", strings.Join(lines, "\n"))
	summary := fmt.Sprintf("eviction: %d cases, %d mismatches (seed %d, %d through client-go's Evict, %d setup errors, %v)",
		n, mismatches, seed, viaEvict, setupErrors, time.Since(begin).Round(time.Millisecond))
	t.Log(summary)
	fmt.Println(summary)

	// Every branch must have been exercised, or the run proves less than it
	// claims. Every branch takes at least 2% of the cases (TestCaseMix checks
	// the generator), so with the default seed (deterministic) or 1000 cases
	// and more this cannot fail by chance; 200 cases of another seed miss one
	// with odds under 2%, which is only logged.
	strict := seed == defaultSeed || n >= 1000
	for _, p := range []predict.Path{
		predict.PathInvalidRequest, predict.PathPodStateIgnoresPDB, predict.PathMultiplePDBs, predict.PathNoPDB,
		predict.PathUnhealthyAlwaysAllow, predict.PathUnhealthyIfHealthyBudget, predict.PathPDBStale, predict.PathNegativeBudget,
		predict.PathDisruptedPodsOverflow, predict.PathBudgetExhausted, predict.PathBudgetAllowed,
	} {
		switch {
		case paths[p] > 0:
		case strict:
			t.Errorf("no case took path %s", p)
		default:
			t.Logf("no case took path %s (seed %d, %d cases: not an error)", p, seed, n)
		}
	}
}

// createDecoy creates, in a namespace of its own, a PDB that selects every
// pod of its namespace and allows no disruption. Decide is always given it
// along with the case's PDBs: it must ignore PDBs of other namespaces.
func createDecoy(ctx context.Context, c kubernetes.Interface) (*policyv1.PodDisruptionBudget, error) {
	ns, err := createNamespace(ctx, c, "decoy-")
	if err != nil {
		return nil, err
	}
	p := pdbSpec{Name: "decoy", Selector: &metav1.LabelSelector{}, ObservedGen: "equal", DesiredHealthy: 1, Condition: condInsufficient}
	if err := createPDB(ctx, c, ns, p); err != nil {
		return nil, err
	}
	return c.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, p.Name, metav1.GetOptions{})
}

// runCase sets up one case, asks Decide, sends the eviction and compares.
func runCase(ctx context.Context, c, evictClient kubernetes.Interface, cap *capture, etcd *etcdWriter, decoy *policyv1.PodDisruptionBudget, spec caseSpec) caseResult {
	res := caseResult{spec: spec}
	fail := func(err error) caseResult { res.setupErr = err; return res }

	ns, err := createNamespace(ctx, c, fmt.Sprintf("case-%d-", spec.Index))
	if err != nil {
		return fail(err)
	}
	for _, p := range spec.PDBs {
		if err := createPDB(ctx, c, ns, p); err != nil {
			return fail(err)
		}
		if p.Negative != 0 || p.InvalidSelector || p.UnknownPolicy {
			change := func(pdb *policyv1.PodDisruptionBudget) {
				if p.Negative != 0 {
					pdb.Status.DisruptionsAllowed = p.Negative
				}
				if p.InvalidSelector {
					pdb.Spec.Selector = invalidSelector.DeepCopy()
				}
				if p.UnknownPolicy {
					pdb.Spec.UnhealthyPodEvictionPolicy = ptr.To(unknownPolicy)
				}
			}
			check := func(pdb *policyv1.PodDisruptionBudget) bool {
				want := pdb.DeepCopy()
				change(want)
				return apiequality.Semantic.DeepEqual(pdb.Spec, want.Spec) && apiequality.Semantic.DeepEqual(pdb.Status, want.Status)
			}
			if err := etcd.rewrite(ctx, c, ns, p.Name, change, check); err != nil {
				return fail(err)
			}
		}
	}
	if err := createPod(ctx, c, ns, spec.Pod); err != nil {
		return fail(err)
	}

	// The snapshot Decide is given: the pod and PDBs as the server has them.
	pod, err := c.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		return fail(fmt.Errorf("read pod: %w", err))
	}
	list, err := c.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fail(fmt.Errorf("list pdbs: %w", err))
	}
	if len(list.Items) != len(spec.PDBs) {
		return fail(fmt.Errorf("listed %d pdbs, created %d", len(list.Items), len(spec.PDBs)))
	}
	// Copies, so that nothing Decide might do to its input reaches the
	// "before" side of the comparisons below.
	var pdbs []*policyv1.PodDisruptionBudget
	for i := range list.Items {
		pdbs = append(pdbs, list.Items[i].DeepCopy())
	}
	pdbs = append(pdbs, decoy.DeepCopy())

	ev := evictionFor(spec, pod)
	now := time.Now()
	var evOpts *metav1.DeleteOptions
	if ev.DeleteOptions != nil {
		evOpts = ev.DeleteOptions.DeepCopy()
	}
	d, err := predict.Decide(predict.Input{
		Pod:           pod.DeepCopy(),
		PDBs:          pdbs,
		Now:           metav1.NewTime(now),
		EvictionName:  ev.Name,
		DeleteOptions: evOpts,
		DryRun:        spec.Req.QueryDryRun,
	})
	if err != nil {
		return fail(fmt.Errorf("Decide: %w", err))
	}
	res.path, res.code, res.allowed, res.dryRun = d.Path, d.Status.Code, d.Allowed, d.DryRun
	res.detail = refusalKind(d)

	// The request. client-go's Evict when it can send it and will not sleep
	// on a Retry-After; otherwise the same chain with retries off.
	cap.take()
	var clientErr error
	if !spec.Req.OtherName && len(spec.Req.QueryDryRun) == 0 && retryAfter(d) == 0 {
		res.evict = true
		clientErr = evictClient.PolicyV1().Evictions(ns).Evict(ctx, ev)
	} else {
		req := evictClient.PolicyV1().RESTClient().Post().
			AbsPath("/api/v1").
			Namespace(ns).
			Resource("pods").
			Name(podName).
			SubResource("eviction").
			Body(ev).
			MaxRetries(0)
		for _, v := range spec.Req.QueryDryRun {
			req = req.Param("dryRun", v)
		}
		clientErr = req.Do(ctx).Error()
	}
	after := time.Now()
	resp := cap.take()
	if resp == nil {
		return fail(fmt.Errorf("no response recorded (client error %v)", clientErr))
	}

	res.problems = append(res.problems, compareAnswer(d, resp, clientErr)...)

	// Side effects.
	podAfter, err := c.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fail(fmt.Errorf("read pod after: %w", err))
	}
	if err != nil {
		podAfter = nil
	}
	res.problems = append(res.problems, comparePod(d, pod, podAfter, now, after)...)
	listAfter, err := c.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fail(fmt.Errorf("list pdbs after: %w", err))
	}
	res.problems = append(res.problems, comparePDBs(d, list.Items, listAfter.Items, podName, now, after)...)
	return res
}

// compareAnswer compares the server's answer with Decide's: status line,
// Retry-After header, the Status body, and client-go's error with Err().
func compareAnswer(d predict.Decision, resp *response, clientErr error) []string {
	var problems []string
	if resp.code != int(d.Status.Code) {
		problems = append(problems, fmt.Sprintf("HTTP status: server %d, Decide %d (path %s)", resp.code, d.Status.Code, d.Path))
	}
	wantRA := ""
	if ra := retryAfter(d); ra > 0 {
		wantRA = strconv.Itoa(int(ra))
	}
	if got := resp.header.Get("Retry-After"); got != wantRA {
		problems = append(problems, fmt.Sprintf("Retry-After header: server %q, Decide %q", got, wantRA))
	}
	var body metav1.Status
	if err := json.Unmarshal(resp.body, &body); err != nil {
		problems = append(problems, fmt.Sprintf("response body is not a Status: %v: %s", err, resp.body))
	} else if !apiequality.Semantic.DeepEqual(body, d.Status) {
		problems = append(problems, fmt.Sprintf("Status body (-server +Decide):\n%s", cmp.Diff(body, d.Status)))
	}
	want := d.Err()
	switch {
	case clientErr == nil && want == nil:
	case clientErr == nil || want == nil:
		problems = append(problems, fmt.Sprintf("client-go error %v, Decide's Err() %v", clientErr, want))
	default:
		var got *apierrors.StatusError
		if !errors.As(clientErr, &got) {
			problems = append(problems, fmt.Sprintf("client-go error %T (%v) is not a StatusError; Decide's Err() %v", clientErr, clientErr, want))
			break
		}
		wantSE := want.(*apierrors.StatusError)
		if !apiequality.Semantic.DeepEqual(got.ErrStatus, wantSE.ErrStatus) {
			problems = append(problems, fmt.Sprintf("client-go error's Status (-client-go +Decide):\n%s", cmp.Diff(got.ErrStatus, wantSE.ErrStatus)))
		}
		if got.Error() != wantSE.Error() {
			problems = append(problems, fmt.Sprintf("error text: client-go %q, Decide %q", got.Error(), wantSE.Error()))
		}
	}
	return problems
}

// inWindow reports whether a time the server set during the request (to the
// second, as serialized) lies between the request's start and end.
func inWindow(got metav1.Time, now, after time.Time) bool {
	return !got.Time.Before(now.Truncate(time.Second)) && !got.Time.After(after)
}

// comparePod checks the pod after the request against Decide: evicted pods are
// gone or terminating; a predicted DisruptionTarget condition is on the pod;
// otherwise the pod is untouched.
func comparePod(d predict.Decision, before, after *v1.Pod, now, end time.Time) []string {
	var problems []string
	if d.Allowed && d.DisruptionTarget == nil && !d.DryRun {
		problems = append(problems, "Decide allows a non-dry-run eviction but predicts no DisruptionTarget condition")
	}
	if d.DisruptionTarget == nil {
		switch {
		case after == nil:
			problems = append(problems, "pod was deleted, Decide predicts it untouched")
		case after.ResourceVersion != before.ResourceVersion:
			problems = append(problems, fmt.Sprintf("pod was modified (resourceVersion %s -> %s), Decide predicts it untouched; conditions %+v deletionTimestamp %v",
				before.ResourceVersion, after.ResourceVersion, after.Status.Conditions, after.DeletionTimestamp))
		}
		return problems
	}
	if after == nil {
		if !d.Allowed {
			problems = append(problems, "pod was deleted, Decide refuses the eviction")
		}
		return problems
	}
	var got *v1.PodCondition
	for i := range after.Status.Conditions {
		if after.Status.Conditions[i].Type == v1.DisruptionTarget {
			got = &after.Status.Conditions[i]
			break
		}
	}
	if got == nil {
		return append(problems, fmt.Sprintf("pod has no DisruptionTarget condition, Decide predicts %+v", *d.DisruptionTarget))
	}
	want := *d.DisruptionTarget
	g := *got
	if want.LastTransitionTime.Equal(&metav1.Time{Time: now}) {
		if !inWindow(g.LastTransitionTime, now, end) {
			problems = append(problems, fmt.Sprintf("DisruptionTarget lastTransitionTime %v is not the request time [%v, %v]", g.LastTransitionTime, now, end))
		}
		want.LastTransitionTime, g.LastTransitionTime = metav1.Time{}, metav1.Time{}
	}
	if !apiequality.Semantic.DeepEqual(g, want) {
		problems = append(problems, fmt.Sprintf("DisruptionTarget condition (-server +Decide):\n%s", cmp.Diff(g, want)))
	}
	if d.Allowed && after.DeletionTimestamp == nil {
		problems = append(problems, "Decide allows the eviction but the pod is neither gone nor terminating")
	}
	if !d.Allowed && !apiequality.Semantic.DeepEqual(after.DeletionTimestamp, before.DeletionTimestamp) {
		problems = append(problems, fmt.Sprintf("Decide refuses the eviction but the pod's deletionTimestamp changed: %v -> %v", before.DeletionTimestamp, after.DeletionTimestamp))
	}
	return problems
}

// comparePDBs checks the PDBs after the request: the one Decide says the
// handler writes has Decide's status (times the handler sets from its clock
// must fall within the request), every other PDB is untouched.
func comparePDBs(d predict.Decision, before, after []policyv1.PodDisruptionBudget, pod string, now, end time.Time) []string {
	var problems []string
	byName := map[string]policyv1.PodDisruptionBudget{}
	for _, p := range after {
		byName[p.Name] = p
	}
	for _, b := range before {
		a, ok := byName[b.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("pdb %s disappeared", b.Name))
			continue
		}
		if d.PDBStatus == nil || len(d.MatchedPDBs) != 1 || b.Name != d.MatchedPDBs[0] {
			if a.ResourceVersion != b.ResourceVersion {
				problems = append(problems, fmt.Sprintf("pdb %s was written (status %+v), Decide predicts no write", b.Name, a.Status))
			}
			continue
		}
		want := *d.PDBStatus.DeepCopy()
		got := *a.Status.DeepCopy()
		nowT := metav1.NewTime(now)
		for name, t := range want.DisruptedPods {
			if !t.Equal(&nowT) {
				continue
			}
			gt, ok := got.DisruptedPods[name]
			if !ok {
				problems = append(problems, fmt.Sprintf("pdb %s: disruptedPods has no entry for %s", b.Name, name))
				continue
			}
			if !inWindow(gt, now, end) {
				problems = append(problems, fmt.Sprintf("pdb %s: disruptedPods[%s] = %v is not the request time [%v, %v]", b.Name, name, gt, now, end))
			}
			want.DisruptedPods[name], got.DisruptedPods[name] = metav1.Time{}, metav1.Time{}
		}
		for i := range want.Conditions {
			if !want.Conditions[i].LastTransitionTime.Equal(&nowT) {
				continue
			}
			for j := range got.Conditions {
				if got.Conditions[j].Type == want.Conditions[i].Type {
					if !inWindow(got.Conditions[j].LastTransitionTime, now, end) {
						problems = append(problems, fmt.Sprintf("pdb %s: condition %s lastTransitionTime %v is not the request time", b.Name, got.Conditions[j].Type, got.Conditions[j].LastTransitionTime))
					}
					got.Conditions[j].LastTransitionTime = metav1.Time{}
				}
			}
			want.Conditions[i].LastTransitionTime = metav1.Time{}
		}
		if !apiequality.Semantic.DeepEqual(got, want) {
			problems = append(problems, fmt.Sprintf("pdb %s status (-server +Decide):\n%s", b.Name, cmp.Diff(got, want)))
		}
		if _, ok := a.Status.DisruptedPods[pod]; d.PDBStatus != nil && !ok {
			problems = append(problems, fmt.Sprintf("pdb %s: Decide records %s in disruptedPods, the server did not", b.Name, pod))
		}
	}
	if len(after) != len(before) {
		problems = append(problems, fmt.Sprintf("%d pdbs before, %d after", len(before), len(after)))
	}
	return problems
}

// retryAfter is the Retry-After Decide predicts, 0 for none.
func retryAfter(d predict.Decision) int32 {
	if d.Status.Details == nil {
		return 0
	}
	return d.Status.Details.RetryAfterSeconds
}

// refusalKind names the kind of a refusal for the outcome table: its
// DisruptionBudget cause or the subject of its message, with names and
// numbers left out; "" for an eviction that is allowed.
func refusalKind(d predict.Decision) string {
	if d.Allowed {
		return ""
	}
	text := d.Status.Message
	if d.Status.Details != nil && len(d.Status.Details.Causes) > 0 {
		text = d.Status.Details.Causes[0].Message
	}
	var b strings.Builder
	for _, w := range strings.Fields(text) {
		if strings.ContainsAny(w, "0123456789\"") || strings.HasPrefix(w, "pdb-") || strings.HasPrefix(w, "(") {
			w = "_"
		}
		b.WriteString(" " + w)
	}
	return ":" + b.String()
}
