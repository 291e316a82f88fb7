package status

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/internal/patch/patchtest"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC))
)

func cond(t v1.PodConditionType, s v1.ConditionStatus, ltt metav1.Time) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: s, LastTransitionTime: ltt}
}

type patchVector struct {
	name      string
	uid       types.UID
	old, new  v1.PodStatus
	unchanged bool
	want      string
}

// patchVectors are the cases of TestPatchPodStatus (pkg/util/pod/pod_test.go) and patches
// produced by running the kubelet v1.37.0's status manager.
func patchVectors() []patchVector {
	base := v1.PodStatus{
		Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionTrue},
			{Type: v1.PodScheduled, Status: v1.ConditionTrue},
		},
		ContainerStatuses: []v1.ContainerStatus{{Name: "container1", Ready: true}, {Name: "container2", Ready: true}},
		Message:           "Message",
	}
	with := func(f func(s *v1.PodStatus)) v1.PodStatus {
		s := *base.DeepCopy()
		f(&s)
		return s
	}
	sched := cond(v1.PodScheduled, v1.ConditionTrue, t0)
	notReady := func(t v1.PodConditionType, ltt metav1.Time) v1.PodCondition {
		c := cond(t, v1.ConditionFalse, ltt)
		c.Reason, c.Message = "ContainersNotReady", "containers with unready status: [c]"
		return c
	}
	first := v1.PodStatus{
		Phase:     v1.PodRunning,
		StartTime: &t0,
		HostIP:    "10.0.0.1", HostIPs: []v1.HostIP{{IP: "10.0.0.1"}},
		PodIP: "10.1.0.5", PodIPs: []v1.PodIP{{IP: "10.1.0.5"}},
		QOSClass: v1.PodQOSBestEffort,
		Conditions: []v1.PodCondition{
			cond(v1.PodReadyToStartContainers, v1.ConditionTrue, t1),
			cond(v1.PodInitialized, v1.ConditionTrue, t1),
			notReady(v1.PodReady, t1), notReady(v1.ContainersReady, t1),
			sched,
		},
		ContainerStatuses: []v1.ContainerStatus{{
			Name: "c", Image: "img", ImageID: "id", ContainerID: "containerd://abc", Started: ptr.To(true),
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t0}},
		}},
	}
	readyOld := []v1.PodCondition{cond(v1.PodInitialized, v1.ConditionTrue, t0), notReady(v1.PodReady, t0), notReady(v1.ContainersReady, t0), sched}
	readyNew := []v1.PodCondition{cond(v1.PodInitialized, v1.ConditionTrue, t0), cond(v1.PodReady, v1.ConditionTrue, t1), cond(v1.ContainersReady, v1.ConditionTrue, t1), sched}
	gen := func(g int64) v1.PodStatus {
		return v1.PodStatus{ObservedGeneration: g, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, ObservedGeneration: g}}}
	}
	return []patchVector{
		{"5.3/no change", "myuid", base, base, true, `{"metadata":{"uid":"myuid"}}`},
		{"5.3/message change", "myuid", base, with(func(s *v1.PodStatus) { s.Message = "random message" }), false,
			`{"metadata":{"uid":"myuid"},"status":{"message":"random message"}}`},
		{"5.3/pod condition change", "myuid", base, with(func(s *v1.PodStatus) { s.Conditions[0].Status = v1.ConditionFalse }), false,
			`{"metadata":{"uid":"myuid"},"status":{"$setElementOrder/conditions":[{"type":"Ready"},{"type":"PodScheduled"}],"conditions":[{"status":"False","type":"Ready"}]}}`},
		{"5.3/additional init container condition", "myuid", base, with(func(s *v1.PodStatus) {
			s.InitContainerStatuses = []v1.ContainerStatus{{Name: "init-container", Ready: true}}
		}), false,
			`{"metadata":{"uid":"myuid"},"status":{"initContainerStatuses":[{"image":"","imageID":"","lastState":{},"name":"init-container","ready":true,"restartCount":0,"state":{}}]}}`},

		{"5.5/1 identical", "uid-1", first, first, true, `{"metadata":{"uid":"uid-1"}}`},
		{"5.5/2 first kubelet status", "uid-1",
			v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{sched}, QOSClass: v1.PodQOSBestEffort}, first, false,
			`{"metadata":{"uid":"uid-1"},"status":{"$setElementOrder/conditions":[{"type":"PodReadyToStartContainers"},{"type":"Initialized"},{"type":"Ready"},{"type":"ContainersReady"},{"type":"PodScheduled"}],"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:01:00Z","status":"True","type":"PodReadyToStartContainers"},{"lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:01:00Z","status":"True","type":"Initialized"},{"lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:01:00Z","message":"containers with unready status: [c]","reason":"ContainersNotReady","status":"False","type":"Ready"},{"lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:01:00Z","message":"containers with unready status: [c]","reason":"ContainersNotReady","status":"False","type":"ContainersReady"}],"containerStatuses":[{"containerID":"containerd://abc","image":"img","imageID":"id","lastState":{},"name":"c","ready":false,"restartCount":0,"started":true,"state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}],"hostIP":"10.0.0.1","hostIPs":[{"ip":"10.0.0.1"}],"phase":"Running","podIP":"10.1.0.5","podIPs":[{"ip":"10.1.0.5"}],"startTime":"2026-01-01T00:00:00Z"}}`},
		{"5.5/3 ready flip", "uid-1", v1.PodStatus{Conditions: readyOld}, v1.PodStatus{Conditions: readyNew}, false,
			`{"metadata":{"uid":"uid-1"},"status":{"$setElementOrder/conditions":[{"type":"Initialized"},{"type":"Ready"},{"type":"ContainersReady"},{"type":"PodScheduled"}],"conditions":[{"lastTransitionTime":"2026-01-01T00:01:00Z","message":null,"reason":null,"status":"True","type":"Ready"},{"lastTransitionTime":"2026-01-01T00:01:00Z","message":null,"reason":null,"status":"True","type":"ContainersReady"}]}}`},
		{"5.5/4 remove a kubelet condition", "uid-1",
			v1.PodStatus{Conditions: []v1.PodCondition{sched, {Type: v1.PodResizePending, Status: v1.ConditionTrue}}},
			v1.PodStatus{Conditions: []v1.PodCondition{sched}}, false,
			`{"metadata":{"uid":"uid-1"},"status":{"$setElementOrder/conditions":[{"type":"PodScheduled"}],"conditions":[{"$patch":"delete","type":"PodResizePending"}]}}`},
		{"5.5/5 reorder only", "uid-1",
			v1.PodStatus{Conditions: []v1.PodCondition{sched, cond(v1.PodReady, v1.ConditionTrue, t0)}},
			v1.PodStatus{Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, t0), sched}}, false,
			`{"metadata":{"uid":"uid-1"},"status":{"$setElementOrder/conditions":[{"type":"Ready"},{"type":"PodScheduled"}]}}`},
		{"5.5/6 one container field", "uid-1",
			v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "a"}, {Name: "b", Ready: true}}},
			v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "a", Ready: true}, {Name: "b", Ready: true}}}, false,
			`{"metadata":{"uid":"uid-1"},"status":{"containerStatuses":[{"image":"","imageID":"","lastState":{},"name":"a","ready":true,"restartCount":0,"state":{}},{"image":"","imageID":"","lastState":{},"name":"b","ready":true,"restartCount":0,"state":{}}]}}`},
		{"5.5/7 second podIP", "uid-1",
			v1.PodStatus{PodIPs: []v1.PodIP{{IP: "10.1.0.5"}}},
			v1.PodStatus{PodIPs: []v1.PodIP{{IP: "10.1.0.5"}, {IP: "fd00::5"}}}, false,
			`{"metadata":{"uid":"uid-1"},"status":{"$setElementOrder/podIPs":[{"ip":"10.1.0.5"},{"ip":"fd00::5"}],"podIPs":[{"ip":"fd00::5"}]}}`},
		{"5.5/8 observedGeneration", "uid-1", gen(1), gen(2), false,
			`{"metadata":{"uid":"uid-1"},"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"conditions":[{"observedGeneration":2,"type":"Ready"}],"observedGeneration":2}}`},
		{"5.5/9 clear message and reason", "uid-1", v1.PodStatus{Message: "m", Reason: "r"}, v1.PodStatus{}, false,
			`{"metadata":{"uid":"uid-1"},"status":{"message":null,"reason":null}}`},
		{"5.5/10 resourceClaimStatuses removed", "uid-1",
			v1.PodStatus{ResourceClaimStatuses: []v1.PodResourceClaimStatus{{Name: "c", ResourceClaimName: ptr.To("x")}}}, v1.PodStatus{}, false,
			`{"metadata":{"uid":"uid-1"},"status":{"resourceClaimStatuses":null}}`},

		// Edge cases of the reference, pinned here so that they stay reproduced.
		{"edge/empty uid", "", base, base, false, `{}`},
		{"edge/uid quoted differently", "a<b", base, base, false, `{"metadata":{"uid":"a\u003cb"}}`},
		{"edge/sub-second change is invisible", "u",
			v1.PodStatus{StartTime: &t0}, v1.PodStatus{StartTime: ptr.To(metav1.NewTime(t0.Add(time.Millisecond)))}, true, `{"metadata":{"uid":"u"}}`},
		{"edge/zero startTime is null", "u", v1.PodStatus{}, v1.PodStatus{StartTime: &metav1.Time{}}, false,
			`{"metadata":{"uid":"u"},"status":{"startTime":null}}`},
		{"edge/duplicate condition type", "u",
			v1.PodStatus{Conditions: []v1.PodCondition{cond("A", v1.ConditionTrue, t0), cond("A", v1.ConditionFalse, t0)}},
			v1.PodStatus{Conditions: []v1.PodCondition{cond("A", v1.ConditionFalse, t0)}}, false,
			`{"metadata":{"uid":"u"},"status":{"$setElementOrder/conditions":[{"type":"A"}],"conditions":[{"$patch":"delete","type":"A"}]}}`},
		{"edge/claim retainKeys", "u",
			v1.PodStatus{ResourceClaimStatuses: []v1.PodResourceClaimStatus{{Name: "c", ResourceClaimName: ptr.To("x")}}},
			v1.PodStatus{ResourceClaimStatuses: []v1.PodResourceClaimStatus{{Name: "c"}}}, false,
			`{"metadata":{"uid":"u"},"status":{"$setElementOrder/resourceClaimStatuses":[{"name":"c"}],"resourceClaimStatuses":[{"$retainKeys":["name"],"name":"c","resourceClaimName":null}]}}`},
	}
}

