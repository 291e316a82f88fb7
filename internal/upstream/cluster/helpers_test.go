package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// runScenario runs f as subtest name in a namespace of its own, made through c, and logs
// how long it took (suffix tells the systems apart: "" for the simulated kubelet).
func runScenario(t *testing.T, c kubernetes.Interface, name, suffix string, f func(t *testing.T, c kubernetes.Interface, ns string)) {
	t.Run(name, func(t *testing.T) {
		begin := time.Now()
		ns, err := c.CoreV1().Namespaces().Create(t.Context(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f(t, c, ns.Name)
		t.Logf("scenario %s%s took %v", name, suffix, time.Since(begin).Round(100*time.Millisecond))
	})
}

// waitFor polls cond every 100 ms until it is true, failing the test with what last
// said after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, msg, err := cond(ctx)
		last = msg
		return ok, err
	})
	if err != nil {
		t.Fatalf("%s: not within %v (%s): %v", what, timeout, last, err)
	}
}

// newDeployment returns a Deployment of replicas pods labelled app=name, one container
// "app".
func newDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					Containers:                    []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
					TerminationGracePeriodSeconds: ptr.To[int64](1),
				},
			},
		},
	}
}

// maxUnavailableZero makes d's rolling update start a new pod before it stops an old one.
func maxUnavailableZero(d *appsv1.Deployment) {
	zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
	d.Spec.Strategy = appsv1.DeploymentStrategy{
		Type:          appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &zero, MaxSurge: &one},
	}
}

// podReady says whether pod's Ready condition is True.
func podReady(pod *v1.Pod) bool {
	return condStatus(pod.Status.Conditions, v1.PodReady) == v1.ConditionTrue
}

// condStatus is the status of the condition of that type, "" when there is none.
func condStatus(conds []v1.PodCondition, typ v1.PodConditionType) v1.ConditionStatus {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// cond returns the condition of that type, or nil.
func cond(conds []v1.PodCondition, typ v1.PodConditionType) *v1.PodCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// livePods lists the pods of ns matching selector that are not being deleted.
func livePods(ctx context.Context, c kubernetes.Interface, ns, selector string) ([]v1.Pod, error) {
	list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var out []v1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// runningReady waits for exactly n live pods of selector, all Running and Ready.
func runningReady(t *testing.T, c kubernetes.Interface, ns, selector string, n int, timeout time.Duration) []v1.Pod {
	t.Helper()
	var pods []v1.Pod
	waitFor(t, timeout, fmt.Sprintf("%d pods %s Running and Ready", n, selector), func(ctx context.Context) (bool, string, error) {
		var err error
		pods, err = livePods(ctx, c, ns, selector)
		if err != nil {
			return false, err.Error(), nil
		}
		ready := 0
		for _, p := range pods {
			if p.Status.Phase == v1.PodRunning && podReady(&p) {
				ready++
			}
		}
		return ready == n && len(pods) == n, fmt.Sprintf("%d live, %d Running and Ready", len(pods), ready), nil
	})
	return pods
}

// deploymentComplete waits for d's rollout to be complete, as kubectl rollout status
// says: the controller observed the latest generation, every replica is updated and
// available, and no old one is left.
func deploymentComplete(t *testing.T, c kubernetes.Interface, ns, name string, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, "deployment "+name+" rolled out", func(ctx context.Context) (bool, string, error) {
		d, err := c.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		s := d.Status
		want := *d.Spec.Replicas
		msg := fmt.Sprintf("generation %d observed %d, replicas %d updated %d available %d", d.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.AvailableReplicas)
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want, msg, nil
	})
}
