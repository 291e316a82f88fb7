package eviction

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// fixedTime is the lastTransitionTime of every condition the test writes and
// the base of the disruptedPods times, far from the request time so that a
// kept time and a fresh one are told apart.
var fixedTime = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// wrongUID is a UID no pod has.
const wrongUID = "00000000-0000-4000-8000-000000000000"

// wrongRV is a resourceVersion no pod of the test has: etcd's revision is far
// past 1 once the server has started.
const wrongRV = "1"

// response is what the capturing transport saw of one eviction request.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// capture is an http.RoundTripper wrapper that records the last response. A
// worker owns one capture and sends its requests one at a time.
type capture struct {
	next http.RoundTripper
	mu   sync.Mutex
	last *response
}

// RoundTrip sends the request and records the response's status line, headers
// and body, which it hands on unread.
func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	c.last = &response{code: resp.StatusCode, header: resp.Header.Clone(), body: body}
	c.mu.Unlock()
	return resp, nil
}

// take returns the last recorded response and forgets it.
func (c *capture) take() *response {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.last
	c.last = nil
	return r
}

// newCapturingClient returns a clientset speaking JSON whose responses cap records.
func newCapturingClient(base *rest.Config, cap *capture) (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(base)
	cfg.UserAgent = "podstatus-eviction-test"
	cfg.RateLimiter = nil
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		cap.next = rt
		return cap
	}
	return kubernetes.NewForConfig(cfg)
}

// createNamespace creates a namespace named prefix plus a random suffix.
func createNamespace(ctx context.Context, c kubernetes.Interface, prefix string) (string, error) {
	ns, err := c.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create namespace: %w", err)
	}
	return ns.Name, nil
}

// pdbStatus is the status the test writes for p, whose generation is gen.
func pdbStatus(p pdbSpec, gen int64) policyv1.PodDisruptionBudgetStatus {
	s := policyv1.PodDisruptionBudgetStatus{
		DisruptionsAllowed: p.DisruptionsAllowed,
		CurrentHealthy:     p.CurrentHealthy,
		DesiredHealthy:     p.DesiredHealthy,
		ExpectedPods:       p.ExpectedPods,
	}
	switch p.ObservedGen {
	case "equal":
		s.ObservedGeneration = gen
	case "behind":
		s.ObservedGeneration = gen - 1
	case "zero":
		s.ObservedGeneration = 0
	case "ahead":
		s.ObservedGeneration = gen + 1
	}
	if p.DisruptedPods > 0 || p.DisruptedSelf {
		s.DisruptedPods = map[string]metav1.Time{}
		for j := 0; j < p.DisruptedPods; j++ {
			s.DisruptedPods[fmt.Sprintf("gone-%04d", j)] = metav1.NewTime(fixedTime.Add(time.Duration(j) * time.Second))
		}
		if p.DisruptedSelf {
			if p.DisruptedPods > 0 {
				delete(s.DisruptedPods, "gone-0000")
			}
			s.DisruptedPods[podName] = fixedTime
		}
	}
	cond := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, LastTransitionTime: fixedTime, ObservedGeneration: s.ObservedGeneration}
	switch p.Condition {
	case condNone:
		return s
	case condSufficient:
		cond.Status, cond.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	case condInsufficient:
		cond.Status, cond.Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
	case condSyncFailed:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, policyv1.SyncFailedReason, `found no controllers for pod "web-0"`
	case condSyncFailedNoMessage:
		cond.Status, cond.Reason = metav1.ConditionFalse, policyv1.SyncFailedReason
	case condOtherFalse:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "MaintenanceWindow", "evictions are paused for maintenance"
	case condUnknown:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, "NotYetComputed", "waiting for the first sync"
	}
	s.Conditions = []metav1.Condition{cond}
	return s
}

