package eviction

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus"
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

// ptrs points at each element of xs, as a lister's list holds them.
func ptrs[T any](xs []T) []*T {
	var out []*T
	for i := range xs {
		out = append(out, &xs[i])
	}
	return out
}

// decide is Decide of pod and pdbs with the rest of in: the tests keep their
// PDBs as values.
func decide(pod *v1.Pod, pdbs []policyv1.PodDisruptionBudget, in Input) (Decision, error) {
	in.Pod, in.PDBs = pod, ptrs(pdbs)
	return Decide(in)
}

// retryAfter is the Retry-After the server sends with d, 0 for none.
func retryAfter(d Decision) int32 {
	if d.Status.Details == nil {
		return 0
	}
	return d.Status.Details.RetryAfterSeconds
}

// checkInputError checks that err is a *podstatus.InputError, matches
// podstatus.ErrInvalidInput, and reports exactly the fields given, in order.
func checkInputError(t *testing.T, err error, fields ...string) {
	t.Helper()
	if !errors.Is(err, podstatus.ErrInvalidInput) {
		t.Fatalf("err = %v, want one matching podstatus.ErrInvalidInput", err)
	}
	var ie *podstatus.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %T %v, want a *podstatus.InputError", err, err)
	}
	var got []string
	for _, e := range ie.Errs {
		got = append(got, e.Field)
	}
	if !slices.Equal(got, fields) {
		t.Errorf("fields %q, want %q (%v)", got, fields, err)
	}
}
