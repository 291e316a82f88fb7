package simkubelet

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restwatch "k8s.io/client-go/rest/watch"
)

// codecPods are pods as a server stores them, managedFields included.
func codecPods() []*v1.Pod {
	now := metav1.NewTime(time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC))
	mf := []metav1.ManagedFieldsEntry{
		{Manager: "fleet-bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:containers":{}}}`)},
		{Manager: "podstatus-fleet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{}}}`), Subresource: "status"},
	}
	full := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "42", Generation: 1,
			CreationTimestamp: now, Labels: map[string]string{"app": "a"}, Annotations: map[string]string{"x": "y"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u0"}},
			Finalizers:      []string{"f1", "f2"}, ManagedFields: mf},
		Spec: v1.PodSpec{
			NodeName:       "node-0",
			InitContainers: []v1.Container{{Name: "init", Image: "busybox"}},
			Containers: []v1.Container{
				{Name: "a", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{
					Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}},
				{Name: "b", Image: "nginx", Ports: []v1.ContainerPort{{ContainerPort: 80}}},
			},
			Tolerations: []v1.Toleration{
				{Key: "kwok.x-k8s.io/node", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/not-ready", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
			},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: "example.com/gate"}},
			Volumes:        []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}},
		},
		Status: v1.PodStatus{
			Phase: v1.PodRunning,
			Conditions: []v1.PodCondition{
				{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue, LastTransitionTime: now},
				{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: now},
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now},
				{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: now},
				{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: now},
			},
			HostIP: "10.0.0.1", HostIPs: []v1.HostIP{{IP: "10.0.0.1"}},
			PodIP: "10.244.0.2", PodIPs: []v1.PodIP{{IP: "10.244.0.2"}, {IP: "fd00::2"}},
			StartTime:             &now,
			InitContainerStatuses: []v1.ContainerStatus{{Name: "init", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed"}}}},
			ContainerStatuses: []v1.ContainerStatus{
				{Name: "a", Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}},
				{Name: "b", Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}},
			},
			QOSClass: v1.PodQOSBurstable,
		},
	}
	deleting := full.DeepCopy()
	deleting.DeletionTimestamp = &now
	deleting.ResourceVersion = "43"
	return []*v1.Pod{
		full,
		deleting,
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bare", UID: "u2"}}, // no managedFields, no lists
		{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "44"}},                    // a bookmark's object
	}
}

// protobufInfo is client-go's protobuf serializer, the generic path and the server's
// encoding.
func protobufInfo(t testing.TB) runtime.SerializerInfo {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	return info
}

func encodeProto(t testing.TB, o runtime.Object) []byte {
	t.Helper()
	info := protobufInfo(t)
	b, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, v1.SchemeGroupVersion), o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withoutMF is the oracle: what the generic decoder returns, managedFields dropped.
func withoutMF(o runtime.Object) runtime.Object {
	if p, ok := o.(*v1.Pod); ok {
		c := p.DeepCopy()
		c.ManagedFields = nil
		return c
	}
	return o
}

// watchFrames is a protobuf watch stream of the given events, as a server writes it.
func watchFrames(t testing.TB, events []watch.Event) []byte {
	t.Helper()
	info := protobufInfo(t)
	var buf bytes.Buffer
	fw := info.StreamSerializer.Framer.NewFrameWriter(&buf)
	for _, e := range events {
		if _, err := fw.Write(watchEventMessage(t, e)); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// decodeWatch decodes a watch stream the way client-go's rest.Request.Watch does, with
// the codecs ns.
func decodeWatch(t testing.TB, ns runtime.NegotiatedSerializer, stream []byte) []watch.Event {
	t.Helper()
	neg := runtime.NewClientNegotiator(ns, v1.SchemeGroupVersion)
	objDec, ss, framer, err := neg.StreamDecoder(runtime.ContentTypeProtobuf, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := restwatch.NewDecoder(streaming.NewDecoder(framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream))), ss), objDec)
	var out []watch.Event
	for {
		typ, obj, err := d.Decode()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, watch.Event{Type: typ, Object: obj})
	}
}

