package statustest

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// DeletePod deletes the stored pod as a DELETE with grace period 0 and a UID
// precondition does (status.PodDeleter): the pod is removed at once. A missing pod is
// 404 NotFound; a stored pod with another UID is 409 Conflict, as the API server answers
// a failed precondition. It counts as a DELETE and may be failed by an injected fault. A
// done ctx fails it with ctx.Err() before it counts.
func (s *Server) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("statustest: DELETE pod %s/%s: %w", namespace, name, err)
	}
	s.mu.Lock()
	s.counts[VerbDelete]++
	f, faulted := s.nextFaultLocked(VerbDelete)
	if faulted && !f.AfterWrite {
		s.mu.Unlock()
		return f.Err
	}
	var err error
	p, ok := s.pods[key(namespace, name)]
	switch {
	case !ok:
		err = apierrors.NewNotFound(podsResource(), name)
	case uid != "" && p.UID != uid:
		err = apierrors.NewConflict(podsResource(), name,
			fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", uid, p.UID))
	default:
		err = s.deleteLocked(namespace, name)
	}
	if faulted { // AfterWrite: deleted (or not) as asked, but the answer is lost
		err = f.Err
	}
	s.mu.Unlock()
	s.notify()
	return err
}
