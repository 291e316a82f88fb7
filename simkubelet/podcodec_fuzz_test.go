package simkubelet

import (
	"bytes"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// The fuzz targets hold podcodec.go's own parsing of the bytes an API server sends to the
// generic decoding it replaces (k8s.io/api's and k8s.io/apimachinery's generated.pb.go):
// for any input, no panic, and the same object (a pod's managedFields dropped) or an
// error where the generic decoder gives one. `go test` runs their seeds; `go test -fuzz`
// looks for more.

// protoField appends to b the length-delimited field num of value v.
func protoField(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

// podEnvelope is what a server sends for the Pod message raw: the protobuf prefix, then a
// runtime.Unknown of apiVersion v1 and kind Pod around raw (k8s.io/apimachinery's
// pkg/runtime/generated.proto).
func podEnvelope(raw []byte) []byte {
	typeMeta := protoField(nil, typeMetaAPIVersion, []byte("v1"))
	typeMeta = protoField(typeMeta, typeMetaKind, []byte("Pod"))
	data := protoField([]byte(protobufPrefix), unknownTypeMeta, typeMeta)
	return protoField(data, unknownRaw, raw)
}

// podMessage is the Pod message inside the protobuf encoding of p, as the generic
// decoder finds it (runtime.Unknown.Raw).
func podMessage(t testing.TB, p *v1.Pod) []byte {
	t.Helper()
	var unk runtime.Unknown
	if err := unk.Unmarshal(encodeProto(t, p)[len(protobufPrefix):]); err != nil {
		t.Fatal(err)
	}
	return unk.Raw
}

// messageWithoutManagedFields is the Pod message pod with the managedFields (field 17, whatever
// its wire type) of every metadata field it has left out, all else as it is; ok is false
// for bytes that are not protobuf. It is the fuzz targets' own copy of what podDecoder
// skips, for the case of a pod message whose managedFields alone are malformed.
func messageWithoutManagedFields(pod []byte) (lean []byte, ok bool) {
	for rest := pod; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return nil, false
		}
		if num != podMetadata || typ != protowire.BytesType {
			lean = append(lean, rest[:n+m]...)
			rest = rest[n+m:]
			continue
		}
		meta, _ := protowire.ConsumeBytes(rest[n:])
		var kept []byte
		for r := meta; len(r) > 0; {
			num, typ, n := protowire.ConsumeTag(r)
			if n < 0 {
				return nil, false
			}
			m := protowire.ConsumeFieldValue(num, typ, r[n:])
			if m < 0 {
				return nil, false
			}
			if num != objectMetaManaged {
				kept = append(kept, r[:n+m]...)
			}
			r = r[n+m:]
		}
		lean = protoField(lean, podMetadata, kept)
		rest = rest[n+m:]
	}
	return lean, true
}

// diffOf is cmp.Diff(want, got), computed only when cmp.Equal says they differ: the
// fuzz targets compare whole pods on every run, and Diff's report costs a fuzzer's
// runs.
func diffOf(want, got any) string {
	if cmp.Equal(want, got) {
		return ""
	}
	return cmp.Diff(want, got)
}

