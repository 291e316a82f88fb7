package simkubelet

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// ownPodsOnly reports whether the pod informer may drop the pods of other nodes: the agent
// manages exactly the nodes of Options.Nodes, all known before the informer starts, and
// adopts none later (no node selection), so a pod it drops can never become its own (a
// pod's spec.nodeName does not change once set).
//
// It holds for one node too: the informer then watches every bound pod, not
// spec.nodeName=<node>. The API server gives a watch selected by spec.nodeName a buffer of
// 10 events (maxWatchChanSizeWithIndexAndTrigger in k8s.io/apiserver's
// pkg/storage/cacher/watch_cache_history.go, sized for a kubelet's 110 pods) and closes a
// watcher that falls that far behind ("Forcing watcher close due to unresponsiveness",
// cache_watcher.go); a node running thousands of pods outruns it in every burst. In
// 10,000-pod runs on one node the server closed the agent's watch 2 to 5 times, and each
// time the reflector streamed all pods again. A watch of every bound pod gets up to 1,000.
// Options.ManageSingleNode keeps the node's own selector: it names a node of a cluster of
// other nodes, whose pods this agent would otherwise receive and decode.
func (r *resolved) ownPodsOnly() bool {
	return !r.adoptNodes && r.Nodes >= 1
}

// newOwnPodInformer is the pod informer of an agent for which ownPodsOnly holds. The API
// server has no selector for "bound to one of these nodes", so it still watches every
// bound pod (fieldSelector), but keeps only those of the agent's nodes: each replica of a
// sharded deployment holds its own pods, not every pod of the cluster (the Go objects of
// a pod are the largest part of the agent's memory). Each replica still receives and
// decodes every bound pod's events.
func (a *agent) newOwnPodInformer(fieldSelector string) func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
	keep := func(p *v1.Pod) bool { return a.nodes.get(p.Spec.NodeName) != nil }
	return func(cs kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = fieldSelector
			l, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
			if err != nil {
				return l, err
			}
			n := 0
			for i := range l.Items {
				if keep(&l.Items[i]) {
					l.Items[n] = l.Items[i]
					n++
				}
			}
			clear(l.Items[n:])
			l.Items = l.Items[:n]
			return l, nil
		}
		watchPods := func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = fieldSelector
			w, err := cs.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
			if err != nil {
				return w, err
			}
			return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
				p, ok := e.Object.(*v1.Pod)
				switch {
				case !ok || e.Type == watch.Bookmark || e.Type == watch.Error:
					return e, true // bookmarks carry the watch's progress (and the end of a watch-list's initial events)
				default:
					return e, keep(p)
				}
			}), nil
		}
		// Only the context-aware funcs: ListWatch's List and Watch fall back to them with
		// context.Background() (k8s.io/client-go/tools/cache/listwatch.go).
		lw := &cache.ListWatch{ListWithContextFunc: list, WatchFuncWithContext: watchPods}
		// As client-go's generated informers: a client that cannot stream a watch-list
		// (the fake clientset) is listed and watched instead.
		return cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, cs), &v1.Pod{}, resync,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
}
