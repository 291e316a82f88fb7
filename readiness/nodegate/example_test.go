package nodegate_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/readiness/nodegate"
)

// A node that registered with the gate taint is released once the CNI pod
// bound to it is Ready. The foreign taint is left alone.
func ExampleEvaluate() {
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-1"},
		Spec: v1.NodeSpec{Taints: []v1.Taint{
			{Key: nodegate.DefaultTaintKey, Effect: v1.TaintEffectNoSchedule},
			{Key: "example.com/dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule},
		}},
	}
	gates := []nodegate.Gate{{
		Name:      "cni",
		Namespace: "kube-system",
		Selector:  metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "cni"}},
	}}
	cni := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "cni-x7", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "cni"}},
		Spec:       v1.PodSpec{NodeName: "worker-1"},
		Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionFalse},
		}},
	}

	in := nodegate.Input{Node: node, Gates: gates, Pods: []*v1.Pod{cni}, Now: metav1.Now()}
	res, err := nodegate.Evaluate(in)
	if err != nil {
		panic(err) // a nil node or pod, a zero Now, a duplicate gate name, a reserved taint key, ...
	}
	fmt.Println(res.NodeReady, res.Gates[0].Reason, len(res.Taints.Add), len(res.Taints.Remove))

	cni.Status.Conditions[0].Status = v1.ConditionTrue
	res, _ = nodegate.Evaluate(in)
	fmt.Println(res.NodeReady, res.Gates[0].Reason, res.Taints.Remove[0].Key)
	for _, t := range res.Taints.NewTaints {
		fmt.Println("keeps", t.Key)
	}
	// Output:
	// false PodsNotReady 0 0
	// true AllPodsReady readiness.k8s.io/node-readiness-gates
	// keeps example.com/dedicated
}

// A continuous condition rule: the node keeps the rule's taint until the
// NetworkReady condition is True.
func ExampleEvaluateRule() {
	rule := nodegate.Rule{
		Name:         "network",
		UID:          "6a1f",
		Mode:         nodegate.EnforcementModeContinuous,
		Conditions:   []nodegate.ConditionRequirement{{Type: "NetworkReady", RequiredStatus: v1.ConditionTrue}},
		Taint:        v1.Taint{Key: "readiness.k8s.io/network", Effect: v1.TaintEffectNoSchedule},
		NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "workers"}},
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", Labels: map[string]string{"pool": "workers"}}}

	res, err := nodegate.EvaluateRule(nodegate.RuleInput{Rule: rule, Node: node})
	if err != nil {
		panic(err) // a nil node, or a rule the cluster would refuse (see ValidateRule)
	}
	fmt.Println(res.Action, res.Conditions[0].CurrentStatus, res.MissingConditions)

	node.Spec.Taints = res.Taints.NewTaints
	node.Status.Conditions = []v1.NodeCondition{{Type: "NetworkReady", Status: v1.ConditionTrue}}
	res, _ = nodegate.EvaluateRule(nodegate.RuleInput{Rule: rule, Node: node})
	fmt.Println(res.Action, len(res.Taints.NewTaints))
	// Output:
	// AddTaint Unknown 1
	// RemoveTaint 0
}