// FuzzPodDecoder decodes arbitrary bytes as the Pod message of a v1 Pod's protobuf
// encoding with podDecoder and with k8s.io/api's (*v1.Pod).Unmarshal (the generic path's
// decoding of the envelope's raw bytes, after protobuf.Serializer.Decode's Reset), and
// asks for the same pod, managedFields dropped, or errors from both. The one leniency
// allowed, podcodec.go's by design: podDecoder does not read managedFields, so when they
// alone are malformed it decodes the pod the generic decoder rejects, and that pod must be
// the one the generic decoder makes of the message without them.
//
// cmp.Diff tells a nil list from an empty one: Unmarshal leaves nil a list it never sees
// an item of, and presize must not make it an empty one.
//
// It also decodes each pod decodePod accepts a second time, into a used object with the
// buffer of the first decode scribbled over, and overwrites the input after decoding:
// neither pod may change, nor share bytes with the buffer or the input (client-go reads
// the next watch frame into the same buffer; podDecoder's buffers are pooled).
func FuzzPodDecoder(f *testing.F) {
	info, ok := runtime.SerializerInfoForMediaType(newPodCodecs(nil).SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		f.Fatal("podCodecs has no protobuf serializer")
	}
	dec := info.Serializer.(podDecoder)

	for _, p := range codecPods() {
		raw := podMessage(f, p)
		f.Add(raw)
		f.Add(raw[:len(raw)-1])
		f.Add(raw[:len(raw)/2])
		flipped := slices.Clone(raw)
		flipped[len(flipped)/3] ^= 0x80
		f.Add(flipped)
	}
	// Metadata twice, which no API server sends. The generated Unmarshal decodes both
	// into the same ObjectMeta (k8s.io/api's core/v1 generated.pb.go, Pod.Unmarshal):
	// the second's uid and resourceVersion win, its finalizers and managedFields are
	// appended to the first's, and the first's name, labels and owner references stay.
	full := podMessage(f, codecPods()[0])
	second, err := (&metav1.ObjectMeta{UID: "u9", ResourceVersion: "99", Finalizers: []string{"f3"},
		ManagedFields: codecPods()[0].ManagedFields[:1]}).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(protoField(slices.Clone(full), podMetadata, second))
	f.Add(append(protoField(nil, podMetadata, second), full...))
	f.Add(protoField(slices.Clone(full), podMetadata, nil))
	// managedFields that are not a list of messages (field 17 as a varint): the
	// generated ObjectMeta.Unmarshal rejects the pod, podDecoder skips them unread.
	f.Add(protoField(nil, podMetadata, []byte{0x0a, 0x01, 'p', 0x88, 0x01, 0x00}))
	// Wire forms the generated Unmarshal skips in an unknown field and protowire rejects:
	// a group ended by another field number (5 then 6), a 10-byte varint whose last
	// byte overflows; in the pod message and in its metadata.
	f.Add([]byte{0x2b, 0x34})
	f.Add([]byte{0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Add(protoField(nil, podMetadata, []byte{0xa3, 0x01, 0xac, 0x01}))

	f.Fuzz(func(t *testing.T, raw []byte) {
		want := &v1.Pod{}
		wantErr := want.Unmarshal(raw)

		data := podEnvelope(raw)
		obj, gvk, err := dec.Decode(data, nil, nil)
		into := codecPods()[0]
		objInto, _, errInto := dec.Decode(data, nil, into)
		if (err == nil) != (errInto == nil) {
			t.Fatalf("decoded into nothing: error %v; into a used pod: error %v", err, errInto)
		}
		switch {
		case err != nil && wantErr != nil:
			return
		case err != nil:
			t.Fatalf("podDecoder: %v; the generic decoder accepts the pod", err)
		case wantErr != nil:
			lean, ok := messageWithoutManagedFields(raw)
			if !ok {
				t.Fatalf("podDecoder accepted bytes that are not protobuf; the generic decoder: %v", wantErr)
			}
			want = &v1.Pod{}
			if err := want.Unmarshal(lean); err != nil {
				t.Fatalf("podDecoder accepted a pod the generic decoder rejects (%v), and not for its managedFields alone: %v", wantErr, err)
			}
		}
		want.ManagedFields = nil
		want.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		if *gvk != v1.SchemeGroupVersion.WithKind("Pod") {
			t.Errorf("kind %v, want v1 Pod", gvk)
		}
		got, ok := obj.(*v1.Pod)
		if !ok {
			t.Fatalf("decoded a %T", obj)
		}
		if diff := diffOf(want, got); diff != "" {
			t.Fatalf("(-generic without managedFields +podDecoder):\n%s", diff)
		}
		if objInto != into {
			t.Errorf("decoding into a pod returned another object, %p not %p", objInto, into)
		}
		if diff := diffOf(want, into); diff != "" {
			t.Fatalf("into a used pod (-generic without managedFields +podDecoder):\n%s", diff)
		}

		if l, ok := layoutOf(raw); ok {
			buf := new([]byte)
			first := &v1.Pod{}
			if err := decodePod(first, raw, l, buf, nil); err == nil {
				// Marshal copies the pod's bytes; DeepCopy would share its strings'.
				firstBytes, err := first.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				scribble := (*buf)[:cap(*buf)]
				for i := range scribble {
					scribble[i] = 0xff
				}
				if b, _ := first.Marshal(); !bytes.Equal(b, firstBytes) {
					was := &v1.Pod{}
					_ = was.Unmarshal(firstBytes)
					t.Fatalf("decoded pod changed with its buffer (-decoded +after):\n%s", cmp.Diff(was, first))
				}
				again := codecPods()[0]
				if err := decodePod(again, raw, l, buf, nil); err != nil {
					t.Fatalf("decodePod accepted the pod, then with its buffer used: %v", err)
				}
				if diff := diffOf(first, again); diff != "" {
					t.Fatalf("decoded again with the buffer reused, into a used pod (-first +again):\n%s", diff)
				}
				// Through shares: the first decode offers its spec, labels and
				// conditions, the second shares them (a pod being deleted offers
				// none); both are the pod.
				sh := new(shares)
				for i, what := range []string{"offering what it may share", "sharing"} {
					p := codecPods()[i%len(codecPods())]
					if err := decodePod(p, raw, l, buf, sh); err != nil {
						t.Fatalf("decodePod %s: %v", what, err)
					}
					if diff := diffOf(first, p); diff != "" {
						t.Fatalf("decodePod %s (-without shares +with):\n%s", what, diff)
					}
				}
				if _, ok := sh.specs.get(l.spec); ok != (l.specs == 1 && first.DeletionTimestamp == nil) {
					t.Errorf("spec cached %v, for %d spec fields and deletionTimestamp %v", ok, l.specs, first.DeletionTimestamp)
				}
			}
		}

		for i := range data {
			data[i] = 0xff
		}
		if diff := diffOf(want, got); diff != "" {
			t.Fatalf("decoded pod changed with its input (-generic +podDecoder):\n%s", diff)
		}
	})
}

// watchEventMessage is the WatchEvent message a server writes in one frame of a
// protobuf watch stream for e.
func watchEventMessage(t testing.TB, e watch.Event) []byte {
	t.Helper()
	ev := metav1.WatchEvent{Type: string(e.Type), Object: runtime.RawExtension{Raw: encodeProto(t, e.Object)}}
	var frame bytes.Buffer
	if err := protobufInfo(t).StreamSerializer.Serializer.Encode(&ev, &frame); err != nil {
		t.Fatal(err)
	}
	return frame.Bytes()
}

// FuzzWatchEventDecoder decodes arbitrary bytes as a watch frame with decodeWatchEvent
// and watchEventDecoder, and with the generic protobuf stream serializer (RawSerializer's
// Decode: Reset, then metav1.WatchEvent's generated Unmarshal): decodeWatchEvent may
// refuse a frame (watchEventDecoder then hands it to the generic decoder), but an event
// it reads must be the generic one, the same type and Object.Raw (nil or empty alike);
// watchEventDecoder must fail where the generic decoder fails and give its event
// otherwise.
func FuzzWatchEventDecoder(f *testing.F) {
	generic := protobufInfo(f).StreamSerializer.Serializer
	info, ok := runtime.SerializerInfoForMediaType(newPodCodecs(nil).SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok || info.StreamSerializer == nil {
		f.Fatal("podCodecs has no protobuf stream serializer")
	}
	ours := info.StreamSerializer.Serializer

	types := []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark}
	for i, p := range codecPods() {
		msg := watchEventMessage(f, watch.Event{Type: types[i%len(types)], Object: p})
		f.Add(msg)
		f.Add(msg[:len(msg)-1])
		// A second object field, of an empty raw: the generic decoder merges the two.
		f.Add(protoField(slices.Clone(msg), watchEventObject, protoField(nil, rawExtensionRaw, nil)))
	}
	status := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old"}
	f.Add(watchEventMessage(f, watch.Event{Type: watch.Error, Object: status}))
	f.Add(protoField(nil, watchEventType, []byte("ADDED")))
	// An object that is not a RawExtension message: the generated Unmarshal rejects the
	// event.
	f.Add(protoField(protoField(nil, watchEventType, []byte("ADDED")), watchEventObject, []byte{0xff}))

	f.Fuzz(func(t *testing.T, b []byte) {
		var want metav1.WatchEvent
		_, _, wantErr := generic.Decode(b, nil, &want)

		var ev metav1.WatchEvent
		if decodeWatchEvent(&ev, b) {
			if wantErr != nil {
				t.Fatalf("decodeWatchEvent read %+v; the generic decoder: %v", ev, wantErr)
			}
			if diff := diffOf(want, ev); diff != "" {
				t.Fatalf("decodeWatchEvent (-generic +ours):\n%s", diff)
			}
		}

		var got metav1.WatchEvent
		_, _, err := ours.Decode(b, nil, &got)
		switch {
		case (err == nil) != (wantErr == nil):
			t.Fatalf("watchEventDecoder: error %v; the generic decoder: error %v", err, wantErr)
		case err == nil:
			if diff := diffOf(want, got); diff != "" {
				t.Fatalf("watchEventDecoder (-generic +ours):\n%s", diff)
			}
		}
	})
}

// FuzzPodBytes gives podBytes arbitrary bytes after the protobuf prefix: what it takes
// for a v1 Pod must be one to the generic decoder too (runtime.Unknown's generated
// Unmarshal succeeds, apiVersion v1, kind Pod, no contentEncoding) and the Pod message it
// finds the envelope's raw bytes. What it does not take goes to the generic decoder.
func FuzzPodBytes(f *testing.F) {
	for _, p := range codecPods() {
		data := encodeProto(f, p)[len(protobufPrefix):]
		f.Add(data)
		f.Add(data[:len(data)-1])
		f.Add(data[:12])
	}
	f.Add(encodeProto(f, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})[len(protobufPrefix):])
	f.Add(podEnvelope(nil)[len(protobufPrefix):])
	f.Add(protoField(podEnvelope([]byte{})[len(protobufPrefix):], unknownContentEncoding, []byte("gzip")))
	// A v1 Pod's typeMeta, then bytes that are not protobuf: TypeMeta's Unmarshal
	// rejects the whole.
	typeMeta := protoField(protoField(nil, typeMetaAPIVersion, []byte("v1")), typeMetaKind, []byte("Pod"))
	f.Add(protoField(protoField(nil, unknownTypeMeta, append(typeMeta, 0xff)), unknownRaw, nil))

	f.Fuzz(func(t *testing.T, b []byte) {
		data := append([]byte(protobufPrefix), b...)
		raw, ok := podBytes(data)
		if !ok {
			return
		}
		var unk runtime.Unknown
		if err := unk.Unmarshal(b); err != nil {
			t.Fatalf("podBytes found a pod message of %d bytes; the generic decoder: %v", len(raw), err)
		}
		if unk.APIVersion != "v1" || unk.Kind != "Pod" || unk.ContentEncoding != "" {
			t.Fatalf("podBytes found a pod message in %+v", unk.TypeMeta)
		}
		if !bytes.Equal(unk.Raw, raw) || (unk.Raw == nil) != (raw == nil) {
			t.Fatalf("podBytes found the pod message %q; the generic decoder %q", raw, unk.Raw)
		}
	})
}
