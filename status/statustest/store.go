package statustest

import (
	"encoding/json"
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/watch"
)

// The methods in this file act on the store directly, as the test or as other controllers
// would. They are not counted as requests, are not recorded and never fail by injection.

// Create stores a copy of pod, with a fresh UID when it has none and a new resourceVersion,
// and returns a copy of what was stored. A pod of the same namespace and name is 409
// AlreadyExists.
func (s *Server) Create(pod *v1.Pod) (*v1.Pod, error) {
	s.mu.Lock()
	if _, ok := s.pods[key(pod.Namespace, pod.Name)]; ok {
		s.mu.Unlock()
		return nil, apierrors.NewAlreadyExists(podsResource(), pod.Name)
	}
	out := s.createLocked(pod)
	s.mu.Unlock()
	s.notify()
	return out, nil
}

// createLocked stores a copy of pod and returns a copy of what was stored.
func (s *Server) createLocked(pod *v1.Pod) *v1.Pod {
	p := pod.DeepCopy()
	if p.UID == "" {
		p.UID = s.newUIDLocked()
	}
	s.storeLocked(p, watch.Added)
	return s.pods[key(p.Namespace, p.Name)].DeepCopy()
}

// Peek returns a copy of the stored pod, or 404 NotFound, as a test's assertion reads
// it: unlike GetPod (the status.Client request), it is not counted, recorded or failed
// by an injected fault.
func (s *Server) Peek(namespace, name string) (*v1.Pod, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pods[key(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(podsResource(), name)
	}
	return p.DeepCopy(), nil
}

// Delete removes the pod, or returns 404 NotFound.
func (s *Server) Delete(namespace, name string) error {
	s.mu.Lock()
	err := s.deleteLocked(namespace, name)
	s.mu.Unlock()
	s.notify()
	return err
}

func (s *Server) deleteLocked(namespace, name string) error {
	k := key(namespace, name)
	p, ok := s.pods[k]
	if !ok {
		return apierrors.NewNotFound(podsResource(), name)
	}
	delete(s.pods, k)
	s.revision++
	p.ResourceVersion = strconv.FormatUint(s.revision, 10)
	s.pending = append(s.pending, Event{Type: watch.Deleted, Pod: p})
	return nil
}

// Recreate deletes the pod and creates it again under the same namespace and name, with the
// same labels, annotations, owner references and spec but a new UID and a fresh status
// (phase Pending), as when a controller replaces a pod; patches carrying the old UID are
// then rejected with 422. Both steps happen at once for other callers. It returns a copy of
// the new pod, or 404 NotFound.
func (s *Server) Recreate(namespace, name string) (*v1.Pod, error) {
	s.mu.Lock()
	old, ok := s.pods[key(namespace, name)]
	if !ok {
		s.mu.Unlock()
		return nil, apierrors.NewNotFound(podsResource(), name)
	}
	p := &v1.Pod{Spec: *old.Spec.DeepCopy(), Status: v1.PodStatus{Phase: v1.PodPending}}
	p.Namespace, p.Name = old.Namespace, old.Name
	meta := old.ObjectMeta.DeepCopy()
	p.Labels, p.Annotations, p.OwnerReferences = meta.Labels, meta.Annotations, meta.OwnerReferences
	_ = s.deleteLocked(namespace, name) // present: checked above
	out := s.createLocked(p)
	s.mu.Unlock()
	s.notify()
	return out, nil
}

// Update changes the stored pod with mutate, as another writer would with a PUT, bumping its
// resourceVersion when anything changed. The pod's namespace, name and UID cannot change.
// It returns a copy of the result, or 404 NotFound.
func (s *Server) Update(namespace, name string, mutate func(*v1.Pod)) (*v1.Pod, error) {
	s.mu.Lock()
	cur, ok := s.pods[key(namespace, name)]
	if !ok {
		s.mu.Unlock()
		return nil, apierrors.NewNotFound(podsResource(), name)
	}
	next := cur.DeepCopy()
	mutate(next)
	next.Namespace, next.Name, next.UID, next.ResourceVersion = cur.Namespace, cur.Name, cur.UID, cur.ResourceVersion
	s.storeLocked(next, watch.Modified)
	out := s.pods[key(namespace, name)].DeepCopy()
	s.mu.Unlock()
	s.notify()
	return out, nil
}

// SetCondition writes cond into the pod's status as another controller would: by sending
// the strategic-merge patch that replaces the condition of the same type (or appends it),
// leaving every other condition and field alone. cond is written as given (set its
// lastTransitionTime yourself). It returns a copy of the result, or 404 NotFound.
func (s *Server) SetCondition(namespace, name string, cond v1.PodCondition) (*v1.Pod, error) {
	return s.patchConditions(namespace, name, func(conds []v1.PodCondition) []v1.PodCondition {
		for i := range conds {
			if conds[i].Type == cond.Type {
				conds[i] = cond
				return conds
			}
		}
		return append(conds, cond)
	})
}

// RemoveCondition deletes the conditions of type t from the pod's status as another
// controller's strategic-merge patch would. It returns a copy of the result, or 404 NotFound.
func (s *Server) RemoveCondition(namespace, name string, t v1.PodConditionType) (*v1.Pod, error) {
	return s.patchConditions(namespace, name, func(conds []v1.PodCondition) []v1.PodCondition {
		out := conds[:0]
		for _, c := range conds {
			if c.Type != t {
				out = append(out, c)
			}
		}
		return out
	})
}

// patchConditions builds the patch from the stored status to the one with edited conditions,
// and applies it through the same path as PatchPodStatus (without counting or faults).
// The patch is apimachinery's, not the status package's encoder: the fake must not share
// code with what it tests.
func (s *Server) patchConditions(namespace, name string, edit func([]v1.PodCondition) []v1.PodCondition) (*v1.Pod, error) {
	s.mu.Lock()
	cur, ok := s.pods[key(namespace, name)]
	if !ok {
		s.mu.Unlock()
		return nil, apierrors.NewNotFound(podsResource(), name)
	}
	next := cur.Status.DeepCopy()
	next.Conditions = edit(next.Conditions)
	p, err := twoWayStatusPatch(&cur.Status, next)
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("statustest: writing conditions of pod %s/%s: %w", namespace, name, err)
	}
	out, err := s.applyLocked(namespace, name, p)
	s.mu.Unlock()
	s.notify()
	if err != nil {
		return nil, fmt.Errorf("statustest: writing conditions of pod %s/%s: %w", namespace, name, err)
	}
	return out, nil
}

// twoWayStatusPatch is the strategic-merge patch from a pod with status old to one with
// status next, as apimachinery's strategicpatch computes it for any controller.
func twoWayStatusPatch(old, next *v1.PodStatus) ([]byte, error) {
	a, err := json.Marshal(v1.Pod{Status: *old})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v1.Pod{Status: *next})
	if err != nil {
		return nil, err
	}
	return strategicpatch.CreateTwoWayMergePatch(a, b, v1.Pod{})
}
