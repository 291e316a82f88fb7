package eviction

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/podstatus/podstatus/conditions"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"
)

// genPod draws a pod in namespace default: any phase, with none, one or two
// Ready conditions, labels from {a, b}, maybe terminating.
func genPod(t *rapid.T, name string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "pod-uid", ResourceVersion: "42", Labels: map[string]string{}}}
	p.Status.Phase = rapid.SampledFrom([]v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, v1.PodUnknown, ""}).Draw(t, "phase")
	for i := range rapid.IntRange(0, 2).Draw(t, "readyConds") {
		s := rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown}).Draw(t, fmt.Sprintf("ready%d", i))
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodReady, Status: s})
	}
	if rapid.Bool().Draw(t, "labelA") {
		p.Labels["a"] = "true"
	}
	if rapid.Bool().Draw(t, "labelB") {
		p.Labels["b"] = "true"
	}
	if rapid.IntRange(0, 5).Draw(t, "terminating") == 0 {
		p.DeletionTimestamp = &t0
	}
	return p
}

var policies = []*policyv1.UnhealthyPodEvictionPolicyType{nil, policyPtr(policyv1.IfHealthyBudget), policyPtr(policyv1.AlwaysAllow), policyPtr("Weird")}

// genPDB draws a PDB with an arbitrary (possibly inconsistent) status.
func genPDB(t *rapid.T, name string) policyv1.PodDisruptionBudget {
	sels := []*metav1.LabelSelector{nil, {}, selA(), {MatchLabels: map[string]string{"b": "true"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "In"}}}}
	p := policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	p.Spec.Selector = sels[rapid.IntRange(0, len(sels)-1).Draw(t, "selector")]
	p.Spec.UnhealthyPodEvictionPolicy = policies[rapid.IntRange(0, len(policies)-1).Draw(t, "policy")]
	p.Generation = rapid.Int64Range(0, 3).Draw(t, "generation")
	p.Status.ObservedGeneration = rapid.Int64Range(0, 3).Draw(t, "observedGeneration")
	p.Status.DisruptionsAllowed = rapid.Int32Range(-2, 4).Draw(t, "disruptionsAllowed")
	p.Status.CurrentHealthy = rapid.Int32Range(0, 5).Draw(t, "currentHealthy")
	p.Status.DesiredHealthy = rapid.Int32Range(0, 5).Draw(t, "desiredHealthy")
	p.Status.DisruptedPods = makeDisruptedPods(rapid.SampledFrom([]int{0, 1, MaxDisruptedPodSize, MaxDisruptedPodSize + 1}).Draw(t, "disrupted"))
	if rapid.Bool().Draw(t, "hasCondition") {
		p.Status.Conditions = []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition,
			Status:  rapid.SampledFrom([]metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse}).Draw(t, "condStatus"),
			Reason:  rapid.SampledFrom([]string{policyv1.SyncFailedReason, policyv1.InsufficientPodsReason, "Other"}).Draw(t, "condReason"),
			Message: rapid.SampledFrom([]string{"", "boom"}).Draw(t, "condMessage")}}
	}
	return p
}

func genOpts(t *rapid.T) Input {
	o := Input{Now: t0}
	if rapid.Bool().Draw(t, "dryRun") {
		o.DryRun = []string{metav1.DryRunAll}
	}
	if rapid.Bool().Draw(t, "preconditions") {
		o.DeleteOptions = &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{
			ResourceVersion: rapid.SampledFrom([]*string{nil, ptr.To("42"), ptr.To("7")}).Draw(t, "rv"),
			UID:             rapid.SampledFrom([]*types.UID{nil, ptr.To[types.UID]("pod-uid"), ptr.To[types.UID]("other")}).Draw(t, "uid"),
		}}
	}
	return o
}

// An AlwaysAllow PDB never blocks the eviction of a Running pod that is not
// Ready, whatever its status says (KEP-3017).
func TestPropertyAlwaysAllowNeverBlocksUnreadyRunningPod(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := genPod(t, "p")
		pod.Status.Phase = rapid.SampledFrom([]v1.PodPhase{v1.PodRunning, v1.PodUnknown}).Draw(t, "runningPhase")
		pod.DeletionTimestamp = nil
		pod.Labels["a"] = "true"
		if conditions.IsPodReady(pod) {
			pod.Status.Conditions[0].Status = v1.ConditionFalse
		}
		pdb := genPDB(t, "guard")
		pdb.Spec.Selector = selA()
		pdb.Spec.UnhealthyPodEvictionPolicy = policyPtr(policyv1.AlwaysAllow)
		opts := genOpts(t)
		opts.DeleteOptions = nil
		d, err := decide(pod, []policyv1.PodDisruptionBudget{pdb}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed || d.Path != PathUnhealthyAlwaysAllow || d.PDBStatus != nil {
			t.Fatalf("AlwaysAllow blocked an unready pod: %+v", d)
		}
	})
}

