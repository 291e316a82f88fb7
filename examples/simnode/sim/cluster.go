package sim

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

// Cluster is the API server the simulation runs against. The node agent's own requests go
// through the embedded status.Client (they are counted and shown) and DeleteFinishedPod
// (counted as Summary.Deletes); the other methods are the rest of the world — the
// scheduler, the load-balancer controller, a user deleting a pod, the node agent's
// informer — and are not counted as the agent's requests.
type Cluster interface {
	status.Client
	// DeleteFinishedPod deletes the pod object for good, as a node agent does once a
	// deleted pod's containers have stopped and its terminal status is on the server:
	// with uid as a precondition and grace period 0. A pod already gone, or whose name
	// now belongs to another pod (the precondition failed), counts as deleted.
	DeleteFinishedPod(ctx context.Context, namespace, name string, uid types.UID) error
	// CreatePod creates the pod and returns the stored copy.
	CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
	// WriteCondition writes cond into the pod's status as another controller (the
	// scheduler, the load balancer) would, and returns the stored pod.
	WriteCondition(ctx context.Context, namespace, name string, cond v1.PodCondition) (*v1.Pod, error)
	// DeletePod starts a graceful deletion: the pod gets a deletionTimestamp and stays
	// until its node agent finishes it.
	DeletePod(ctx context.Context, namespace, name string, now time.Time) (*v1.Pod, error)
	// Peek returns the server's copy of the pod, as the node agent's informer sees it.
	// Its errors name the pod.
	Peek(ctx context.Context, namespace, name string) (*v1.Pod, error)
}

// Memory is a Cluster held in memory by a statustest.Server: no API server needed.
type Memory struct {
	*statustest.Server
}

// NewMemory returns an empty in-memory cluster.
func NewMemory() Memory { return Memory{Server: statustest.NewServer()} }

// CreatePod implements Cluster.
func (m Memory) CreatePod(_ context.Context, pod *v1.Pod) (*v1.Pod, error) {
	p, err := m.Create(pod)
	if err != nil {
		return nil, fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return p, nil
}

// WriteCondition implements Cluster.
func (m Memory) WriteCondition(_ context.Context, namespace, name string, cond v1.PodCondition) (*v1.Pod, error) {
	p, err := m.SetCondition(namespace, name, cond)
	if err != nil {
		return nil, fmt.Errorf("write condition %s of pod %s/%s: %w", cond.Type, namespace, name, err)
	}
	return p, nil
}

// DeletePod implements Cluster.
func (m Memory) DeletePod(_ context.Context, namespace, name string, now time.Time) (*v1.Pod, error) {
	grace := int64(30)
	p, err := m.Update(namespace, name, func(p *v1.Pod) {
		ts := metav1.NewTime(now)
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &grace
		if p.Generation > 0 {
			p.Generation++ // as the API server does (k8s.io/apiserver/pkg/registry/rest: BeforeDelete)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	return p, nil
}

// DeleteFinishedPod implements Cluster with statustest.Server's DeletePod, the request
// with a UID precondition and grace period 0.
func (m Memory) DeleteFinishedPod(ctx context.Context, namespace, name string, uid types.UID) error {
	err := m.Server.DeletePod(ctx, namespace, name, uid)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// Peek implements Cluster.
func (m Memory) Peek(_ context.Context, namespace, name string) (*v1.Pod, error) {
	return m.Server.Peek(namespace, name)
}
