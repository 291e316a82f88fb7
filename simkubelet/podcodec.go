package simkubelet

import (
	"fmt"
	"net/http"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// Decoding pods without the waste of the generic protobuf path.
//
// A pod reaches the agent some five times in its life (its creation, the agent's PATCH
// responses and their watch events, its deletion) and each decode through client-go's
// generic path copies the pod's bytes twice before decoding them (a watch event's
// RawExtension, then the runtime.Unknown envelope: apimachinery's
// pkg/apis/meta/v1/generated.pb.go and pkg/runtime/serializer/protobuf/protobuf.go) and
// decodes its managedFields (one ManagedFieldsEntry and a copy of its FieldsV1 JSON per
// field manager), which the agent then throws away. Together that was about a fifth of
// what the agent allocated, so of its garbage collector's work.
//
// podCodecs is the agent's client codecs: for protobuf only, a pod (not a list, a Status
// or any other kind, which keep the generic path) is decoded straight from the bytes the
// client read, with its managedFields skipped on the wire, and its repeated strings
// interned (internPod: the object is this decode's alone). The result is the object the
// generic path returns, minus managedFields. ManagedFields are skipped, not read, so a pod
// whose managedFields alone are malformed, which the generic path rejects, decodes as it
// would without them; FuzzPodDecoder holds the decoder to both.

// protobufPrefix starts every protobuf-encoded Kubernetes object (the runtime.Unknown
// envelope; apimachinery's pkg/runtime/serializer/protobuf).
const protobufPrefix = "k8s\x00"

// Field numbers of the messages podCodecs reads (k8s.io/apimachinery's and k8s.io/api's
// generated.proto).
const (
	unknownTypeMeta        = 1 // runtime.Unknown.typeMeta
	unknownRaw             = 2 // runtime.Unknown.raw
	unknownContentEncoding = 3 // runtime.Unknown.contentEncoding
	unknownContentType     = 4 // runtime.Unknown.contentType
	typeMetaAPIVersion     = 1 // runtime.TypeMeta.apiVersion
	typeMetaKind           = 2 // runtime.TypeMeta.kind
	watchEventType         = 1 // metav1.WatchEvent.type
	watchEventObject       = 2 // metav1.WatchEvent.object
	rawExtensionRaw        = 1 // runtime.RawExtension.raw
	podMetadata            = 1 // v1.Pod.metadata
	podSpec                = 2 // v1.Pod.spec
	podStatus              = 3 // v1.Pod.status
	objectMetaUID          = 5
	objectMetaRV           = 6
	objectMetaLabels       = 11
	objectMetaManaged      = 17
	podStatusConditions    = 2
)

// podCodecs is a runtime.NegotiatedSerializer: client-go's, with the protobuf decoders
// replaced by podDecoder and watchEventDecoder.
type podCodecs struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

// newPodCodecs returns the codecs; held, if not nil, finds an object the agent holds for
// a pod version (see podDecoder).
func newPodCodecs(held func(uid, rv []byte) *v1.Pod) podCodecs {
	inner := rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()
	infos := slices.Clone(inner.SupportedMediaTypes())
	for i := range infos {
		info := &infos[i]
		if info.MediaType != runtime.ContentTypeProtobuf {
			continue
		}
		// One decoder for the codecs' users: its buffers and what its pods share.
		info.Serializer = podDecoder{Serializer: info.Serializer, bufs: newBufPool(), held: held, shares: new(shares)}
		if info.StreamSerializer != nil {
			ss := *info.StreamSerializer
			ss.Serializer = watchEventDecoder{Serializer: ss.Serializer}
			info.StreamSerializer = &ss
		}
	}
	return podCodecs{NegotiatedSerializer: inner, infos: infos}
}

// SupportedMediaTypes is the inner codecs' list, protobuf's decoders replaced.
func (c podCodecs) SupportedMediaTypes() []runtime.SerializerInfo { return c.infos }

// podConfig is rc set up for client-go's CoreV1 client (core_client.go's
// setConfigDefaults) with podCodecs as its codecs; held is newPodCodecs'.
func podConfig(rc *rest.Config, held func(uid, rv []byte) *v1.Pod) *rest.Config {
	c := rest.CopyConfig(rc)
	gv := v1.SchemeGroupVersion
	c.GroupVersion = &gv
	c.APIPath = "/api"
	c.NegotiatedSerializer = newPodCodecs(held)
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return c
}

// newPodCoreV1 is client-go's CoreV1 client for rc, of podConfig, and hc (core_client.go's
// NewForConfigAndClient).
func newPodCoreV1(rc *rest.Config, hc *http.Client) (typedcorev1.CoreV1Interface, error) {
	rcl, err := rest.RESTClientForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("simkubelet: core/v1 client: %w", err)
	}
	return typedcorev1.New(rcl), nil
}