func TestPatchBytesVectors(t *testing.T) {
	for _, v := range patchVectors() {
		t.Run(v.name, func(t *testing.T) {
			got, unchanged := PatchBytes(v.uid, v.old, v.new)
			if string(got) != v.want || unchanged != v.unchanged {
				t.Errorf("PatchBytes = %s, %v\nwant          %s, %v", got, unchanged, v.want, v.unchanged)
			}
			// The vectors were produced by upstream; the reference must agree with them too,
			// or the vector is wrong.
			checkAgainstReference(t, v.uid, v.old, v.new, nil)
		})
	}
}

// TestPatchBytesDoesNotWriteInput guards against the encoder caching into the caller's
// values (resource.Quantity.String does that on its receiver).
func TestPatchBytesDoesNotWriteInput(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		old := patchtest.Status(t)
		new := patchtest.Mutate(t, old)
		oldCopy, newCopy := old.DeepCopy(), new.DeepCopy()
		PatchBytes("u", old, new)
		a, _ := json.Marshal(oldCopy)
		b, _ := json.Marshal(old)
		c, _ := json.Marshal(newCopy)
		d, _ := json.Marshal(new)
		if string(a) != string(b) || string(c) != string(d) {
			t.Fatalf("PatchBytes changed its input")
		}
	})
}