func TestPodCodecsWatchMatchesGenericDecoding(t *testing.T) {
	var events []watch.Event
	types := []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark}
	for i, p := range codecPods() {
		events = append(events, watch.Event{Type: types[i%len(types)], Object: p})
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ManagedFields: codecPods()[0].ManagedFields}}
	status := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old"}
	events = append(events, watch.Event{Type: watch.Modified, Object: node}, watch.Event{Type: watch.Error, Object: status})
	stream := watchFrames(t, events)

	generic := decodeWatch(t, scheme.Codecs.WithoutConversion(), stream)
	got := decodeWatch(t, newPodCodecs(nil), stream)
	if len(generic) != len(events) || len(got) != len(events) {
		t.Fatalf("decoded %d (generic) and %d (podCodecs) events, want %d", len(generic), len(got), len(events))
	}
	for i := range events {
		want := watch.Event{Type: generic[i].Type, Object: withoutMF(generic[i].Object)}
		if diff := cmp.Diff(want, got[i]); diff != "" {
			t.Errorf("event %d (-generic without managedFields +podCodecs):\n%s", i, diff)
		}
	}
	// A node keeps the generic path, managedFields included.
	if n := got[4].Object.(*v1.Node); len(n.ManagedFields) != 2 {
		t.Errorf("node decoded with %d managedFields, want 2 (generic path)", len(n.ManagedFields))
	}
}

// TestPodCodecsReturnHeldVersions: a pod whose UID and resourceVersion name an object the
// agent holds (a watch event after its PATCH response, or a PATCH response after its
// watch event) comes back as a copy of that object, not decoded; any other version
// (another resourceVersion, another pod) is decoded.
func TestPodCodecsReturnHeldVersions(t *testing.T) {
	pod := codecPods()[0]
	held := pod.DeepCopy()
	held.ManagedFields = nil
	held.Status.Message = "the held copy" // told apart from a decoded one
	other := pod.DeepCopy()
	other.ResourceVersion = "43"
	stranger := pod.DeepCopy()
	stranger.UID = "u2"
	stream := watchFrames(t, []watch.Event{{Type: watch.Modified, Object: pod}, {Type: watch.Modified, Object: other}, {Type: watch.Modified, Object: stranger}})
	var asked []string
	got := decodeWatch(t, newPodCodecs(func(uid, rv []byte) *v1.Pod {
		asked = append(asked, string(uid)+"@"+string(rv))
		if string(uid) == string(held.UID) && string(rv) == held.ResourceVersion {
			return held
		}
		return nil
	}), stream)
	if want := []string{"u1@42", "u1@43", "u2@42"}; !slices.Equal(asked, want) {
		t.Errorf("held asked for %v, want %v", asked, want)
	}
	first := got[0].Object.(*v1.Pod)
	if first == held {
		t.Error("the held object itself was returned; client-go's decoders write its TypeMeta")
	}
	want := held.DeepCopy()
	want.TypeMeta = metav1.TypeMeta{}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("held version (-held +returned):\n%s", diff)
	}
	if held.Kind != "" || held.APIVersion != "" {
		t.Errorf("the held object was written: %+v", held.TypeMeta)
	}
	for i, p := range got[1:] {
		if p.Object.(*v1.Pod).Status.Message == held.Status.Message {
			t.Errorf("event %d: a version the agent does not hold was not decoded", i+1)
		}
	}

	// A PATCH response (decoded into the client's object) of a version the agent holds
	// (its watch event came first) is a copy of the held object, in the caller's object.
	neg := runtime.NewClientNegotiator(newPodCodecs(func(uid, rv []byte) *v1.Pod {
		if string(uid) == string(held.UID) && string(rv) == held.ResourceVersion {
			return held
		}
		return nil
	}), v1.SchemeGroupVersion)
	dec, err := neg.Decoder(runtime.ContentTypeProtobuf, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		held bool
	}{{"held", pod, true}, {"another version", other, false}} {
		into := &v1.Pod{Spec: v1.PodSpec{NodeName: "left over"}}
		if err := runtime.DecodeInto(dec, encodeProto(t, tc.pod), into); err != nil {
			t.Fatal(err)
		}
		if got := into.Status.Message == held.Status.Message; got != tc.held {
			t.Errorf("%s: the held copy returned = %v, want %v", tc.name, got, tc.held)
		}
		if tc.held {
			if diff := cmp.Diff(want, into); diff != "" {
				t.Errorf("%s (-held +decoded into):\n%s", tc.name, diff)
			}
		}
	}
}