// podClientset is a clientset whose CoreV1 decodes pods with podCodecs.
type podClientset struct {
	kubernetes.Interface
	core typedcorev1.CoreV1Interface
}

func (c podClientset) CoreV1() typedcorev1.CoreV1Interface { return c.core }

// newBufPool is a pool of buffers (*[]byte) for decodePod.
func newBufPool() *sync.Pool { return &sync.Pool{New: func() any { return new([]byte) }} }

// podDecoder decodes a protobuf-encoded v1 Pod itself (see podCodecs) and hands anything
// else to the inner serializer. When held returns an object for the pod's UID and
// resourceVersion, it returns a shallow copy of that object (into the caller's object, if
// one is given), undecoded: a resourceVersion names one stored version of the pod.
type podDecoder struct {
	runtime.Serializer
	bufs   *sync.Pool // of *[]byte, for decodePod
	held   func(uid, rv []byte) *v1.Pod
	shares *shares // what decodePod shares among pods
}

func (d podDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var pod *v1.Pod
	switch o := into.(type) {
	case nil:
	case *v1.Pod:
		pod = o
	default:
		return d.Serializer.Decode(data, defaults, into)
	}
	raw, ok := podBytes(data)
	if !ok {
		return d.Serializer.Decode(data, defaults, into)
	}
	l, ok := layoutOf(raw)
	if !ok || l.metas > 1 {
		// Bytes layoutOf cannot read (protowire is stricter than the generated Unmarshal,
		// see eachField) or metadata in more than one field, which no API server writes
		// (its generated Marshal writes each field once) and which Pod.Unmarshal merges
		// into one ObjectMeta (k8s.io/api's core/v1/generated.pb.go): the later fields'
		// uid and resourceVersion win, their managedFields, finalizers and owner
		// references are appended. The held lookup and leanPod read one
		// metadata field, so the generic decoder decodes these.
		return d.genericPod(data, defaults, into)
	}
	if d.held != nil && len(l.uid) > 0 && len(l.rv) > 0 {
		if h := d.held(l.uid, l.rv); h != nil {
			// A shallow copy, one allocation at most: client-go's decoders write the
			// returned object's TypeMeta (runtime.WithoutVersionDecoder), and the held
			// object is shared. responses swaps the copy for the held object
			// (fromWatch, fromPatch).
			if pod == nil {
				pod = &v1.Pod{}
			}
			*pod = *h
			gvk := v1.SchemeGroupVersion.WithKind("Pod")
			pod.SetGroupVersionKind(gvk)
			return pod, &gvk, nil
		}
	}
	if pod == nil {
		pod = &v1.Pod{}
	}
	buf := d.bufs.Get().(*[]byte)
	err := decodePod(pod, raw, l, buf, d.shares)
	d.bufs.Put(buf)
	if err != nil {
		return nil, nil, err
	}
	gvk := v1.SchemeGroupVersion.WithKind("Pod")
	pod.SetGroupVersionKind(gvk)
	return pod, &gvk, nil
}

// genericPod decodes data, a v1 Pod's encoding, with the inner serializer (client-go's
// generic path) and makes the pod what decodePod makes it: without managedFields,
// interned unless it is being deleted.
func (d podDecoder) genericPod(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := d.Serializer.Decode(data, defaults, into)
	if pod, ok := obj.(*v1.Pod); ok && err == nil {
		pod.ManagedFields = nil
		if pod.DeletionTimestamp == nil {
			internPod(pod)
		}
	}
	return obj, gvk, err
}

