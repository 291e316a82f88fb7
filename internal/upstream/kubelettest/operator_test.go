package kubelettest_test

import (
	"cmp"
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/simkubelet"
	"github.com/podstatus/podstatus/simkubelet/kubelettest"
)

// The operator under test: a "widget" (a ConfigMap labelled widget=true, standing in for a
// custom resource) gets one pod (restartPolicy from its data, Always by default; a
// readiness gate when its data says gated), and the operator reports the pod's state in the widget's
// "state" annotation: Ready, Failed, or NotReady. Deleting the widget deletes its pod.
// It is written as operators are (an informer per kind, reconcile on every event); the
// test below is an operator author's test of it, on an API server where no kubelet runs.

const (
	widgetLabel = "widget"
	stateKey    = "example.com/state"
	gateType    = "example.com/load-balancer"
)

type widgetOperator struct {
	cs kubernetes.Interface
	mu sync.Mutex
}

func (o *widgetOperator) run(ctx context.Context, t *testing.T) {
	f := informers.NewSharedInformerFactoryWithOptions(o.cs, 0, informers.WithNamespace(ns))
	cms := f.Core().V1().ConfigMaps().Informer()
	pods := f.Core().V1().Pods().Informer()
	reconcile := func(name string) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if err := o.reconcile(ctx, cms.GetIndexer(), pods.GetIndexer(), name); err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
			t.Errorf("operator: widget %s: %v", name, err)
		}
	}
	onCM := func(obj any) {
		if cm, ok := obj.(*v1.ConfigMap); ok && cm.Labels[widgetLabel] == "true" {
			reconcile(cm.Name)
		}
	}
	onPod := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if p, ok := obj.(*v1.Pod); ok && p.Labels[widgetLabel] != "" {
			reconcile(p.Labels[widgetLabel])
		}
	}
	_, _ = cms.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onCM, UpdateFunc: func(_, o any) { onCM(o) },
		DeleteFunc: func(obj any) {
			if cm, ok := obj.(*v1.ConfigMap); ok {
				reconcile(cm.Name)
			}
		}})
	_, _ = pods.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onPod, UpdateFunc: func(_, o any) { onPod(o) }, DeleteFunc: onPod})
	f.Start(ctx.Done())
	t.Cleanup(f.Shutdown)
}

// reconcile makes the widget's pod exist (or not, for a deleted widget) and reports its
// state on the widget.
func (o *widgetOperator) reconcile(ctx context.Context, cms, pods cache.Indexer, name string) error {
	obj, exists, _ := cms.GetByKey(ns + "/" + name)
	podObj, podExists, _ := pods.GetByKey(ns + "/" + name + "-pod")
	if !exists {
		if podExists {
			err := o.cs.CoreV1().Pods(ns).Delete(ctx, name+"-pod", metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		return nil
	}
	cm := obj.(*v1.ConfigMap)
	if !podExists {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-pod", Labels: map[string]string{widgetLabel: name}},
			Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicy(cmp.Or(cm.Data["restartPolicy"], string(v1.RestartPolicyAlways))),
				Containers: []v1.Container{{Name: "app", Image: "registry.example/widget:1",
					ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"ready"}}}, PeriodSeconds: 1}}}}}
		if cm.Data["gated"] == "true" {
			pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gateType}}
		}
		_, err := o.cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	pod := podObj.(*v1.Pod)
	state := "NotReady"
	switch c := conditions.Get(pod.Status.Conditions, v1.PodReady); {
	case pod.Status.Phase == v1.PodFailed:
		state = "Failed"
	case c != nil && c.Status == v1.ConditionTrue:
		state = "Ready"
	}
	if cm.Annotations[stateKey] == state {
		return nil
	}
	// The cache may be behind the operator's own last write: on a conflict, read the
	// widget again and retry.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := o.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[stateKey] = state
		_, err = o.cs.CoreV1().ConfigMaps(ns).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// TestOperatorWithSimulatedKubelet is an operator author's test: the pods the operator
// creates carry no test annotations, so the test picks their behaviour by name from Go.
func TestOperatorWithSimulatedKubelet(t *testing.T) {
	srv := apiserver.Start(t)
	cs := srv.Client
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	kubelettest.Start(t, srv.Config, simkubelet.Options{
		BindPods: true, // no scheduler here
		Behaviors: []simkubelet.Behavior{
			// Never ready: the fast profile's probes succeed at once, the default's run.
			{Match: simkubelet.MatchName(ns, "stuck-pod"), Profile: "default", ReadinessProbeFailures: 1000},
			// Fails: exits 3 after a second (its widget asks for restartPolicy Never).
			{Match: simkubelet.MatchName(ns, "broken-pod"), RunTime: time.Second, ExitCode: 3},
		},
	})
	(&widgetOperator{cs: cs}).run(ctx, t)

	widget := func(name string, data map[string]string) {
		t.Helper()
		cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{widgetLabel: "true"}}, Data: data}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	state := func(name string) string {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "error: " + err.Error()
		}
		return cm.Annotations[stateKey]
	}
	waitState := func(name, want string) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return state(name) == want, nil
		}); err != nil {
			p, _ := cs.CoreV1().Pods(ns).Get(ctx, name+"-pod", metav1.GetOptions{})
			t.Fatalf("widget %s: state %q, want %q: %v; its pod: %+v", name, state(name), want, err, p)
		}
	}
	widget("ok", nil)
	widget("stuck", nil)
	widget("broken", map[string]string{"restartPolicy": "Never"}) // a one-shot widget
	widget("gated", map[string]string{"gated": "true"})

	waitState("ok", "Ready")
	waitState("broken", "Failed")
	waitState("gated", "NotReady")
	waitState("stuck", "NotReady")
	// The readiness probe of "ok" succeeded at once; "stuck"'s fails for ever: give it a
	// few of its 1 s probe periods to be sure it stays not ready.
	time.Sleep(3 * time.Second)
	if s := state("stuck"); s != "NotReady" {
		t.Errorf("stuck: state %q after 3 s, want NotReady", s)
	}
	if s := state("gated"); s != "NotReady" {
		t.Errorf("gated: state %q while its gate is unset, want NotReady", s)
	}

	// The test's load balancer sets the gate: the widget turns Ready.
	patch := []byte(`{"status":{"conditions":[{"type":"` + gateType + `","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "gated-pod", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	waitState("gated", "Ready")

	// Deleting a widget deletes its pod, and the simulated kubelet finishes it: the pod
	// object goes, as with a kubelet.
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "ok", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, "ok-pod", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Errorf("ok-pod still there 30 s after its widget was deleted: %v", err)
	}
}
