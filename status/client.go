package status

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// Client is everything the Manager needs from an API server: read one pod and send a
// strategic-merge PATCH of its status subresource.
//
// Implementations must return errors as apimachinery *errors.StatusError values (or wrap
// them) so that apierrors.IsNotFound, IsConflict, IsTooManyRequests, IsInvalid and friends
// work on them; the Manager's retry policy depends on that. status/statustest provides an
// in-memory implementation for tests and status/kubeclient one over client-go.
type Client interface {
	// GetPod returns the server's current copy of the pod.
	GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error)
	// PatchPodStatus applies patch (application/strategic-merge-patch+json) to the pod's
	// status subresource and returns the pod as the server stored it.
	PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error)
}
