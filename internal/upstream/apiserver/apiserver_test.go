package apiserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/status"

	"github.com/podstatus/podstatus/conditions"
)

// PodStatusClient must stay usable as the library's status.Client.
var _ status.Client = apiserver.PodStatusClient{}

const gate v1.PodConditionType = "www.example.com/feature-1"

// TestSmoke starts one server and runs the subtests against it, each in its own namespace.
func TestSmoke(t *testing.T) {
	srv := apiserver.Start(t)
	t.Logf("startup took %v", srv.StartupTime)
	ctx := context.Background()
	kubelet := apiserver.PodStatusClient{Client: srv.Client}

	t.Run("pod bound to a node without a Node object", func(t *testing.T) {
		ns := srv.CreateNamespace(t, "smoke-").Name
		pod := srv.CreatePod(t, apiserver.NewPod(ns, "p", "node-without-object"))
		if pod.UID == "" || pod.Spec.NodeName != "node-without-object" || pod.Status.Phase != v1.PodPending {
			t.Fatalf("created pod: uid %q nodeName %q phase %q", pod.UID, pod.Spec.NodeName, pod.Status.Phase)
		}
		if len(pod.Status.Conditions) != 0 {
			t.Fatalf("created pod has conditions %+v, want none", pod.Status.Conditions)
		}
	})

	t.Run("strategic-merge PATCH of pods/status keeps a foreign condition", func(t *testing.T) {
		ns := srv.CreateNamespace(t, "smoke-").Name
		srv.CreateNode(t, "node-1")
		p := apiserver.NewPod(ns, "p", "node-1")
		p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
		pod := srv.CreatePod(t, p)

		// Another controller owns the readiness gate's condition.
		other := apiserver.PodStatusClient{Client: srv.NewClient(t, "gate-controller")}
		gatePatch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, gate)
		if _, err := other.PatchPodStatus(ctx, ns, "p", []byte(gatePatch)); err != nil {
			t.Fatalf("gate controller patch: %v", err)
		}

		// The kubelet's patch: metadata.uid as precondition, its conditions merged by type.
		ltt := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		patch := map[string]any{
			"metadata": map[string]any{"uid": pod.UID},
			"status": map[string]any{
				"phase": v1.PodRunning,
				"conditions": []v1.PodCondition{
					{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue, LastTransitionTime: ltt},
					{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: ltt},
					{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: ltt},
					{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: ltt},
				},
			},
		}
		body, err := json.Marshal(patch)
		if err != nil {
			t.Fatal(err)
		}
		got, err := kubelet.PatchPodStatus(ctx, ns, "p", body)
		if err != nil {
			t.Fatalf("kubelet patch %s: %v", body, err)
		}
		if got.Status.Phase != v1.PodRunning {
			t.Errorf("phase %q, want Running", got.Status.Phase)
		}
		for _, ct := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady, gate} {
			c := conditions.Get(got.Status.Conditions, ct)
			if c == nil || c.Status != v1.ConditionTrue {
				t.Errorf("condition %s = %+v, want True; all: %+v", ct, c, got.Status.Conditions)
			}
		}
		if c := conditions.Get(got.Status.Conditions, v1.PodReady); c != nil && !c.LastTransitionTime.Equal(&ltt) {
			t.Errorf("Ready lastTransitionTime %v, want %v", c.LastTransitionTime, ltt)
		}
		// The GET of a second, independent client sees the same stored object.
		again, err := other.GetPod(ctx, ns, "p")
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if again.ResourceVersion != got.ResourceVersion {
			t.Errorf("resourceVersion after GET %s, after PATCH %s", again.ResourceVersion, got.ResourceVersion)
		}
	})

	t.Run("PATCH with a wrong metadata.uid is rejected", func(t *testing.T) {
		ns := srv.CreateNamespace(t, "smoke-").Name
		pod := srv.CreatePod(t, apiserver.NewPod(ns, "p", "node-1"))
		wrong := types.UID("00000000-0000-0000-0000-000000000000")
		body := fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"phase":"Running"}}`, wrong)
		_, err := kubelet.PatchPodStatus(ctx, ns, "p", []byte(body))
		if err == nil {
			t.Fatalf("PATCH with uid %s for pod %s succeeded, want an error", wrong, pod.UID)
		}
		code := apierrors.ReasonForError(err)
		var se apierrors.APIStatus
		if !errors.As(err, &se) {
			t.Fatalf("error %T %v is not an API status", err, err)
		}
		st := se.Status()
		t.Logf("UID mismatch: HTTP %d, reason %q, message %q, details %+v", st.Code, code, st.Message, st.Details)
		// What kube-apiserver v1.37.0 answers (recorded by this test): 422 Invalid, the
		// generic update validation of the immutable metadata.uid.
		if st.Code != http.StatusUnprocessableEntity || !apierrors.IsInvalid(err) {
			t.Errorf("UID mismatch answered %d %s, want 422 Invalid", st.Code, code)
		}
		after, err := kubelet.GetPod(ctx, ns, "p")
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if after.Status.Phase != v1.PodPending || after.ResourceVersion != pod.ResourceVersion {
			t.Errorf("rejected PATCH changed the pod: phase %q rv %s (was %s)", after.Status.Phase, after.ResourceVersion, pod.ResourceVersion)
		}
	})
}

// TestRestart: a new API server on the same etcd serves the same objects at the same
// resourceVersions; a client of StableConfig made before the restart works again once
// its Host reaches the new server, and Config is the new server's.
func TestRestart(t *testing.T) {
	srv := apiserver.Start(t)
	ctx := context.Background()
	ns := srv.CreateNamespace(t, "restart-").Name
	before := srv.CreatePod(t, apiserver.NewPod(ns, "p", "node-1"))
	stable := srv.StableConfig()
	oldHost := srv.Config.Host

	srv.Restart(t)
	if srv.Config.Host == oldHost {
		t.Errorf("Config.Host %s unchanged by Restart", oldHost)
	}
	got, err := srv.Client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("GET after Restart: %v", err)
	}
	if got.UID != before.UID || got.ResourceVersion != before.ResourceVersion {
		t.Errorf("after Restart: uid %s rv %s, want %s %s", got.UID, got.ResourceVersion, before.UID, before.ResourceVersion)
	}
	stable.Host = srv.Config.Host // as a proxy whose target follows the server would
	c, err := kubernetes.NewForConfig(stable)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Errorf("GET with StableConfig from before Restart: %v", err)
	}
}