// podBytes returns the Pod message inside a protobuf-encoded object (prefix, then
// runtime.Unknown) if it is a v1 Pod, not content-encoded, in an envelope the generated
// Unmarshal accepts (eachField); anything else is the generic decoder's.
func podBytes(data []byte) ([]byte, bool) {
	if len(data) < len(protobufPrefix) || string(data[:len(protobufPrefix)]) != protobufPrefix {
		return nil, false
	}
	b := data[len(protobufPrefix):]
	var raw, apiVersion, kind []byte
	encoded := false
	ok := eachField(b, unknownContentType, func(num protowire.Number, v []byte) bool {
		switch num {
		case unknownTypeMeta:
			return eachField(v, typeMetaKind, func(num protowire.Number, v []byte) bool {
				switch num {
				case typeMetaAPIVersion:
					apiVersion = v
				case typeMetaKind:
					kind = v
				}
				return true
			})
		case unknownRaw:
			raw = v
		case unknownContentEncoding:
			encoded = len(v) > 0
		}
		return true
	})
	return raw, ok && !encoded && raw != nil && string(apiVersion) == "v1" && string(kind) == "Pod"
}

// podLayout is where the fields podDecoder reads lie in a Pod message (k8s.io/api's
// generated.proto), found by layoutOf in one pass over the message and one over its
// metadata.
type podLayout struct {
	meta            []byte // the (last) metadata's value
	metaAt, metaEnd int    // the metadata field in the message, its tag included
	metas           int    // metadata fields in the message
	managed         int    // bytes the metadata's managedFields take, tags included
	uid, rv         []byte // metadata.uid and metadata.resourceVersion
	spec, status    []byte
	specAt, specEnd int // the (last) spec field in the message, its tag included
	specs           int // spec fields in the message
	// labels and conditions are the encodings of metadata.labels and status.conditions
	// (their fields, tags included), when their fields follow each other (as an API
	// server writes them); nil when there are none or they are apart.
	labels, conditions []byte
}

// layoutOf finds the layout of the Pod message pod, aliasing pod; ok is false for bytes
// that are not protobuf. Of metadata that occurs more than once (metas), it reads the
// last.
func layoutOf(pod []byte) (l podLayout, ok bool) {
	for rest := pod; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		m := protowire.ConsumeFieldValue(num, typ, rest[max(n, 0):])
		if n < 0 || m < 0 {
			return l, false
		}
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(rest[n:])
			switch num {
			case podMetadata:
				l.meta, l.metaAt = v, len(pod)-len(rest)
				l.metaEnd = l.metaAt + n + m
				l.metas++
			case podSpec:
				l.spec, l.specAt = v, len(pod)-len(rest)
				l.specEnd = l.specAt + n + m
				l.specs++
			case podStatus:
				l.status = v
			}
		}
		rest = rest[n+m:]
	}
	var labels, conditions run
	for rest := l.meta; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		m := protowire.ConsumeFieldValue(num, typ, rest[max(n, 0):])
		if n < 0 || m < 0 {
			return l, false
		}
		switch {
		case num == objectMetaManaged:
			l.managed += n + m
		case num == objectMetaUID && typ == protowire.BytesType:
			l.uid, _ = protowire.ConsumeBytes(rest[n:])
		case num == objectMetaRV && typ == protowire.BytesType:
			l.rv, _ = protowire.ConsumeBytes(rest[n:])
		case num == objectMetaLabels:
			labels.add(len(l.meta)-len(rest), n+m)
		}
		rest = rest[n+m:]
	}
	for rest := l.status; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		m := protowire.ConsumeFieldValue(num, typ, rest[max(n, 0):])
		if n < 0 || m < 0 {
			return l, false
		}
		if num == podStatusConditions {
			conditions.add(len(l.status)-len(rest), n+m)
		}
		rest = rest[n+m:]
	}
	l.labels, l.conditions = labels.of(l.meta), conditions.of(l.status)
	return l, true
}

// run is where the fields of one number lie in a message, if they follow each other.
type run struct {
	at, end int
	apart   bool
}

// add records a field of the run at [at, at+n).
func (r *run) add(at, n int) {
	if r.end > 0 && at != r.end {
		r.apart = true
	}
	if r.end == 0 {
		r.at = at
	}
	r.end = at + n
}

// of is the run's bytes in msg: nil for no field, or fields apart.
func (r run) of(msg []byte) []byte {
	if r.end == 0 || r.apart {
		return nil
	}
	return msg[r.at:r.end]
}

