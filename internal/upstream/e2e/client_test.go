package e2e

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/status/kubeclient"
)

// TestClientAgainstRealAPIServer: kubeclient.New over a clientset's CoreV1, in both
// content types, against kube-apiserver v1.37.0 (its requests are built on the REST
// client with no retries; the simulated kubelet's plain-HTTP pod client,
// simkubelet/internal/podclient, meets a real server in the fleet tests). Its status
// PATCH returns the stored pod; its DELETE, which asks for the deleted pod's metadata
// only, is accepted, and the failures a kubelet meets come back as the errors callers tell apart:
// a DELETE whose UID precondition does not hold is a Conflict and leaves the pod, one of
// a pod already gone is NotFound.
func TestClientAgainstRealAPIServer(t *testing.T) {
	for _, contentType := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		t.Run(contentType, func(t *testing.T) {
			ctx := context.Background()
			ns := srv.CreateNamespace(t, "direct-").Name
			cfg := srv.StableConfig()
			cfg.ContentType = contentType
			cfg.UserAgent = "podstatus-e2e-direct"
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := corev1client.NewForConfigAndClient(cfg, hc)
			if err != nil {
				t.Fatal(err)
			}
			c := kubeclient.New(cs, "podstatus-e2e-direct")
			pod := srv.CreatePod(t, apiserver.NewPod(ns, "p", "node-a"))

			got, err := c.PatchPodStatus(ctx, ns, "p", []byte(`{"metadata":{"uid":"`+string(pod.UID)+`"},"status":{"phase":"Running"}}`))
			if err != nil {
				t.Fatalf("PATCH status: %v", err)
			}
			if got.UID != pod.UID || got.Status.Phase != v1.PodRunning || got.ResourceVersion == pod.ResourceVersion {
				t.Errorf("PATCH answer: UID %s, phase %s, resourceVersion %s; want %s, Running, newer than %s",
					got.UID, got.Status.Phase, got.ResourceVersion, pod.UID, pod.ResourceVersion)
			}

			err = c.DeletePod(ctx, ns, "p", "not-the-uid")
			if !apierrors.IsConflict(err) {
				t.Errorf("DELETE with another UID: error %v, want a Conflict", err)
			}
			if _, err := srv.Client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{}); err != nil {
				t.Errorf("after a DELETE with another UID the pod should stay: %v", err)
			}

			if err := c.DeletePod(ctx, ns, "p", pod.UID); err != nil {
				t.Fatalf("DELETE: %v", err)
			}
			if _, err := srv.Client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("after the DELETE, GET says %v; want NotFound", err)
			}
			if err := c.DeletePod(ctx, ns, "p", pod.UID); !apierrors.IsNotFound(err) {
				t.Errorf("DELETE of a pod already gone: error %v, want NotFound", err)
			}
		})
	}
}