// TestPatchBytesMatchesReference is the differential property: for random (old, new) pairs,
// mostly new = a few random edits of old, our patch equals CreateTwoWayMergePatch's.
func TestPatchBytesMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		uid := types.UID(rapid.SampledFrom([]string{"uid-1", "", "a<b", "x\"y"}).Draw(t, "uid"))
		old := patchtest.Status(t)
		var new v1.PodStatus
		switch rapid.IntRange(0, 9).Draw(t, "how") {
		case 0:
			new = patchtest.Status(t)
		case 1, 2, 3:
			new = patchtest.MutateLeaf(t, old)
		default:
			new = patchtest.Mutate(t, old)
		}
		if rapid.IntRange(0, 2).Draw(t, "plain") == 0 {
			// The usual shape, where the typed no-op check can answer.
			old, new = patchtest.Plain(old), patchtest.Plain(new)
		}
		servers := []v1.PodStatus{patchtest.Status(t), patchtest.Mutate(t, old), patchtest.Mutate(t, new)}
		checkAgainstReference(t, uid, old, new, servers)
	})
}

// FuzzPatchBytes decodes old and new from JSON and checks PatchBytes against the reference.
// Seeds are the vectors; go test -fuzz=FuzzPatchBytes finds the rest, and crashers are kept
// in testdata/fuzz/FuzzPatchBytes.
func FuzzPatchBytes(f *testing.F) {
	for _, v := range patchVectors() {
		o, _ := json.Marshal(v.old)
		n, _ := json.Marshal(v.new)
		f.Add(o, n)
	}
	f.Fuzz(func(t *testing.T, oldJSON, newJSON []byte) {
		var old, new v1.PodStatus
		if json.Unmarshal(oldJSON, &old) != nil || json.Unmarshal(newJSON, &new) != nil {
			t.Skip()
		}
		checkAgainstReference(t, "uid-1", old, new, []v1.PodStatus{{}})
	})
}

// FuzzPatchBytesGenerated feeds the fuzzer's bytes to the random status generator instead of
// the JSON decoder, so that mutations reach deep into the structure rather than breaking the
// JSON.
func FuzzPatchBytesGenerated(f *testing.F) {
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {
		old := patchtest.Status(t)
		new := patchtest.Mutate(t, old)
		checkAgainstReference(t, "uid-1", old, new, []v1.PodStatus{patchtest.Status(t)})
	}))
}

