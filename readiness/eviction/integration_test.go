package eviction

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The cases below mirror test/integration/evictions (v1.37.0), with the
// disruption controller played by ComputeStatus and the API server by Decide.

func runningPod(name string, ready v1.ConditionStatus) v1.Pod {
	p := dcPod(name)
	p.Status.Phase = v1.PodRunning
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: ready}}
	return p
}

// TestConcurrentEvictionRequests: 10 ready pods under minAvailable 0; every
// eviction succeeds once the controller has synced, and each decrements the
// budget the next one sees.
func TestConcurrentEvictionRequests(t *testing.T) {
	pdb := minAvailablePDB(intstr.FromInt32(0))
	pdb.Generation = 1
	var pods []v1.Pod
	for i := range 10 {
		pods = append(pods, runningPod(fmt.Sprintf("test-pod-%d", i), v1.ConditionTrue))
	}
	res, err := ComputeStatus(BudgetInput{PDB: pdb, Pods: ptrs(pods), Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Status = res.Status
	if pdb.Status.DisruptionsAllowed != 10 {
		t.Fatalf("DA = %d, want 10", pdb.Status.DisruptionsAllowed)
	}
	for i := range pods {
		d, err := decide(&pods[i], []policyv1.PodDisruptionBudget{*pdb}, Input{Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed || d.Status.Code == 409 {
			t.Fatalf("eviction %d: %d %s", i, d.Status.Code, d.Status.Message)
		}
		pdb.Status = *d.PDBStatus
	}
	if pdb.Status.DisruptionsAllowed != 0 || len(pdb.Status.DisruptedPods) != 10 {
		t.Errorf("after 10 evictions: %+v", pdb.Status)
	}
	// The controller's next sync (pods still there, entries fresh) keeps the
	// budget at 0: the evicted pods no longer count as healthy.
	res, err = ComputeStatus(BudgetInput{PDB: pdb, Pods: ptrs(pods), Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status.CurrentHealthy != 0 || res.Status.DisruptionsAllowed != 0 {
		t.Errorf("resync: %+v", res.Status)
	}
}

// TestTerminalPodEviction: a Succeeded pod is evicted without touching the PDB.
func TestTerminalPodEviction(t *testing.T) {
	pdb := minAvailablePDB(intstr.FromInt32(1))
	pdb.Generation, pdb.Status.ObservedGeneration = 1, 1
	pod := dcPod("p")
	pod.Status.Phase = v1.PodSucceeded
	d, err := decide(&pod, []policyv1.PodDisruptionBudget{*pdb}, Input{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Allowed || d.PDBStatus != nil || d.MatchedPDBs != nil || d.DisruptionTarget == nil {
		t.Errorf("got %+v", d)
	}
}

// TestEvictionWithUnhealthyPodEvictionPolicy: minAvailable 0; a Ready pod is
// evicted under every policy, an unready pod under AlwaysAllow.
func TestEvictionWithUnhealthyPodEvictionPolicy(t *testing.T) {
	for _, pol := range allPolicies {
		for _, ready := range []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse} {
			if ready == v1.ConditionFalse && (pol == nil || *pol != policyv1.AlwaysAllow) {
				continue
			}
			t.Run(fmt.Sprintf("%s ready=%s", policyName(pol), ready), func(t *testing.T) {
				pdb := minAvailablePDB(intstr.FromInt32(0))
				pdb.Spec.UnhealthyPodEvictionPolicy = pol
				pod := runningPod("p", ready)
				res, err := ComputeStatus(BudgetInput{PDB: pdb, Pods: ptrs([]v1.Pod{pod}), Now: t0})
				if err != nil {
					t.Fatal(err)
				}
				pdb.Status = res.Status
				d, err := decide(&pod, []policyv1.PodDisruptionBudget{*pdb}, Input{Now: t0})
				if err != nil {
					t.Fatal(err)
				}
				if !d.Allowed {
					t.Errorf("refused: %d %s", d.Status.Code, d.Status.Message)
				}
			})
		}
	}
}

// TestEvictionWithPrecondition: correct resourceVersion and/or UID evict,
// a wrong one does not.
func TestEvictionWithPrecondition(t *testing.T) {
	pod := runningPod("p", v1.ConditionTrue)
	pod.ResourceVersion = "9"
	good, badRV, badUID := "9", "8", pod.UID+"x"
	cases := map[string]struct {
		pre  metav1.Preconditions
		want bool
	}{
		"correct resourceVersion": {metav1.Preconditions{ResourceVersion: &good}, true},
		"correct UID":             {metav1.Preconditions{UID: &pod.UID}, true},
		"correct both":            {metav1.Preconditions{UID: &pod.UID, ResourceVersion: &good}, true},
		"wrong resourceVersion":   {metav1.Preconditions{ResourceVersion: &badRV}, false},
		"wrong UID":               {metav1.Preconditions{UID: &badUID}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pre := tc.pre
			d, err := decide(&pod, nil, Input{Now: t0, DeleteOptions: &metav1.DeleteOptions{Preconditions: &pre}})
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != tc.want {
				t.Errorf("Allowed = %v (%s)", d.Allowed, d.Status.Message)
			}
		})
	}
}
