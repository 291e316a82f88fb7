package kubeclient

import (
	"context"
	"fmt"
	"io"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/status"
)

// Client is a status.Client backed by client-go. Its errors are client-go's own, not
// wrapped (the Manager names the request and the pod), so apierrors.IsNotFound and
// friends work on them. It is safe for concurrent use.
type Client struct {
	pods         corev1client.PodsGetter
	rest         *rest.RESTClient // pods' REST client, if it has a real one: see DeletePod
	direct       *direct          // NewForConfigAndClient's request path; nil for New's
	fieldManager string
}

// DefaultFieldManager is the field manager of a Client's PATCHes when New or
// NewForConfigAndClient is given an empty one.
const DefaultFieldManager = "podstatus"

// New returns a Client that reads pods and patches pods/status through pods (a
// clientset's CoreV1(), or anything else that gives a PodsInterface per namespace).
// Every PATCH names fieldManager as its field manager (metav1.PatchOptions.FieldManager),
// so managedFields show which agent wrote the status (the kubelet's is "kubelet"); an
// empty fieldManager means DefaultFieldManager.
func New(pods corev1client.PodsGetter, fieldManager string) *Client {
	if fieldManager == "" {
		fieldManager = DefaultFieldManager
	}
	c := &Client{pods: pods, fieldManager: fieldManager}
	// A clientset's CoreV1() has one; client-go's fake clientset returns a nil one.
	if g, ok := pods.(interface{ RESTClient() rest.Interface }); ok {
		if rc, ok := g.RESTClient().(*rest.RESTClient); ok && rc != nil {
			c.rest = rc
		}
	}
	return c
}

var _ status.Client = (*Client)(nil)

// GetPod reads the pod from the API server (a GET, not a cache read: the Manager calls
// it only when it has no fresher copy). The error is client-go's.
func (c *Client) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	return c.pods.Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

// PatchPodStatus sends patch as a strategic-merge PATCH of the pod's status subresource,
// with the Client's field manager, and returns the pod the server stored. The error is
// client-go's, or made as client-go makes it (NewForConfigAndClient).
func (c *Client) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	if c.direct != nil {
		return c.direct.patchStatus(ctx, namespace, name, patch)
	}
	return c.pods.Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{FieldManager: c.fieldManager}, "status")
}

var _ status.PodDeleter = (*Client)(nil)

// DeletePod deletes the pod with grace period 0 and its UID as a precondition, the
// request the kubelet's status manager makes once a deleted pod's terminal status is on
// the server (canBeDeleted in pkg/kubelet/status/status_manager.go). The error is the
// API's: 404 when the pod is gone, 409 when the name belongs to a pod with another UID.
//
// When pods has a REST client (a clientset's CoreV1()), the answer's body, the deleted
// pod, is discarded as it is read: client-go's typed Delete reads it whole into memory
// (Request.Do) only to drop it. The request and the errors are the same. A Client of NewForConfigAndClient sends the
// same request without client-go's Request (see there).
func (c *Client) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	if c.direct != nil {
		return c.direct.deletePod(ctx, namespace, name, uid)
	}
	opts := deleteOptions(uid)
	if c.rest == nil {
		return c.pods.Pods(namespace).Delete(ctx, name, opts)
	}
	body, err := c.rest.Delete().Namespace(namespace).Resource("pods").Name(name).Body(&opts).Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	if _, err := io.Copy(io.Discard, body); err != nil {
		return fmt.Errorf("reading the answer to DELETE pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// deleteOptions are the options of the kubelet's DELETE of the pod uid: no grace period,
// and the pod's UID as a precondition, so that a pod recreated under the same name is
// not deleted (canBeDeleted and syncPod in pkg/kubelet/status/status_manager.go).
func deleteOptions(uid types.UID) metav1.DeleteOptions {
	return metav1.DeleteOptions{
		GracePeriodSeconds: new(int64),
		Preconditions:      metav1.NewUIDPreconditions(string(uid)),
	}
}