// eachField calls fn with the number and value of each length-delimited field of the
// protobuf message b (strings, bytes, messages, packed lists), in order, and skips the
// others. The fields numbered 1 to known are the message's own and all length-delimited
// (runtime.Unknown's, runtime.TypeMeta's, runtime.RawExtension's, metav1.WatchEvent's:
// k8s.io/apimachinery's pkg/runtime and pkg/apis/meta/v1 generated.proto); 0 is for a
// message whose fields are not all read. eachField stops and reports false when fn does,
// for bytes that are not a protobuf message, and for one of the known fields of another
// wire type, which the message's generated Unmarshal rejects ("wrong wireType": its
// generated.pb.go). It may also report false for bytes that Unmarshal accepts (protowire
// is the stricter: a 10-byte varint's overflow, a group's end of another number); its
// callers then leave the bytes to the generic decoder.
func eachField(b []byte, known protowire.Number, fn func(num protowire.Number, v []byte) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return false
		}
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			if !fn(num, v) {
				return false
			}
		} else if num <= known {
			return false
		}
		b = b[n+m:]
	}
	return true
}

// decodePod decodes the Pod message raw, of layout l, into pod (reset first), without its
// managedFields, and interns its strings unless it is being deleted (it is gone after an
// event or two). buf is a buffer it may rewrite raw into (and grow). With sh (may be nil),
// pod shares the spec, labels and conditions sh holds for the same bytes (a shared spec
// is not even decoded), and offers sh those it decodes (see shares).
func decodePod(pod *v1.Pod, raw []byte, l podLayout, buf *[]byte, sh *shares) error {
	var spec v1.PodSpec
	var labels map[string]string
	var conditions []v1.PodCondition
	var sharedSpec, sharedLabels, sharedConditions bool
	if sh != nil {
		// A message with more than one spec field is decoded, merged by Unmarshal, as a
		// whole; no API server writes one.
		if l.specs == 1 {
			spec, sharedSpec = sh.specs.get(l.spec)
		}
		if l.labels != nil {
			labels, sharedLabels = sh.labels.get(l.labels)
		}
		if l.conditions != nil {
			conditions, sharedConditions = sh.conditions.get(l.conditions)
		}
	}
	lean := raw
	if l.managed > 0 || sharedSpec {
		lean = leanPod((*buf)[:0], raw, l, sharedSpec)
		*buf = lean
	}
	*pod = v1.Pod{}
	presize(pod, l, !sharedSpec)
	// v1.Pod.Unmarshal copies every string and byte slice out of lean, so the buffer
	// is free again once it returns.
	if err := pod.Unmarshal(lean); err != nil {
		return fmt.Errorf("simkubelet: decoding a pod: %w", err)
	}
	// What is shared is in place before interning, which must not write to it; what
	// was decoded is interned before it is offered.
	if sharedSpec {
		pod.Spec = spec
	}
	if sharedLabels {
		pod.Labels = labels
	}
	if sharedConditions {
		pod.Status.Conditions = nil
	}
	if pod.DeletionTimestamp == nil {
		internObject(pod)
		if !sharedSpec {
			internSpec(&pod.Spec)
		}
		if sh != nil {
			if !sharedSpec && l.specs == 1 {
				sh.specs.put(l.spec, pod.Spec)
			}
			if !sharedLabels && l.labels != nil {
				sh.labels.put(l.labels, pod.Labels)
			}
			if !sharedConditions && l.conditions != nil {
				sh.conditions.put(l.conditions, pod.Status.Conditions)
			}
		}
	}
	if sharedConditions {
		pod.Status.Conditions = conditions
	}
	return nil
}

// leanPod appends to dst the Pod message pod, of layout l, with the managedFields of its
// metadata left out, and its spec field too if dropSpec, every other field as it is and
// in its order. It rewrites one metadata field, the last (podDecoder leaves a message
// with more to the generic decoder), and drops one spec field, the only one (decodePod
// shares a spec only then).
func leanPod(dst, pod []byte, l podLayout, dropSpec bool) []byte {
	// The message is copied in the order of its fields, cut where the metadata (when it
	// has managedFields) and the spec (when dropped) are, whichever comes first.
	type cut struct {
		at, end int
		meta    bool // rewritten without managedFields, not dropped
	}
	var cuts [2]cut
	n := 0
	if l.managed > 0 {
		cuts[n] = cut{l.metaAt, l.metaEnd, true}
		n++
	}
	if dropSpec {
		cuts[n] = cut{l.specAt, l.specEnd, false}
		n++
	}
	if n == 2 && cuts[1].at < cuts[0].at {
		cuts[0], cuts[1] = cuts[1], cuts[0]
	}
	from := 0
	for _, c := range cuts[:n] {
		dst = append(dst, pod[from:c.at]...)
		if c.meta {
			dst = appendMetadata(dst, l)
		}
		from = c.end
	}
	return append(dst, pod[from:]...)
}