// For a Ready pod the unhealthy-pod policy is irrelevant.
func TestPropertyPolicyIrrelevantForReadyPods(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := genPod(t, "p")
		pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
		pdb := genPDB(t, "guard")
		opts := genOpts(t)
		var first *Decision
		for _, pol := range policies {
			pdb.Spec.UnhealthyPodEvictionPolicy = pol
			d, err := decide(pod, []policyv1.PodDisruptionBudget{pdb}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = &d
				continue
			}
			if diff := cmp.Diff(*first, d); diff != "" {
				t.Fatalf("policy %s changed the answer for a ready pod:\n%s", policyName(pol), diff)
			}
		}
	})
}

// Decide's answer is internally consistent and never modifies its input.
func TestPropertyDecisionConsistent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := genPod(t, "p")
		var pdbs []policyv1.PodDisruptionBudget
		for i := range rapid.IntRange(0, 3).Draw(t, "pdbs") {
			pdbs = append(pdbs, genPDB(t, fmt.Sprintf("pdb-%d", i)))
		}
		opts := genOpts(t)
		podCopy, pdbsCopy, optsCopy := pod.DeepCopy(), deepCopyPDBs(pdbs), opts.DeleteOptions.DeepCopy()

		d, err := decide(pod, pdbs, opts)
		if err != nil {
			t.Fatal(err)
		}
		// reflect.DeepEqual first: cmp on 2000-entry maps is slow.
		if !reflect.DeepEqual(podCopy, pod) {
			t.Fatalf("pod modified:\n%s", cmp.Diff(podCopy, pod))
		}
		if !reflect.DeepEqual(pdbsCopy, pdbs) {
			t.Fatalf("pdbs modified:\n%s", cmp.Diff(pdbsCopy, pdbs))
		}
		if !reflect.DeepEqual(optsCopy, opts.DeleteOptions) {
			t.Fatalf("delete options modified:\n%s", cmp.Diff(optsCopy, opts.DeleteOptions))
		}

		if d.Allowed != (d.Status.Code == http.StatusCreated) || d.Allowed != (d.Err() == nil) || d.Allowed != (d.Status.Status == metav1.StatusSuccess) {
			t.Fatalf("inconsistent outcome: %+v", d)
		}
		if retryAfter(d) > 0 && d.Status.Code != http.StatusTooManyRequests {
			t.Fatalf("Retry-After on a %d", d.Status.Code)
		}
		if d.DryRun && (d.DisruptionTarget != nil || d.PDBStatus != nil) {
			t.Fatalf("dry-run wrote: %+v", d)
		}
		if d.Allowed && !d.DryRun && d.DisruptionTarget == nil {
			t.Fatalf("an eviction without DisruptionTarget: %+v", d)
		}
		if d.PDBStatus != nil {
			if len(d.MatchedPDBs) != 1 {
				t.Fatalf("a PDB status written with matched PDBs %v", d.MatchedPDBs)
			}
			var old *policyv1.PodDisruptionBudget
			for i := range pdbs {
				if pdbs[i].Name == d.MatchedPDBs[0] {
					old = &pdbs[i]
				}
			}
			if old == nil || d.PDBStatus.DisruptionsAllowed != old.Status.DisruptionsAllowed-1 || old.Status.DisruptionsAllowed < 1 {
				t.Fatalf("bad decrement: %+v from %+v", d.PDBStatus, old)
			}
			if at, ok := d.PDBStatus.DisruptedPods[pod.Name]; !ok || !at.Equal(&t0) {
				t.Fatalf("pod not recorded in disruptedPods")
			}
		}
		ignorable := pod.Status.Phase == v1.PodPending || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed || pod.DeletionTimestamp != nil
		if ignorable != (d.Path == PathPodStateIgnoresPDB) {
			t.Fatalf("path %s for phase %q terminating=%v", d.Path, pod.Status.Phase, pod.DeletionTimestamp != nil)
		}
		if d.Path == PathMultiplePDBs && len(d.MatchedPDBs) < 2 {
			t.Fatalf("MultiplePDBs with %v", d.MatchedPDBs)
		}
	})
}

