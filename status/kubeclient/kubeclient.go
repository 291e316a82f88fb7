package kubeclient

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/podstatus/podstatus/status"
)

// Client is a status.Client backed by a client-go clientset. Its errors are the
// apimachinery StatusErrors client-go returns, wrapped with the pod's name, so
// apierrors.IsNotFound and friends keep working on them.
type Client struct {
	cs kubernetes.Interface
}

// New returns a Client that reads pods and patches pods/status through cs.
func New(cs kubernetes.Interface) *Client { return &Client{cs: cs} }

var _ status.Client = (*Client)(nil)

// GetPod reads the pod from the API server (a GET, not a cache read: the manager calls it
// only when it has no fresher copy).
func (c *Client) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	p, err := c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
	}
	return p, nil
}

// PatchPodStatus sends patch as a strategic-merge PATCH of the pod's status subresource
// and returns the pod the server stored.
func (c *Client) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	p, err := c.cs.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return nil, fmt.Errorf("patch status of pod %s/%s: %w", namespace, name, err)
	}
	return p, nil
}

var _ status.PodDeleter = (*Client)(nil)

// DeletePod deletes the pod with grace period 0 and its UID as a precondition, the
// request the kubelet's status manager makes once a deleted pod's terminal status is on
// the server (canBeDeleted in pkg/kubelet/status/status_manager.go). The error is the
// API's: 404 when the pod is gone, 409 when the name belongs to a pod with another UID.
func (c *Client) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	return c.cs.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64),
		Preconditions:      metav1.NewUIDPreconditions(string(uid)),
	})
}