// appendMetadata appends to dst the metadata field of layout l without its managedFields.
func appendMetadata(dst []byte, l podLayout) []byte {
	dst = protowire.AppendTag(dst, podMetadata, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(len(l.meta)-l.managed))
	for rest := l.meta; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if num != objectMetaManaged {
			dst = append(dst, rest[:n+m]...)
		}
		rest = rest[n+m:]
	}
	return dst
}

// presize gives the lists of pod (a zero Pod) the capacity of the lists the Pod message
// of layout l holds, those of its spec only if spec (it is decoded). v1.Pod.Unmarshal
// appends a list's items one at a time, so a status's five conditions cost slices of 1,
// 2, 4 and 8 (1.8 KB, of which the last 960 B stay for the pod's life) instead of one of
// 640 B.
func presize(pod *v1.Pod, l podLayout, spec bool) {
	// Field numbers: k8s.io/api/core/v1/generated.proto.
	if spec { // a shared spec is not decoded: nothing to size, nor to count
		if c, ok := fieldCounts(l.spec); ok {
			s := &pod.Spec
			s.Volumes = withCap[v1.Volume](c[1])
			s.Containers = withCap[v1.Container](c[2])
			s.InitContainers = withCap[v1.Container](c[20])
			s.Tolerations = withCap[v1.Toleration](c[22])
			s.ReadinessGates = withCap[v1.PodReadinessGate](c[28])
		}
	}
	if c, ok := fieldCounts(l.status); ok {
		s := &pod.Status
		s.Conditions = withCap[v1.PodCondition](c[2])
		s.ContainerStatuses = withCap[v1.ContainerStatus](c[8])
		s.InitContainerStatuses = withCap[v1.ContainerStatus](c[10])
		s.PodIPs = withCap[v1.PodIP](c[12])
		s.HostIPs = withCap[v1.HostIP](c[16])
	}
}

// fieldCounts counts the occurrences of each length-delimited field (a list of messages
// is one per item) numbered below 64 in message b.
func fieldCounts(b []byte) (c [64]int, ok bool) {
	ok = eachField(b, 0, func(num protowire.Number, _ []byte) bool {
		if num < 64 {
			c[num]++
		}
		return true
	})
	return c, ok
}

// withCap is an empty slice of capacity n, or nil for 0 (as Unmarshal leaves a list it
// does not see).
func withCap[T any](n int) []T {
	if n == 0 {
		return nil
	}
	return make([]T, 0, n)
}

// watchEventDecoder decodes a protobuf watch frame into a metav1.WatchEvent whose
// Object.Raw is the frame's own bytes, not a copy: client-go's watch decoder
// (k8s.io/client-go/rest/watch/decoder.go) decodes that object before it reads the next
// frame into the same buffer. Anything else goes to the inner serializer.
type watchEventDecoder struct{ runtime.Serializer }

func (d watchEventDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	ev, ok := into.(*metav1.WatchEvent)
	if !ok || !decodeWatchEvent(ev, data) {
		return d.Serializer.Decode(data, defaults, into)
	}
	gvk := metav1.SchemeGroupVersion.WithKind("WatchEvent")
	return ev, &gvk, nil
}

// eventType is v as a string, a constant for the event types the API defines: decoding
// one allocates nothing.
func eventType(v []byte) string {
	for _, t := range [...]watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error} {
		if string(v) == string(t) {
			return string(t)
		}
	}
	return string(v)
}

// decodeWatchEvent reads a metav1.WatchEvent message into ev, its Object.Raw aliasing b.
// It reports false, leaving the frame to the generic decoder and its error, for every
// frame that decoder rejects: an empty one (RawSerializer.Decode, k8s.io/apimachinery's
// pkg/runtime/serializer/protobuf/protobuf.go) and those eachField refuses. An object
// field that occurs twice is merged as the generated Unmarshal merges it: the raw bytes
// of the last one that has some.
func decodeWatchEvent(ev *metav1.WatchEvent, b []byte) bool {
	*ev = metav1.WatchEvent{}
	if len(b) == 0 {
		return false
	}
	return eachField(b, watchEventObject, func(num protowire.Number, v []byte) bool {
		switch num {
		case watchEventType:
			ev.Type = eventType(v)
		case watchEventObject:
			return eachField(v, rawExtensionRaw, func(num protowire.Number, v []byte) bool {
				if num == rawExtensionRaw {
					ev.Object.Raw = v
				}
				return true
			})
		}
		return true
	})
}
