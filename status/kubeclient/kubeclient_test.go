package kubeclient

import (
	"context"
	"encoding/json"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestGetPodAndNotFound(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1"}}
	c := New(fake.NewClientset(pod).CoreV1(), "test-agent")
	got, err := c.GetPod(context.Background(), "ns", "p")
	if err != nil {
		t.Fatalf("GetPod: %v", err)
	}
	if got.UID != "u1" {
		t.Fatalf("GetPod returned UID %q, want u1", got.UID)
	}
	_, err = c.GetPod(context.Background(), "ns", "missing")
	if !apierrors.IsNotFound(err) || err.Error() != `pods "missing" not found` {
		t.Fatalf("GetPod(missing) error = %v, want client-go's NotFound StatusError, with nothing added", err)
	}
}

func TestPatchPodStatusSendsStrategicMergeToStatusSubresource(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1"}}
	cs := fake.NewClientset(pod)
	var seen k8stesting.PatchAction
	cs.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		seen = a.(k8stesting.PatchAction)
		return false, nil, nil
	})
	patch := []byte(`{"metadata":{"uid":"u1"},"status":{"phase":"Running"}}`)
	got, err := New(cs.CoreV1(), "test-agent").PatchPodStatus(context.Background(), "ns", "p", patch)
	if err != nil {
		t.Fatalf("PatchPodStatus: %v", err)
	}
	if seen == nil {
		t.Fatal("no PATCH reached the clientset")
	}
	if seen.GetSubresource() != "status" || seen.GetPatchType() != types.StrategicMergePatchType {
		t.Fatalf("PATCH went to subresource %q with type %q, want status / strategic merge", seen.GetSubresource(), seen.GetPatchType())
	}
	if fm := seen.(k8stesting.PatchActionImpl).PatchOptions.FieldManager; fm != "test-agent" {
		t.Fatalf("PATCH with field manager %q, want test-agent", fm)
	}
	var sent map[string]any
	if err := json.Unmarshal(seen.GetPatch(), &sent); err != nil || sent["metadata"] == nil {
		t.Fatalf("patch bytes not passed through: %s (%v)", seen.GetPatch(), err)
	}
	if got.Status.Phase != v1.PodRunning {
		t.Fatalf("returned pod phase %q, want Running (the server's copy after the patch)", got.Status.Phase)
	}
}

func TestDeletePodSendsGraceZeroWithUIDPrecondition(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1"}}
	cs := fake.NewClientset(pod)
	var seen k8stesting.DeleteAction
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		seen = a.(k8stesting.DeleteAction)
		return false, nil, nil
	})
	c := New(cs.CoreV1(), "test-agent")
	if err := c.DeletePod(context.Background(), "ns", "p", "u1"); err != nil {
		t.Fatalf("DeletePod: %v", err)
	}
	if seen == nil {
		t.Fatal("no DELETE reached the clientset")
	}
	opts := seen.GetDeleteOptions()
	if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
		t.Errorf("grace period %v, want 0", opts.GracePeriodSeconds)
	}
	if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != "u1" {
		t.Errorf("preconditions %+v, want UID u1", opts.Preconditions)
	}
	if err := c.DeletePod(context.Background(), "ns", "p", "u1"); !apierrors.IsNotFound(err) {
		t.Errorf("second DeletePod = %v, want NotFound", err)
	}
}

func TestPatchErrorIsTheAPIError(t *testing.T) {
	_, err := New(fake.NewClientset().CoreV1(), "test-agent").PatchPodStatus(context.Background(), "ns", "gone", []byte(`{}`))
	if !apierrors.IsNotFound(err) || err.Error() != `pods "gone" not found` {
		t.Fatalf("PatchPodStatus(missing) error = %v, want client-go's NotFound StatusError, with nothing added", err)
	}
}

// TestEmptyFieldManagerIsTheDefault: an empty field manager is DefaultFieldManager, the
// rule of every constructor in the repository that takes one.
func TestEmptyFieldManagerIsTheDefault(t *testing.T) {
	cs := fake.NewClientset(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
	var seen k8stesting.Action
	cs.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		seen = a
		return false, nil, nil
	})
	if _, err := New(cs.CoreV1(), "").PatchPodStatus(context.Background(), "ns", "p", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if fm := seen.(k8stesting.PatchActionImpl).PatchOptions.FieldManager; fm != DefaultFieldManager {
		t.Errorf("field manager %q, want DefaultFieldManager %q", fm, DefaultFieldManager)
	}
}
