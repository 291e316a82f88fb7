package simkubelet

import (
	"context"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// binder binds the pods no scheduler will bind to the kubelet's nodes (Options.BindPods),
// through the binding subresource as kube-scheduler's DefaultBinder does
// (pkg/scheduler/framework/plugins/defaultbinder): the API server then sets spec.nodeName
// and the PodScheduled condition (pkg/registry/core/pod/storage: setPodNodeAndMetadata),
// and the pod reaches the kubelet's own informer as any bound pod does.
type binder struct {
	a      *agent
	lister cache.Indexer
	queue  workqueue.TypedRateLimitingInterface[string]

	mu    sync.Mutex
	bound map[string]int // pods bound per node by this binder, to spread them
}

// startBinder starts the informer of unbound pods (on factories' shutdown) and the
// binder's worker (in loops), until ctx ends.
func (a *agent) startBinder(ctx context.Context, loops *sync.WaitGroup) informers.SharedInformerFactory {
	f := informers.NewSharedInformerFactoryWithOptions(a.cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", "").String()
	}))
	inf := f.Core().V1().Pods().Informer()
	_ = inf.SetTransform(stripManagedFields)
	b := &binder{a: a, lister: inf.GetIndexer(), bound: map[string]int{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 5*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "simkubelet-bind"})}
	add := func(o any) {
		if k, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			b.queue.Add(k)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, o any) { add(o) }})
	f.StartWithContext(ctx)
	loops.Go(func() {
		<-ctx.Done()
		b.queue.ShutDown()
	})
	loops.Go(func() {
		for {
			k, shutdown := b.queue.Get()
			if shutdown {
				return
			}
			if b.bind(ctx, k) {
				b.queue.Forget(k)
			} else {
				b.queue.AddRateLimited(k)
			}
			b.queue.Done(k)
		}
	})
	return f
}

// bind binds the pod of key if it is still unbound and for one of the schedulers the
// kubelet stands in for. It reports false when the pod should be tried again: no node
// fits it yet, or the request failed in a way that may pass.
func (b *binder) bind(ctx context.Context, key string) bool {
	o, ok, err := b.lister.GetByKey(key)
	if err != nil || !ok {
		return true // gone, or bound (it left the informer)
	}
	pod, ok := o.(*v1.Pod)
	if !ok || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil ||
		!slices.Contains(b.a.cfg.BindSchedulerNames, pod.Spec.SchedulerName) {
		return true
	}
	node := b.pick(pod)
	if node == "" {
		return false
	}
	err = b.a.cs.CoreV1().Pods(pod.Namespace).Bind(ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
	switch {
	case err == nil:
		b.mu.Lock()
		b.bound[node]++
		b.mu.Unlock()
		b.a.log.V(2).Info("Bound pod", "pod", klogRef(pod), "node", node)
		return true
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return true // deleted, or bound by someone else meanwhile
	default:
		b.a.log.Error(err, "Cannot bind pod", "pod", klogRef(pod), "node", node)
		return ctx.Err() != nil
	}
}

// pick returns the managed node for pod: one whose labels match its nodeSelector and that
// has room for it, with the fewest pods this binder bound to it (then by name); "" when
// none fits.
func (b *binder) pick(pod *v1.Pod) string {
	sel := labels.SelectorFromSet(pod.Spec.NodeSelector)
	b.mu.Lock()
	defer b.mu.Unlock()
	best, bestCount := "", 0
	for _, n := range b.a.nodes.list() {
		if !sel.Matches(labels.Set(n.labels)) || !n.admission.hasRoom() {
			continue
		}
		c := b.bound[n.name]
		if best == "" || c < bestCount || (c == bestCount && n.name < best) {
			best, bestCount = n.name, c
		}
	}
	return best
}
