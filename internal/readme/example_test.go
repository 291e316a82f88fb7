package readme_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/readiness/eviction"
	"github.com/podstatus/podstatus/readiness/nodegate"
)

// decide is the README's eviction snippet, with what it uses as parameters.
func decide(pod *v1.Pod, pdbs []*policyv1.PodDisruptionBudget) error {
	d, err := eviction.Decide(eviction.Input{Pod: pod, PDBs: pdbs, Now: metav1.Now()}) // PDBs from a lister
	if err != nil {
		return err // input no server could see: a nil pod, a zero Now
	}
	fmt.Println(d.Allowed, d.Status.Code, d.Path) // e.g. false 429 BudgetExhausted
	return d.Err()                                // the *apierrors.StatusError client-go would return, nil when evicted
}

// gate is the README's nodegate snippet, with what it uses as parameters.
func gate(node *v1.Node, pods []*v1.Pod) error {
	res, err := nodegate.Evaluate(nodegate.Input{
		Node: node,
		Gates: []nodegate.Gate{{Name: "cni", Namespace: "kube-system",
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "cni"}}}},
		Pods: pods,         // []*v1.Pod, e.g. from a lister: pods of other nodes are ignored
		Now:  metav1.Now(), // TimeAdded of NoExecute taints
	}) // taint readiness.k8s.io/node-readiness-gates:NoSchedule
	if err != nil {
		return err // duplicate gate names, reserved taint key, zero Now, ...
	}
	node.Spec.Taints = res.Taints.NewTaints // = old taints - res.Taints.Remove + res.Taints.Add
	return nil
}

// The README's eviction and node-gate snippets compile against the packages' APIs.
func Example_readme() {
	_, _ = decide, gate
}
