package kubeclient_test

import (
	"context"
	"log"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/kubeclient"
)

// runAgent is the README's status.Manager snippet (internal/readme checks that the README
// shows it verbatim), with everything it uses as parameters so that it compiles.
func runAgent(ctx context.Context, restConfig *rest.Config, logger logr.Logger, informer cache.SharedIndexInformer, pod *v1.Pod, newStatus v1.PodStatus) {
	cs := kubernetes.NewForConfigOrDie(restConfig)
	// "my-node-agent" is the field manager of its PATCHes; the Client is also SyncPod's Deleter.
	kc := kubeclient.New(cs.CoreV1(), "my-node-agent")
	m := status.NewManager(kc, status.Options{Logger: logger, Deleter: kc})
	go m.Run(ctx) // sends each change at once; retries a failure at its backoff deadline; returns nil when ctx ends

	// From your pod informer: the merge base (no GET before a PATCH); a changed gate re-evaluates
	// Ready at once, and a kubelet-owned field another writer changed is put back.
	informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { m.ObservePod(ctx, o.(*v1.Pod)) },
		UpdateFunc: func(_, o any) { m.ObservePod(ctx, o.(*v1.Pod)) },
		DeleteFunc: func(o any) {
			if tombstone, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = tombstone.Obj // the watch missed the deletion; the informer's last copy
			}
			if p, ok := o.(*v1.Pod); ok {
				m.ForgetPod(ctx, p.UID)
			}
		},
	})

	// From your pod sync loop, whenever the runtime's facts change:
	if err := m.SetPodStatus(ctx, pod, newStatus); err != nil {
		log.Print(err) // a *status.TransitionError: an illegal container transition
	}
	if err := m.SetContainerReadiness(ctx, pod.UID, "containerd://4f1c", true); err != nil {
		log.Print(err) // from a readiness prober; status.ErrPodNotFound, ErrContainerNotFound
	}
	if err := m.TerminatePod(ctx, pod); err != nil { // once its containers are gone
		log.Print(err)
	}
}

// The node agent's wiring, as the README shows it: a Manager writing through client-go,
// fed by a pod informer and the agent's sync loop. (Not run: it needs a cluster.)
func Example_agent() {
	_ = runAgent
}
