// Package kube runs the simulated node of examples/simnode against a real cluster: it
// implements sim.Cluster over client-go, with the node agent's own requests going through
// status/kubeclient. It is its own module so that client-go stays out of the root module.
package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/examples/simnode/sim"
	"github.com/podstatus/podstatus/status/kubeclient"
)

// Cluster is a sim.Cluster over a real API server.
type Cluster struct {
	*kubeclient.Client
	cs kubernetes.Interface
	// What Prepare and CreatePod created, for Cleanup: names, "" when it existed already.
	createdNamespace, createdNode string
	mu                            sync.Mutex
	createdPods                   []*v1.Pod
}

var _ sim.Cluster = (*Cluster)(nil)

// New returns a Cluster that talks to the API server behind cs; its status PATCHes name
// the field manager "podstatus-simnode".
func New(cs kubernetes.Interface) *Cluster {
	return &Cluster{Client: kubeclient.New(cs.CoreV1(), "podstatus-simnode"), cs: cs}
}

// Prepare creates the namespace and the Node object the simulated pods are bound to (pods
// bound to a node that does not exist are garbage-collected by the pod GC controller). An
// existing node or namespace is fine. Cleanup deletes what it created.
func (c *Cluster) Prepare(ctx context.Context, namespace, node string) error {
	_, err := c.cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	switch {
	case err == nil:
		c.createdNamespace = namespace
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	_, err = c.cs.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels: map[string]string{"podstatus.dev/simulated": "true"}}}, metav1.CreateOptions{})
	switch {
	case err == nil:
		c.createdNode = node
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create node %s: %w", node, err)
	}
	return nil
}

// created describes what Prepare and CreatePod created, for a message: "7 pods,
// namespace simnode-1, node simnode-1".
func (c *Cluster) created() string {
	c.mu.Lock()
	parts := []string{fmt.Sprintf("%d pods", len(c.createdPods))}
	c.mu.Unlock()
	if c.createdNamespace != "" {
		parts = append(parts, "namespace "+c.createdNamespace)
	}
	if c.createdNode != "" {
		parts = append(parts, "node "+c.createdNode)
	}
	return strings.Join(parts, ", ")
}

// Cleanup removes what the run left: it deletes the pods CreatePod created at once
// (grace period 0 and a UID precondition: no kubelet finishes them once the simulation
// has stopped, and a namespace holding terminating pods is never deleted), then the
// namespace and the node, if Prepare created them. Everything is attempted; the errors
// are joined.
func (c *Cluster) Cleanup(ctx context.Context) error {
	var errs []error
	c.mu.Lock()
	pods := c.createdPods
	c.createdPods = nil
	c.mu.Unlock()
	for _, p := range pods {
		if err := c.DeleteFinishedPod(ctx, p.Namespace, p.Name, p.UID); err != nil {
			errs = append(errs, err)
		}
	}
	if c.createdNamespace != "" {
		err := c.cs.CoreV1().Namespaces().Delete(ctx, c.createdNamespace, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete namespace %s: %w", c.createdNamespace, err))
		}
	}
	if c.createdNode != "" {
		err := c.cs.CoreV1().Nodes().Delete(ctx, c.createdNode, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete node %s: %w", c.createdNode, err))
		}
	}
	return errors.Join(errs...)
}

// CreatePod implements sim.Cluster.
func (c *Cluster) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	p, err := c.cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c.mu.Lock()
	c.createdPods = append(c.createdPods, p)
	c.mu.Unlock()
	return p, nil
}

// WriteCondition implements sim.Cluster: a strategic-merge patch of the status that
// replaces (or adds) the one condition, as another controller writes its own.
func (c *Cluster) WriteCondition(ctx context.Context, namespace, name string, cond v1.PodCondition) (*v1.Pod, error) {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []v1.PodCondition{cond}}})
	if err != nil {
		return nil, fmt.Errorf("encode condition %s: %w", cond.Type, err)
	}
	p, err := c.cs.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return nil, fmt.Errorf("write condition %s of pod %s/%s: %w", cond.Type, namespace, name, err)
	}
	return p, nil
}

// DeletePod implements sim.Cluster: a graceful delete. The pod stays, with a
// deletionTimestamp, because no kubelet finishes it.
func (c *Cluster) DeletePod(ctx context.Context, namespace, name string, _ time.Time) (*v1.Pod, error) {
	grace := int64(30)
	if err := c.cs.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		return nil, fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	return c.Peek(ctx, namespace, name)
}

// DeleteFinishedPod implements sim.Cluster: a DELETE with the pod's UID as a precondition
// and grace period 0, as the kubelet's status manager sends it. Not found and a failed
// precondition (409 Conflict) count as done.
func (c *Cluster) DeleteFinishedPod(ctx context.Context, namespace, name string, uid types.UID) error {
	err := c.cs.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(uid))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// Peek implements sim.Cluster with a GET (in a real agent, an informer's cache read).
func (c *Cluster) Peek(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	p, err := c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read pod %s/%s: %w", namespace, name, err)
	}
	return p, nil
}
