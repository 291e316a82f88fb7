package kubeclient

import (
	"context"
	"fmt"
	"io"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/status"
)

// Client is a status.Client backed by client-go. Its errors are client-go's own, not
// wrapped (the Manager names the request and the pod), so apierrors.IsNotFound and
// friends work on them. It is safe for concurrent use.
type Client struct {
	pods         corev1client.PodsGetter
	rest         *rest.RESTClient // pods' REST client, if it has a real one: see PatchPodStatus
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
// client-go's.
//
// When pods has a REST client (a clientset's CoreV1()), the request is built on it as
// client-go's typed Patch builds it, but with MaxRetries(0): client-go's Request resends
// a request answered 429 or 5xx with Retry-After by itself, up to ten times, sleeping the
// delay inside the call and holding the Manager's worker all along. Without retries the
// error comes back at once with its delay (apierrors.SuggestsClientDelay), which the
// Manager's own retry waits for off the worker, after which it may patch a newer status.
func (c *Client) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	if c.rest == nil {
		return c.pods.Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch,
			metav1.PatchOptions{FieldManager: c.fieldManager}, "status")
	}
	pod := &v1.Pod{}
	err := c.rest.Patch(types.StrategicMergePatchType).
		UseProtobufAsDefault(). // as the typed pods client (gentype.PrefersProtobuf)
		Namespace(namespace).Resource("pods").Name(name).SubResource("status").
		VersionedParams(&metav1.PatchOptions{FieldManager: c.fieldManager}, scheme.ParameterCodec).
		Body(patch).
		MaxRetries(0).
		Do(ctx).
		Into(pod)
	if err != nil {
		return nil, err
	}
	return pod, nil
}

var _ status.PodDeleter = (*Client)(nil)

// DeletePod deletes the pod with grace period 0 and its UID as a precondition, the
// request the kubelet's status manager makes once a deleted pod's terminal status is on
// the server (canBeDeleted in pkg/kubelet/status/status_manager.go). The error is the
// API's: 404 when the pod is gone, 409 when the name belongs to a pod with another UID.
//
// When pods has a REST client (a clientset's CoreV1()), the request is client-go's
// typed Delete with two changes. Nothing is retried inside the call (MaxRetries(0), as
// for PatchPodStatus). The answer, the deleted pod, is asked for as its metadata only
// (Accept: PartialObjectMetadata, as k8s.io/client-go/metadata asks; the API server
// converts a DELETE's answer to it, transformResponseObject in
// k8s.io/apiserver/pkg/endpoints/handlers/response.go, called from delete.go, and then neither encodes nor
// sends the pod's spec and status) and is discarded as it is read, where the typed
// Delete reads the whole pod into memory (Request.Do) only to drop it. A failure's
// Status is never converted (errors are not), so it is served as plain JSON, the last
// media type asked for, and the errors are the typed Delete's.
func (c *Client) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	opts := deleteOptions(uid)
	if c.rest == nil {
		return c.pods.Pods(namespace).Delete(ctx, name, opts)
	}
	body, err := c.rest.Delete().Namespace(namespace).Resource("pods").Name(name).Body(&opts).
		SetHeader("Accept", deleteAccept).
		MaxRetries(0).
		Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	if _, err := io.Copy(io.Discard, body); err != nil {
		return fmt.Errorf("reading the answer to DELETE pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// deleteAccept is the Accept of a DELETE: the deleted pod's metadata
// (PartialObjectMetadata) in protobuf or JSON, then plain JSON, which serves a failure's
// Status. The answer is never decoded, so a JSON client may be answered in protobuf.
const deleteAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// deleteOptions are the options of the kubelet's DELETE of the pod uid: no grace period,
// and the pod's UID as a precondition, so that a pod recreated under the same name is
// not deleted (canBeDeleted and syncPod in pkg/kubelet/status/status_manager.go).
func deleteOptions(uid types.UID) metav1.DeleteOptions {
	return metav1.DeleteOptions{
		GracePeriodSeconds: new(int64),
		Preconditions:      metav1.NewUIDPreconditions(string(uid)),
	}
}
