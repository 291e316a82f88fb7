package simkubelet

import (
	"sync"

	v1 "k8s.io/api/core/v1"
)

// maxShared bounds the values each of a shares' caches holds. A cache that fills up (a
// node agent of many nodes, pods of many templates, a StatefulSet's pods, whose hostnames
// differ) starts again empty: pods keep what they share, new pods share anew. 4,096
// values of a few hundred bytes each is a few MB at most.
const maxShared = 4096

// shares lets the pods the agent decodes share one copy of the parts that repeat from pod
// to pod, byte for byte on the wire: their spec (containers, tolerations, security
// context: one per template and node, since spec.nodeName is part of it), their labels
// (one map per template) and their status conditions (pods made ready in the same second
// have the same five). A spec does not change once a pod is bound (an in-place resize or
// an ephemeral container makes new bytes), and a Running pod's conditions stay. Of the
// 5.7 KB the agent held per pod at 10,000 bench pods, these were some 1.6 KB.
//
// What is shared is read-only, as every object the agent decodes already is (informer
// objects and the Manager's bases are never modified, and the Manager shares a base's
// lists with its cached status), and interned before it is shared: decodePod shares
// only values decoded from an object of its own. The zero value is ready.
type shares struct {
	specs      sharedCache[v1.PodSpec]
	labels     sharedCache[map[string]string]
	conditions sharedCache[[]v1.PodCondition]
}

// sharedCache holds one decoded value per encoding. The zero value is empty and ready.
type sharedCache[T any] struct {
	mu     sync.Mutex
	values map[string]T
}

// get returns the value held for the encoding b, if any.
func (c *sharedCache[T]) get(b []byte) (T, bool) {
	c.mu.Lock()
	v, ok := c.values[string(b)]
	c.mu.Unlock()
	return v, ok
}

// put holds v, decoded from b (which it copies), unless it holds one for b.
func (c *sharedCache[T]) put(b []byte, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.values[string(b)]; ok {
		return
	}
	if c.values == nil {
		c.values = map[string]T{}
	} else if len(c.values) >= maxShared {
		clear(c.values)
	}
	c.values[string(b)] = v
}