// benchStatuses is a typical Ready flip: six conditions (one a custom readiness gate),
// Ready and ContainersReady going True, and every container becoming ready.
func benchStatuses(containers int) (old, new v1.PodStatus) {
	gate := v1.PodConditionType("example.com/gate")
	notReady := func(t v1.PodConditionType) v1.PodCondition {
		c := cond(t, v1.ConditionFalse, t0)
		c.Reason, c.Message = "ContainersNotReady", "containers with unready status: [c0]"
		return c
	}
	old = v1.PodStatus{
		Phase: v1.PodRunning, StartTime: &t0, QOSClass: v1.PodQOSBurstable,
		HostIP: "10.0.0.1", HostIPs: []v1.HostIP{{IP: "10.0.0.1"}},
		PodIP: "10.1.0.5", PodIPs: []v1.PodIP{{IP: "10.1.0.5"}},
		Conditions: []v1.PodCondition{
			cond(gate, v1.ConditionTrue, t0), cond(v1.PodReadyToStartContainers, v1.ConditionTrue, t0),
			cond(v1.PodInitialized, v1.ConditionTrue, t0), notReady(v1.PodReady), notReady(v1.ContainersReady),
			cond(v1.PodScheduled, v1.ConditionTrue, t0),
		},
	}
	for i := range containers {
		old.ContainerStatuses = append(old.ContainerStatuses, v1.ContainerStatus{
			Name: fmt.Sprintf("c%d", i), Image: "registry.example.com/app:1.2.3", ImageID: "registry.example.com/app@sha256:0123456789abcdef",
			ContainerID: fmt.Sprintf("containerd://%064d", i), Started: ptr.To(true),
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t0}},
		})
	}
	new = *old.DeepCopy()
	new.Conditions[3] = cond(v1.PodReady, v1.ConditionTrue, t1)
	new.Conditions[4] = cond(v1.ContainersReady, v1.ConditionTrue, t1)
	for i := range new.ContainerStatuses {
		new.ContainerStatuses[i].Ready = true
	}
	return old, new
}

func BenchmarkPatchBytes(b *testing.B) {
	for _, n := range []int{1, 3, 10} {
		old, new := benchStatuses(n)
		b.Run(fmt.Sprintf("%dcontainers", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				PatchBytes("uid-1", old, new)
			}
		})
	}
}

func BenchmarkReferencePatch(b *testing.B) {
	for _, n := range []int{1, 3, 10} {
		old, new := benchStatuses(n)
		b.Run(fmt.Sprintf("%dcontainers", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := referencePatch("uid-1", old, new); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPatchBytesLongDuplicateLists covers merge lists longer than twelve elements with
// repeated keys: there the reference's sort stops being an insertion sort, and which old
// element pairs with which new one depends on its exact algorithm.
func TestPatchBytesLongDuplicateLists(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		types := []v1.PodConditionType{"A", "B", "C", "Ready", "example.com/gate"}
		draw := func(label string) []v1.PodCondition {
			n := rapid.IntRange(0, 40).Draw(t, label+"-len")
			l := make([]v1.PodCondition, n)
			for i := range l {
				l[i] = v1.PodCondition{
					Type:    rapid.SampledFrom(types).Draw(t, label),
					Status:  rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}).Draw(t, label),
					Message: rapid.SampledFrom([]string{"", "m", "n"}).Draw(t, label),
				}
			}
			return l
		}
		ips := func(label string) []v1.PodIP {
			n := rapid.IntRange(0, 20).Draw(t, label+"-len")
			l := make([]v1.PodIP, n)
			for i := range l {
				l[i].IP = rapid.SampledFrom([]string{"10.0.0.1", "10.0.0.2", "fd00::1"}).Draw(t, label)
			}
			return l
		}
		old := v1.PodStatus{Conditions: draw("old"), PodIPs: ips("oldIPs")}
		new := v1.PodStatus{Conditions: draw("new"), PodIPs: ips("newIPs")}
		checkAgainstReference(t, "uid-1", old, new, []v1.PodStatus{{Conditions: draw("server")}})
	})
}

// BenchmarkPatchBytesUnchanged is the no-op check (identical statuses), which the kubelet
// pays on every sync of a settled pod.
func BenchmarkPatchBytesUnchanged(b *testing.B) {
	_, new := benchStatuses(3)
	b.Run("ours/3containers", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, same := PatchBytes("uid-1", new, new); !same {
				b.Fatal("not unchanged")
			}
		}
	})
	b.Run("reference/3containers", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, same, _ := referencePatch("uid-1", new, new); !same {
				b.Fatal("not unchanged")
			}
		}
	})
}
