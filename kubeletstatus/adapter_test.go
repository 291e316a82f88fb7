package kubeletstatus

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/metrics"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/features"
)

func TestFeaturesFromGates(t *testing.T) {
	if got := FeaturesFromGates(); got != features.V1_37() {
		t.Fatalf("default gates: %+v, want v1.37.0's (the zero Set)", got)
	}
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, kubefeatures.ContainerRestartRules, false)
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, kubefeatures.RestartAllContainersOnContainerExits, false)
	if got, want := FeaturesFromGates(), (features.Set{NoContainerRestartRules: true, NoRestartAllContainers: true}); got != want {
		t.Fatalf("two gates off: %+v, want %+v", got, want)
	}
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, kubefeatures.InPlacePodLevelResourcesVerticalScaling, false)
	if got := FeaturesFromGates(); !got.NoPodLevelResourcesStatus {
		t.Fatalf("InPlacePodLevelResourcesVerticalScaling off: %+v", got)
	}
}

// TestStaticPodGoesToKubeletManager: a static pod's status is the kubelet's manager's,
// synced to its mirror pod (the UID the server knows), and GetPodStatus finds it under
// either UID, as in the kubelet.
func TestStaticPodGoesToKubeletManager(t *testing.T) {
	ctx := testContext(t)
	mirror := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "etcd-node", UID: "uid-mirror", Annotations: map[string]string{
			kubetypes.ConfigSourceAnnotationKey: kubetypes.FileSource, kubetypes.ConfigMirrorAnnotationKey: "hash",
		}},
		Spec:   v1.PodSpec{NodeName: "node", Containers: []v1.Container{{Name: "etcd", Image: "etcd:1"}}},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	w := newWorld(t, mirror, newAdapter(clocktesting.NewFakeClock(time.Now())))
	static := mirror.DeepCopy()
	static.UID, static.ResourceVersion = "uid-static", ""
	static.Annotations = map[string]string{kubetypes.ConfigSourceAnnotationKey: kubetypes.FileSource}
	w.pm.AddPod(static)
	w.m.Start(ctx)

	st := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("etcd", "containerd://etcd1")}}
	if _, changed := w.m.SetPodStatus(logger, static, st); !changed {
		t.Fatal("SetPodStatus of the static pod: changed = false")
	}
	for _, uid := range []types.UID{"uid-static", "uid-mirror"} {
		if s, ok := w.m.GetPodStatus(uid); !ok || s.Phase != v1.PodRunning {
			t.Fatalf("GetPodStatus(%s) = %s, %v; want Running, true", uid, s.Phase, ok)
		}
	}
	if _, ok := w.m.(*adapter).inner.GetPodStatus("uid-static"); ok {
		t.Fatal("podstatus's Manager caches the static pod; want the kubelet's only")
	}
	eventually(t, "mirror pod Running on the server", func() error {
		if p := w.server("etcd-node"); p.Status.Phase != v1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
}

// TestResizeConditionsDelegated: the resize-condition cache is the kubelet's, and
// RemoveOrphanedStatuses clears it.
func TestResizeConditionsDelegated(t *testing.T) {
	w := newWorld(t, webPod(), newAdapter(clocktesting.NewFakeClock(time.Now())))
	uid := types.UID("uid-web")
	pod := w.informer("web")
	w.m.SetPodStatus(logger, pod, kubeletStatus(pod, v1.PodPending, nil, []v1.ContainerStatus{waiting("app")}))
	if !w.m.SetPodResizePendingCondition(uid, v1.PodReasonDeferred, "not enough CPU", 2) {
		t.Fatal("SetPodResizePendingCondition: not modified")
	}
	if !w.m.IsPodResizeDeferred(uid) || w.m.IsPodResizeInfeasible(uid) {
		t.Fatal("want deferred, not infeasible")
	}
	if gen, ok := w.m.SetPodResizeInProgressCondition(uid, "", "", 3); !ok || gen != 3 {
		t.Fatalf("SetPodResizeInProgressCondition = %d, %v; want 3, true", gen, ok)
	}
	if got := w.m.GetPodResizeConditions(uid); len(got) != 2 {
		t.Fatalf("GetPodResizeConditions: %d conditions, want 2", len(got))
	}
	w.m.ClearPodResizePendingCondition(uid, metrics.DeferredResizeResolutionAccepted)
	if gen, ok := w.m.ClearPodResizeInProgressCondition(uid); !ok || gen != 3 {
		t.Fatalf("ClearPodResizeInProgressCondition = %d, %v; want 3, true", gen, ok)
	}
	w.m.BackfillPodResizeConditions([]*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodResizePending, Reason: v1.PodReasonInfeasible}}}}})
	if !w.m.IsPodResizeInfeasible(uid) {
		t.Fatal("after backfill: want infeasible")
	}
	w.m.RemoveOrphanedStatuses(logger, map[types.UID]bool{})
	if got := w.m.GetPodResizeConditions(uid); len(got) != 0 {
		t.Fatalf("after RemoveOrphanedStatuses: %d resize conditions, want 0", len(got))
	}
}

// TestPodWithoutUIDGoesToKubeletManager: a pod podstatus refuses (no UID, no name) is
// cached by the kubelet's manager, as the kubelet's own tests expect (Test_generateAPIPodStatus
// in pkg/kubelet/kubelet_pods_test.go seeds the cache with such pods).
func TestPodWithoutUIDGoesToKubeletManager(t *testing.T) {
	w := newWorld(t, webPod(), newAdapter(clocktesting.NewFakeClock(time.Now())))
	for _, pod := range []*v1.Pod{{}, {ObjectMeta: metav1.ObjectMeta{Name: "my-pod"}}} {
		if _, changed := w.m.SetPodStatus(logger, pod, v1.PodStatus{Phase: v1.PodRunning}); !changed {
			t.Fatalf("pod %q: changed = false", pod.Name)
		}
		if s, ok := w.m.GetPodStatus(""); !ok || s.Phase != v1.PodRunning {
			t.Fatalf("pod %q: GetPodStatus(\"\") = %s, %v; want Running, true", pod.Name, s.Phase, ok)
		}
		w.m.RemoveOrphanedStatuses(logger, map[types.UID]bool{})
	}
}
