package eviction

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// t0 is the fixed clock of the tests.
var t0 = metav1.NewTime(time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC))

// testPod is the pod of upstream's eviction tests: labels a=true, node foo,
// namespace default, no conditions.
func testPod(name string, phase v1.PodPhase, ready *v1.ConditionStatus) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "pod-uid", ResourceVersion: "42",
			Labels: map[string]string{"a": "true"}},
		Spec:   v1.PodSpec{NodeName: "foo"},
		Status: v1.PodStatus{Phase: phase},
	}
	if ready != nil {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: *ready}}
	}
	return p
}

func status(s v1.ConditionStatus) *v1.ConditionStatus { return &s }

// testPDB is PDB "foo" in "default" with selector sel and status st.
func testPDB(sel *metav1.LabelSelector, st policyv1.PodDisruptionBudgetStatus) policyv1.PodDisruptionBudget {
	return policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: sel},
		Status:     st,
	}
}

func selA() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"a": "true"}}
}

func policyPtr(p policyv1.UnhealthyPodEvictionPolicyType) *policyv1.UnhealthyPodEvictionPolicyType {
	return &p
}

// allPolicies is the policy loop of upstream's tests.
var allPolicies = []*policyv1.UnhealthyPodEvictionPolicyType{nil, policyPtr(policyv1.IfHealthyBudget), policyPtr(policyv1.AlwaysAllow)}

func policyName(p *policyv1.UnhealthyPodEvictionPolicyType) string {
	if p == nil {
		return "nil"
	}
	return string(*p)
}

// errToString renders an error as upstream's eviction tests do: message,
// reason, and every cause message the message does not already end with.
func errToString(err error) string {
	if err == nil {
		return ""
	}
	result := err.Error()
	if se, ok := err.(*apierrors.StatusError); ok {
		result += fmt.Sprintf(": %v", se.ErrStatus.Reason)
		if se.ErrStatus.Details != nil {
			for _, c := range se.ErrStatus.Details.Causes {
				if !strings.HasSuffix(err.Error(), c.Message) {
					result += fmt.Sprintf(": %v", c.Message)
				}
			}
		}
	}
	return result
}

func makeDisruptedPods(n int) map[string]metav1.Time {
	m := make(map[string]metav1.Time, n)
	for i := range n {
		m[fmt.Sprintf("pod-%d", i)] = t0
	}
	return m
}