func deepCopyPDBs(in []policyv1.PodDisruptionBudget) []policyv1.PodDisruptionBudget {
	if in == nil {
		return nil
	}
	out := make([]policyv1.PodDisruptionBudget, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

// genBudgetScenario draws a PDB spec and pods that all belong to one
// ReplicaSet of fixed scale.
func genBudgetScenario(t *rapid.T) (*policyv1.PodDisruptionBudget, []v1.Pod, Workloads) {
	var v intstr.IntOrString
	if rapid.Bool().Draw(t, "percent") {
		v = intstr.FromString(fmt.Sprintf("%d%%", rapid.IntRange(0, 100).Draw(t, "pct")))
	} else {
		v = intstr.FromInt32(rapid.Int32Range(0, 8).Draw(t, "n"))
	}
	pdb := minAvailablePDB(v)
	if rapid.Bool().Draw(t, "maxUnavailable") {
		pdb = maxUnavailablePDB(v)
	}
	w := Workloads{ReplicaSets: []*appsv1.ReplicaSet{rs("set", "set-uid", rapid.Int32Range(0, 10).Draw(t, "replicas"))}}
	var pods []v1.Pod
	for i := range rapid.IntRange(0, 8).Draw(t, "pods") {
		p := owned(dcPod(fmt.Sprintf("p%d", i)), "apps/v1", "ReplicaSet", "set", "set-uid")
		if !rapid.Bool().Draw(t, fmt.Sprintf("ready%d", i)) {
			p = unready(p)
		}
		if rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("term%d", i)) == 0 {
			p.DeletionTimestamp = &t0
		}
		pods = append(pods, p)
	}
	return pdb, pods, w
}

// Adding a healthy pod never lowers disruptionsAllowed.
func TestPropertyHealthyPodNeverLowersBudget(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pdb, pods, w := genBudgetScenario(t)
		before, err := ComputeStatus(BudgetInput{PDB: pdb, Pods: ptrs(pods), Now: t0, Scale: w.Resolve})
		if err != nil {
			t.Fatal(err)
		}
		more := append(append([]v1.Pod(nil), pods...), owned(dcPod("new-healthy"), "apps/v1", "ReplicaSet", "set", "set-uid"))
		after, err := ComputeStatus(BudgetInput{PDB: pdb, Pods: ptrs(more), Now: t0, Scale: w.Resolve})
		if err != nil {
			t.Fatal(err)
		}
		if after.Status.DisruptionsAllowed < before.Status.DisruptionsAllowed {
			t.Fatalf("DA fell from %d to %d", before.Status.DisruptionsAllowed, after.Status.DisruptionsAllowed)
		}
		if after.Status.CurrentHealthy != before.Status.CurrentHealthy+1 {
			t.Fatalf("currentHealthy %d -> %d", before.Status.CurrentHealthy, after.Status.CurrentHealthy)
		}
	})
}

// The computed status obeys the controller's invariants and is a fixed point.
func TestPropertyComputedStatusInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pdb, pods, w := genBudgetScenario(t)
		pdb.Generation = rapid.Int64Range(0, 3).Draw(t, "generation")
		res, err := ComputeStatus(BudgetInput{PDB: pdb, Pods: ptrs(pods), Now: t0, Scale: w.Resolve})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Status
		var live int32
		for i := range pods {
			if pods[i].DeletionTimestamp == nil {
				live++
			}
		}
		if s.DisruptionsAllowed < 0 || s.CurrentHealthy > live || s.DesiredHealthy < 0 {
			t.Fatalf("bad status %+v", s)
		}
		if s.ExpectedPods > 0 && s.DisruptionsAllowed != max(0, s.CurrentHealthy-s.DesiredHealthy) {
			t.Fatalf("DA %d != max(0, %d-%d)", s.DisruptionsAllowed, s.CurrentHealthy, s.DesiredHealthy)
		}
		if s.ObservedGeneration != pdb.Generation || !conditionsUpToDate(&policyv1.PodDisruptionBudget{ObjectMeta: pdb.ObjectMeta, Status: s}) {
			t.Fatalf("status not up to date: %+v", s)
		}
		next := pdb.DeepCopy()
		next.Status = s
		again, err := ComputeStatus(BudgetInput{PDB: next, Pods: ptrs(pods), Now: t0, Scale: w.Resolve})
		if err != nil {
			t.Fatal(err)
		}
		if again.Write {
			t.Fatalf("a second sync wrote:\n%s", cmp.Diff(s, again.Status))
		}
	})
}
