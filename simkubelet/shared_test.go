package simkubelet

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestPodsShare decodes pods of one template through one decoder: pods whose spec,
// labels or conditions are the same bytes share one copy of them, the others do not, and
// each pod is what the generic decoder makes of its bytes.
func TestPodsShare(t *testing.T) {
	info := protobufInfo(t)
	d := podDecoder{Serializer: info.Serializer, bufs: newBufPool(), shares: new(shares)}
	base := codecPods()[0]
	variant := func(name string, change func(p *v1.Pod)) *v1.Pod {
		p := base.DeepCopy()
		p.Name, p.UID = name, types.UID("uid-"+name)
		change(p)
		return p
	}
	pods := []*v1.Pod{
		variant("first", func(*v1.Pod) {}),
		variant("same", func(*v1.Pod) {}),
		variant("other-node", func(p *v1.Pod) { p.Spec.NodeName = "node-1" }),
		variant("other-labels", func(p *v1.Pod) { p.Labels = map[string]string{"app": "b"} }),
		variant("later", func(p *v1.Pod) {
			p.Status.Conditions[2].LastTransitionTime.Time = p.Status.Conditions[2].LastTransitionTime.Add(1e9)
		}),
	}
	got := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		raw := encodeProto(t, p)
		obj, _, err := d.Decode(raw, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		got[i] = obj.(*v1.Pod)
		want := withoutMF(p)
		want.(*v1.Pod).TypeMeta = got[i].TypeMeta
		if diff := diffOf(want, got[i]); diff != "" {
			t.Fatalf("%s (-generic without managedFields +podDecoder):\n%s", p.Name, diff)
		}
	}
	spec := func(p *v1.Pod) *v1.Container { return &p.Spec.Containers[0] }
	labels := func(p *v1.Pod) uintptr { return reflect.ValueOf(p.Labels).Pointer() }
	conds := func(p *v1.Pod) *v1.PodCondition { return &p.Status.Conditions[0] }
	first, same, otherNode, otherLabels, later := got[0], got[1], got[2], got[3], got[4]
	for _, c := range []struct {
		what        string
		shared, yes bool
	}{
		{"same template: spec", spec(first) == spec(same), true},
		{"same template: labels", labels(first) == labels(same), true},
		{"same template: conditions", conds(first) == conds(same), true},
		{"another node: spec", spec(first) == spec(otherNode), false},
		{"another node: labels", labels(first) == labels(otherNode), true},
		{"other labels: labels", labels(first) == labels(otherLabels), false},
		{"other labels: spec", spec(first) == spec(otherLabels), true},
		{"a condition a second later: conditions", conds(first) == conds(later), false},
		{"a condition a second later: spec", spec(first) == spec(later), true},
	} {
		if c.shared != c.yes {
			t.Errorf("%s: shared %v, want %v", c.what, c.shared, c.yes)
		}
	}
}

// TestSharedCacheBounded: a cache that fills up starts again empty and still holds the
// newest value.
func TestSharedCacheBounded(t *testing.T) {
	c := sharedCache[int]{}
	for i := range maxShared + 10 {
		c.put([]byte{byte(i), byte(i >> 8), byte(i >> 16)}, i)
		if len(c.values) > maxShared {
			t.Fatalf("%d values held, want at most %d", len(c.values), maxShared)
		}
	}
	last := maxShared + 9
	if v, ok := c.get([]byte{byte(last), byte(last >> 8), byte(last >> 16)}); !ok || v != last {
		t.Errorf("newest value: %d, %v; want %d, true", v, ok, last)
	}
	c.put([]byte{1}, 1)
	c.put([]byte{1}, 2)
	if v, _ := c.get([]byte{1}); v != 1 {
		t.Errorf("a second put for the same bytes replaced the value: %d, want 1", v)
	}
}

// TestLeanPod: leanPod drops the metadata's managedFields and, when asked, the spec, and
// leaves every other field as it is, whichever of metadata and spec comes first in the
// message and whether or not there are managedFields.
func TestLeanPod(t *testing.T) {
	withMF := codecPods()[0]
	noMF := withMF.DeepCopy()
	noMF.ManagedFields = nil
	for _, c := range []struct {
		name      string
		pod       *v1.Pod
		specFirst bool
	}{
		{"managedFields, metadata first", withMF, false},
		{"managedFields, spec first", withMF, true},
		{"no managedFields, metadata first", noMF, false},
		{"no managedFields, spec first", noMF, true},
	} {
		raw, err := c.pod.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if c.specFirst {
			// The same fields, the spec moved to the front.
			l, ok := layoutOf(raw)
			if !ok {
				t.Fatal("layoutOf refused the pod")
			}
			moved := append([]byte{}, raw[l.specAt:l.specEnd]...)
			moved = append(moved, raw[:l.specAt]...)
			raw = append(moved, raw[l.specEnd:]...)
		}
		l, ok := layoutOf(raw)
		if !ok || l.metas != 1 || l.specs != 1 {
			t.Fatalf("%s: layout %v, %d metadata and %d spec fields", c.name, ok, l.metas, l.specs)
		}
		for _, dropSpec := range []bool{false, true} {
			lean := leanPod(nil, raw, l, dropSpec)
			got := &v1.Pod{}
			if err := got.Unmarshal(lean); err != nil {
				t.Fatalf("%s, dropSpec %v: %v", c.name, dropSpec, err)
			}
			want := noMF.DeepCopy()
			if dropSpec {
				want.Spec = v1.PodSpec{}
			}
			if diff := diffOf(want, got); diff != "" {
				t.Errorf("%s, dropSpec %v (-want +got):\n%s", c.name, dropSpec, diff)
			}
			if gl, ok := layoutOf(lean); !ok || gl.metas != 1 || gl.managed != 0 || (gl.specs == 0) != dropSpec {
				t.Errorf("%s, dropSpec %v: %d metadata fields (%d bytes of managedFields), %d spec fields", c.name, dropSpec, gl.metas, gl.managed, gl.specs)
			}
		}
	}
}
