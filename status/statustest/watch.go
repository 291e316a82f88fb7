package statustest

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Event is one write to the store, as a watch would report it.
type Event struct {
	// Type is watch.Added, watch.Modified or watch.Deleted.
	Type watch.EventType
	// Pod is a copy of the pod after the write (before it, for a deletion, with the
	// deletion's resourceVersion).
	Pod *v1.Pod
}

// OnWrite registers fn to be called for every later write: creations, deletions, and
// updates that changed a pod (patches from clients and from the helpers alike). Calls come
// one at a time and in the order of the writes, on the goroutine of one of the writers,
// after the store lock is released, so fn may call any Server method; each call gets its own
// copy of the pod. A typical use feeds a consumer's watch handler, such as a status
// manager's ObservePod.
func (s *Server) OnWrite(fn func(Event)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers = append(s.watchers, fn)
}

// notify delivers pending events. Only one goroutine delivers at a time; a writer that finds
// delivery in progress (including a watcher writing from its callback) leaves its events to
// the deliverer, which looks again after it stops delivering.
func (s *Server) notify() {
	for {
		if !s.deliver.TryLock() {
			return
		}
		for {
			s.mu.Lock()
			evs, fns := s.pending, s.watchers
			s.pending = nil
			s.mu.Unlock()
			if len(evs) == 0 {
				break
			}
			for _, ev := range evs {
				for _, fn := range fns {
					fn(Event{Type: ev.Type, Pod: ev.Pod.DeepCopy()})
				}
			}
		}
		s.deliver.Unlock()
		s.mu.Lock()
		more := len(s.pending) > 0
		s.mu.Unlock()
		if !more {
			return
		}
	}
}
