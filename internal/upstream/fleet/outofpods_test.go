package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/simkubelet"
)

// On a real API server, a node the agent made with --max-pods 2 rejects its third pod as
// the kubelet v1.37.0 does (the status is accepted: phase Failed, reason OutOfpods, the
// kubelet's message; a Warning Event), and a rejected pod that is deleted gracefully is
// finished by the agent like any terminated pod.
func TestOutOfPodsOnARealAPIServer(t *testing.T) {
	srv := apiserver.Start(t)
	ctx := context.Background()
	ns := srv.CreateNamespace(t, "oop-").Name
	startKubelet(t, ctx, srv.Config, simkubelet.Options{
		Nodes: 1, NodeNamePrefix: "oop-node-", MaxPods: 2, Profile: "fast",
		Logger: testr.NewWithOptions(t, testr.Options{Verbosity: 0}),
	})
	pods := srv.Client.CoreV1().Pods(ns)
	poll := func(what string, cond func() (bool, error)) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) { return cond() }); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	phase := func(name string, want v1.PodPhase) func() (bool, error) {
		return func() (bool, error) {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == want, nil
		}
	}
	poll("the node", func() (bool, error) {
		_, err := srv.Client.CoreV1().Nodes().Get(ctx, "oop-node-0", metav1.GetOptions{})
		return err == nil, nil
	})
	for _, name := range []string{"a", "b"} {
		srv.CreatePod(t, apiserver.NewPod(ns, name, "oop-node-0"))
		poll(name+" Running", phase(name, v1.PodRunning))
	}
	srv.CreatePod(t, apiserver.NewPod(ns, "c", "oop-node-0"))
	poll("c Failed", phase("c", v1.PodFailed))
	const msg = "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2"
	c, err := pods.Get(ctx, "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status.Reason != "OutOfpods" || c.Status.Message != "Pod was rejected: "+msg || c.Status.StartTime == nil || c.Status.QOSClass == "" {
		t.Errorf("rejected pod's status: reason %q, message %q, startTime %v, qosClass %q", c.Status.Reason, c.Status.Message, c.Status.StartTime, c.Status.QOSClass)
	}
	poll("the OutOfpods Event", func() (bool, error) {
		evs, err := srv.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == "c" && ev.Reason == "OutOfpods" && ev.Type == v1.EventTypeWarning && ev.Message == msg {
				return true, nil
			}
		}
		return false, nil
	})
	// Graceful deletions: the agent finishes the rejected pod and the running one; the
	// running one's place then goes to a new pod.
	for _, name := range []string{"c", "a"} {
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(name+" gone", func() (bool, error) {
			_, err := pods.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}
	srv.CreatePod(t, apiserver.NewPod(ns, "d", "oop-node-0"))
	poll("d Running in a's place", phase("d", v1.PodRunning))
}
