package eviction_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/podstatus/podstatus/readiness/eviction"
)

// A Running pod that is not Ready, guarded by a PDB whose budget is used up:
// with the default policy the eviction is refused with 429, with AlwaysAllow
// it goes through without touching the budget.
func ExampleDecide() {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", Labels: map[string]string{"app": "web"}, ResourceVersion: "7"},
		Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionFalse},
		}},
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 3},
	}

	d, err := eviction.Decide(eviction.Input{Pod: pod, PDBs: []*policyv1.PodDisruptionBudget{pdb}, Now: now})
	if err != nil {
		panic(err) // input no API server could see
	}
	fmt.Println(d.Status.Code, d.Path, d.Status.Message)
	fmt.Println(d.Status.Details.Causes[0].Message)

	always := policyv1.AlwaysAllow
	pdb.Spec.UnhealthyPodEvictionPolicy = &always
	d, _ = eviction.Decide(eviction.Input{Pod: pod, PDBs: []*policyv1.PodDisruptionBudget{pdb}, Now: now})
	fmt.Println(d.Status.Code, d.Path, d.PDBStatus != nil, *d.DeleteOptions.Preconditions.ResourceVersion)
	// Output:
	// 429 BudgetExhausted Cannot evict pod as it would violate the pod's disruption budget.
	// The disruption budget web needs 3 healthy pods and has 2 currently
	// 201 UnhealthyAlwaysAllow false 7
}

// The disruption controller's view of a PDB with minAvailable 50% over a
// ReplicaSet of 4 replicas, 3 of whose pods are Ready.
func ExampleComputeStatus() {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	half := intstr.FromString("50%")
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &half,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	isController := true
	owner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-abc", UID: "rs-1", Controller: &isController}}
	var pods []*v1.Pod
	for i, ready := range []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse} {
		pods = append(pods, &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "shop", Labels: map[string]string{"app": "web"}, OwnerReferences: owner},
			Status:     v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: ready}}},
		})
	}
	scale := func(ref metav1.OwnerReference, namespace string) (eviction.ScaleTarget, bool, error) {
		return eviction.ScaleTarget{UID: ref.UID, Replicas: 4}, ref.UID == "rs-1", nil
	}

	res, err := eviction.ComputeStatus(eviction.BudgetInput{PDB: pdb, Pods: pods, Now: now, Scale: scale})
	if err != nil {
		panic(err) // a nil PDB or pod, or a zero Now
	}
	s := res.Status
	fmt.Printf("expected=%d desired=%d healthy=%d allowed=%d\n", s.ExpectedPods, s.DesiredHealthy, s.CurrentHealthy, s.DisruptionsAllowed)
	// Output:
	// expected=4 desired=2 healthy=3 allowed=1
}
