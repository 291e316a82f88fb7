package patch

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podstatus/podstatus/status"
)

// benchPair is a realistic status change for a pod with n containers: one container turns
// ready, so Ready and ContainersReady flip and the whole container list is resent.
func benchPair(n int) (old, new v1.PodStatus) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	old = v1.PodStatus{
		Phase:     v1.PodRunning,
		StartTime: &t0,
		HostIP:    "10.0.0.1", HostIPs: []v1.HostIP{{IP: "10.0.0.1"}},
		PodIP: "10.1.0.5", PodIPs: []v1.PodIP{{IP: "10.1.0.5"}},
		QOSClass: v1.PodQOSBurstable,
		Conditions: []v1.PodCondition{
			{Type: "example.com/gate", Status: v1.ConditionTrue, LastTransitionTime: t0},
			{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue, LastTransitionTime: t0},
			{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: t0},
			{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [c0]", LastTransitionTime: t0},
			{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [c0]", LastTransitionTime: t0},
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: t0},
		},
	}
	for i := 0; i < n; i++ {
		started := true
		old.ContainerStatuses = append(old.ContainerStatuses, v1.ContainerStatus{
			Name: fmt.Sprintf("c%d", i), Image: "registry.example.com/app:1.0", ImageID: "sha256:abc",
			ContainerID: fmt.Sprintf("containerd://%064d", i), Ready: i != 0, Started: &started,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t0}},
		})
	}
	new = *old.DeepCopy()
	new.ContainerStatuses[0].Ready = true
	for i := range new.Conditions {
		if c := &new.Conditions[i]; c.Type == v1.PodReady || c.Type == v1.ContainersReady {
			c.Status, c.Reason, c.Message, c.LastTransitionTime = v1.ConditionTrue, "", "", t1
		}
	}
	return old, new
}

// BenchmarkPatch compares status.PatchBytes with the kubelet's PatchPodStatus (its fake
// client answers at once, so the figure is the kubelet's patch building plus a fake call)
// on the same (old, new) pairs.
func BenchmarkPatch(b *testing.B) {
	const uid = types.UID("uid-1")
	for _, n := range []int{1, 3, 10} {
		old, new := benchPair(n)
		b.Run(fmt.Sprintf("%dcontainers/podstatus", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, unchanged := status.PatchBytes(uid, old, new); unchanged {
					b.Fatal("PatchBytes: unchanged")
				}
			}
		})
		b.Run(fmt.Sprintf("%dcontainers/upstream", n), func(b *testing.B) {
			up := newUpstream()
			b.ReportAllocs()
			for b.Loop() {
				if _, unchanged, err := up.patch(uid, old, new); err != nil || unchanged {
					b.Fatalf("upstream: unchanged=%v err=%v", unchanged, err)
				}
			}
		})
	}
}

// TestBenchPairsAgree keeps the benchmark honest: both sides build equivalent patches.
func TestBenchPairsAgree(t *testing.T) {
	const uid = types.UID("uid-1")
	up := newUpstream()
	for _, n := range []int{1, 3, 10} {
		old, new := benchPair(n)
		ours, _ := status.PatchBytes(uid, old, new)
		theirs, _, err := up.patch(uid, old, new)
		if err != nil {
			t.Fatal(err)
		}
		if ok, diff := sameOutcome(uid, old, ours, theirs); !ok {
			t.Fatalf("%d containers: %s", n, diff)
		}
	}
}