// createPDB creates p in ns, bumps its generation with p.SpecUpdates spec
// updates (from placeholder minAvailable values to its real spec) and writes
// its status through the status subresource.
func createPDB(ctx context.Context, c kubernetes.Interface, ns string, p pdbSpec) error {
	final := policyv1.PodDisruptionBudgetSpec{
		Selector:                   p.Selector,
		UnhealthyPodEvictionPolicy: p.Policy,
		MinAvailable:               p.MinAvailable,
		MaxUnavailable:             p.MaxUnavailable,
	}
	specs := []policyv1.PodDisruptionBudgetSpec{final}
	for k := 0; k < p.SpecUpdates; k++ {
		placeholder := *final.DeepCopy()
		placeholder.MinAvailable = ptr.To(intstr.FromInt32(int32(9 - k)))
		placeholder.MaxUnavailable = nil
		specs = append([]policyv1.PodDisruptionBudgetSpec{placeholder}, specs...)
	}
	pdbs := c.PolicyV1().PodDisruptionBudgets(ns)
	obj, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns},
		Spec:       specs[0],
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create pdb %s: %w", p.Name, err)
	}
	for _, spec := range specs[1:] {
		obj.Spec = spec
		if obj, err = pdbs.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update pdb %s: %w", p.Name, err)
		}
	}
	if want := int64(1 + p.SpecUpdates); obj.Generation != want {
		return fmt.Errorf("pdb %s has generation %d after %d spec updates, want %d", p.Name, obj.Generation, p.SpecUpdates, want)
	}
	obj.Status = pdbStatus(p, obj.Generation)
	if _, err := pdbs.UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of pdb %s: %w", p.Name, err)
	}
	return nil
}

// createPod creates the case's pod in ns, writes its phase and conditions
// through pods/status, and deletes it when it must be terminating.
func createPod(ctx context.Context, c kubernetes.Interface, ns string, p podSpec) error {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: podName, Labels: p.Labels},
		Spec: v1.PodSpec{
			NodeName:   p.NodeName,
			Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if p.Finalizer {
		pod.Finalizers = []string{holdFinalizer}
	}
	pods := c.CoreV1().Pods(ns)
	got, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create pod: %w", err)
	}
	got.Status.Phase = p.Phase
	if p.DisruptionTarget != "" {
		got.Status.Conditions = append(got.Status.Conditions, v1.PodCondition{
			Type: v1.DisruptionTarget, Status: p.DisruptionTarget, Reason: p.DTReason,
			Message: "set by the test", LastTransitionTime: fixedTime,
		})
	}
	if p.Ready != "" {
		got.Status.Conditions = append(got.Status.Conditions, v1.PodCondition{
			Type: v1.PodReady, Status: p.Ready, LastTransitionTime: fixedTime,
		})
	}
	if _, err := pods.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update pod status: %w", err)
	}
	if p.Terminating {
		if err := pods.Delete(ctx, podName, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete pod to make it terminating: %w", err)
		}
	}
	return nil
}

// evictionFor builds the case's Eviction for pod, resolving the symbolic
// preconditions against the pod as read back from the server.
func evictionFor(c caseSpec, pod *v1.Pod) *policyv1.Eviction {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
	if c.Req.OtherName {
		ev.Name = "someone-else"
	}
	if !c.Req.Body {
		return ev
	}
	del := &metav1.DeleteOptions{
		DryRun:             c.Req.BodyDryRun,
		GracePeriodSeconds: c.Req.Grace,
		IgnoreStoreReadErrorWithClusterBreakingPotential: c.Req.IgnoreStoreRead,
	}
	if c.Req.UID != precNone || c.Req.RV != precNone || c.Req.EmptyPreconditions {
		del.Preconditions = &metav1.Preconditions{}
		switch c.Req.UID {
		case precRight:
			del.Preconditions.UID = ptr.To(pod.UID)
		case precWrong:
			del.Preconditions.UID = ptr.To[types.UID](wrongUID)
		case precEmpty:
			del.Preconditions.UID = ptr.To[types.UID]("")
		}
		switch c.Req.RV {
		case precRight:
			del.Preconditions.ResourceVersion = ptr.To(pod.ResourceVersion)
		case precWrong:
			del.Preconditions.ResourceVersion = ptr.To(wrongRV)
		case precEmpty:
			del.Preconditions.ResourceVersion = ptr.To("")
		}
	}
	ev.DeleteOptions = del
	return ev
}