func TestPodCodecsDecodeIntoAndLists(t *testing.T) {
	neg := runtime.NewClientNegotiator(newPodCodecs(nil), v1.SchemeGroupVersion)
	dec, err := neg.Decoder(runtime.ContentTypeProtobuf, nil)
	if err != nil {
		t.Fatal(err)
	}
	generic, err := runtime.NewClientNegotiator(scheme.Codecs.WithoutConversion(), v1.SchemeGroupVersion).Decoder(runtime.ContentTypeProtobuf, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range codecPods() {
		data := encodeProto(t, p)
		want := &v1.Pod{}
		if err := runtime.DecodeInto(generic, data, want); err != nil {
			t.Fatal(err)
		}
		// Into a used object, as a PATCH response is decoded into the client's new pod:
		// nothing of the old object may stay.
		got := codecPods()[0]
		if err := runtime.DecodeInto(dec, data, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(withoutMF(want), got); diff != "" {
			t.Errorf("pod %d (-generic without managedFields +podCodecs):\n%s", i, diff)
		}
		for _, l := range []struct {
			name     string
			len, cap int
		}{
			{"conditions", len(got.Status.Conditions), cap(got.Status.Conditions)},
			{"tolerations", len(got.Spec.Tolerations), cap(got.Spec.Tolerations)},
			{"containers", len(got.Spec.Containers), cap(got.Spec.Containers)},
			{"containerStatuses", len(got.Status.ContainerStatuses), cap(got.Status.ContainerStatuses)},
		} {
			if l.len != l.cap {
				t.Errorf("pod %d: %s has length %d, capacity %d: want them equal", i, l.name, l.len, l.cap)
			}
		}
	}
	// A list keeps the generic path.
	list := &v1.PodList{Items: []v1.Pod{*codecPods()[0]}}
	got, err := runtime.Decode(dec, encodeProto(t, list))
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := got.(*v1.PodList); !ok || len(l.Items) != 1 || len(l.Items[0].ManagedFields) != 2 {
		t.Errorf("list decoded as %T %+v, want the generic PodList", got, got)
	}
}

func TestPodCodecsRejectMalformed(t *testing.T) {
	info, ok := runtime.SerializerInfoForMediaType(newPodCodecs(nil).SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("podCodecs has no protobuf serializer")
	}
	data := encodeProto(t, codecPods()[0])
	// A v1 Pod envelope around bytes that are not a Pod message: podDecoder's own path.
	typeMeta := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "v1")
	typeMeta = protowire.AppendString(protowire.AppendTag(typeMeta, 2, protowire.BytesType), "Pod")
	bad := protowire.AppendBytes(protowire.AppendTag([]byte(protobufPrefix), 1, protowire.BytesType), typeMeta)
	bad = protowire.AppendBytes(protowire.AppendTag(bad, 2, protowire.BytesType), []byte{0x0a, 0xff, 0xff})
	for name, b := range map[string][]byte{
		"one byte short": data[:len(data)-1], "half": data[:len(data)/2], "prefix only": data[:10], "not a pod message": bad,
	} {
		if _, _, err := info.Serializer.Decode(b, nil, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// BenchmarkWatchDecode decodes a watch stream of pods (their events as a server sends
// them, managedFields included) the way client-go's watch does, then makes each pod what
// the informer keeps: with client-go's generic codecs, transformPod's copy without
// managedFields, interned; with podCodecs, nothing more to do. -benchmem gives the bytes
// and allocations each event costs.
func BenchmarkWatchDecode(b *testing.B) {
	pod := codecPods()[0]
	var events []watch.Event
	for i := range 100 {
		p := pod.DeepCopy()
		p.Name = fmt.Sprintf("p-%d", i)
		events = append(events, watch.Event{Type: watch.Modified, Object: p})
	}
	stream := watchFrames(b, events)
	heldPod := pod.DeepCopy()
	heldPod.ManagedFields = nil
	for _, c := range []struct {
		name string
		ns   runtime.NegotiatedSerializer
		keep func(*v1.Pod) *v1.Pod
	}{
		{"generic", scheme.Codecs.WithoutConversion(), func(p *v1.Pod) *v1.Pod {
			c := *p
			c.ManagedFields = nil
			internPod(&c)
			return &c
		}},
		{"podCodecs", newPodCodecs(nil), func(p *v1.Pod) *v1.Pod { return p }},
		// Every event the echo of a PATCH response the agent holds.
		{"podCodecs-held", newPodCodecs(func(uid, rv []byte) *v1.Pod { return heldPod }), func(p *v1.Pod) *v1.Pod { return p }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, e := range decodeWatch(b, c.ns, stream) {
					if p := c.keep(e.Object.(*v1.Pod)); p.ManagedFields != nil {
						b.Fatal("managedFields kept")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
		})
	}
}
