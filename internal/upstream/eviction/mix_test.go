package eviction

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	predict "github.com/podstatus/podstatus/readiness/eviction"
)

// minPathShare is the smallest share of cases every branch of the handler must
// get from the generator, so that a run of a few hundred cases reaches each.
const minPathShare = 0.02

// TestCaseMix checks, without a server, that the case generator reaches every
// branch of the eviction handler often enough: it builds each case's objects
// the way the server would store them (approximately: no defaulting, made-up
// UID and resourceVersion) and asks Decide which branch it takes. It guards
// the path-coverage check of TestDecideAgainstAPIServer against a generator
// whose weights drifted.
func TestCaseMix(t *testing.T) {
	const n = 5000
	paths := map[predict.Path]int{}
	now := metav1.NewTime(time.Unix(1_800_000_000, 0))
	for i := 0; i < n; i++ {
		c := genCase(defaultSeed+1, i)
		pod, pdbs := offlineObjects(c)
		ev := evictionFor(c, pod)
		d, err := predict.Decide(predict.Input{Pod: pod, PDBs: pdbs, Now: now,
			EvictionName: ev.Name, DeleteOptions: ev.DeleteOptions, DryRun: c.Req.QueryDryRun})
		if err != nil {
			t.Fatalf("%v: Decide: %v", c, err)
		}
		paths[d.Path]++
	}
	var lines []string
	for _, p := range []predict.Path{
		predict.PathInvalidRequest, predict.PathPodStateIgnoresPDB, predict.PathMultiplePDBs, predict.PathNoPDB,
		predict.PathUnhealthyAlwaysAllow, predict.PathUnhealthyIfHealthyBudget, predict.PathPDBStale, predict.PathNegativeBudget,
		predict.PathDisruptedPodsOverflow, predict.PathBudgetExhausted, predict.PathBudgetAllowed,
	} {
		share := float64(paths[p]) / n
		lines = append(lines, fmt.Sprintf("%5.1f%% %s", 100*share, p))
		if share < minPathShare {
			t.Errorf("path %s gets %.1f%% of the cases, want at least %.1f%%", p, 100*share, 100*minPathShare)
		}
	}
	sort.Strings(lines)
	t.Logf("share of cases per path:\n%s", strings.Join(lines, "\n"))
}

// offlineObjects builds the pod and PDBs of case c as the server would hold
// them after the test's setup.
func offlineObjects(c caseSpec) (*v1.Pod, []*policyv1.PodDisruptionBudget) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: "ns", Labels: c.Pod.Labels, UID: "pod-uid", ResourceVersion: "5"}}
	pod.Status.Phase = c.Pod.Phase
	if c.Pod.Ready != "" {
		pod.Status.Conditions = append(pod.Status.Conditions, v1.PodCondition{Type: v1.PodReady, Status: c.Pod.Ready})
	}
	if c.Pod.Terminating {
		pod.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	}
	var pdbs []*policyv1.PodDisruptionBudget
	for _, p := range c.PDBs {
		gen := int64(1 + p.SpecUpdates)
		o := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: "ns", Generation: gen},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: p.Selector, UnhealthyPodEvictionPolicy: p.Policy},
			Status:     pdbStatus(p, gen),
		}
		if p.Negative != 0 {
			o.Status.DisruptionsAllowed = p.Negative
		}
		if p.InvalidSelector {
			o.Spec.Selector = invalidSelector.DeepCopy()
		}
		if p.UnknownPolicy {
			o.Spec.UnhealthyPodEvictionPolicy = ptr.To(unknownPolicy)
		}
		pdbs = append(pdbs, o)
	}
	return pod, pdbs
}
