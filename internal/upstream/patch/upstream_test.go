package patch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	podutil "k8s.io/kubernetes/pkg/util/pod"
)

// upstream calls the kubelet's PatchPodStatus and returns the patch it builds. The fake
// clientset answers the PATCH at once, so only the patch building is exercised.
type upstream struct{ cs *fake.Clientset }

func newUpstream() upstream {
	cs := fake.NewClientset()
	cs.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, &v1.Pod{}, nil
	})
	return upstream{cs: cs}
}

func (u upstream) patch(uid types.UID, old, new v1.PodStatus) ([]byte, bool, error) {
	_, p, unchanged, err := podutil.PatchPodStatus(context.Background(), u.cs, "ns", "name", uid, old, new)
	return p, unchanged, err
}

// apply applies p to a pod with uid and status server, as the API server does for a
// strategic-merge PATCH, and returns the resulting document.
func apply(uid types.UID, server v1.PodStatus, p []byte) ([]byte, error) {
	orig, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: server})
	if err != nil {
		return nil, fmt.Errorf("marshal server pod: %w", err)
	}
	return strategicpatch.StrategicMergePatch(orig, p, v1.Pod{})
}

// sameOutcome reports whether applying a and b to server ends in the same document (or
// both fail).
func sameOutcome(uid types.UID, server v1.PodStatus, a, b []byte) (bool, string) {
	ra, errA := apply(uid, server, a)
	rb, errB := apply(uid, server, b)
	if (errA != nil) != (errB != nil) || !bytes.Equal(ra, rb) {
		return false, fmt.Sprintf("ours -> %s (err %v)\nupstream -> %s (err %v)", ra, errA, rb, errB)
	}
	return true, ""
}
