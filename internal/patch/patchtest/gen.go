// Package patchtest draws random pod statuses for the property tests and fuzz tests of the
// status patch encoder. Every field of v1.PodStatus, down to the leaves, is filled by
// reflection, so a field added to the API is exercised without anyone remembering to. The
// values come from small pools chosen to collide: merge keys repeat (so lists get duplicate
// keys), times differ below a second or only in time zone, strings differ only in invalid
// UTF-8, quantities differ only in spelling, and lists and maps are nil, empty or full.
package patchtest

import (
	"encoding/json"
	"reflect"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

// Status draws a random pod status.
func Status(t *rapid.T) v1.PodStatus {
	var s v1.PodStatus
	g := gen{t: t}
	g.fill(reflect.ValueOf(&s).Elem(), "")
	return s
}

// Mutate returns a deep copy of s with a random number of random changes: fields set, cleared
// or redrawn, list elements removed, duplicated, swapped, changed or added.
func Mutate(t *rapid.T, s v1.PodStatus) v1.PodStatus {
	c := *s.DeepCopy()
	g := gen{t: t}
	rounds := rapid.IntRange(0, 4).Draw(t, "rounds")
	for range rounds {
		g.mutate(reflect.ValueOf(&c).Elem(), "")
	}
	return c
}

// RoundTrip returns s as it reads back from its JSON, the form a server stores. It fails
// for values no server could store, such as a time in a five-digit year.
func RoundTrip(s v1.PodStatus) (v1.PodStatus, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return v1.PodStatus{}, err
	}
	var out v1.PodStatus
	if err := json.Unmarshal(b, &out); err != nil {
		return v1.PodStatus{}, err
	}
	return out, nil
}

type gen struct {
	t     *rapid.T
	depth int
}

var (
	timeType     = reflect.TypeFor[metav1.Time]()
	quantityType = reflect.TypeFor[resource.Quantity]()
)

func (g *gen) pick(n int) int { return rapid.IntRange(0, n-1).Draw(g.t, "pick") }

func (g *gen) time() metav1.Time {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	switch g.pick(9) {
	case 0:
		return metav1.Time{}
	case 1:
		return metav1.NewTime(t0)
	case 2:
		return metav1.NewTime(t0.Add(400 * time.Millisecond)) // same second as t0
	case 3:
		return metav1.NewTime(t0.Add(time.Minute))
	case 4:
		return metav1.NewTime(t0.In(time.FixedZone("X", 3600))) // same instant, other zone
	case 5:
		return metav1.NewTime(time.Date(1, 1, 1, 0, 0, 0, 5e8, time.UTC)) // not zero, prints as year 1
	case 6:
		return metav1.NewTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) // five-digit year
	case 7:
		return metav1.NewTime(t0.Add(-time.Nanosecond)) // just before t0: the previous second
	default:
		return metav1.NewTime(t0.Add(time.Hour))
	}
}

func (g *gen) quantity() resource.Quantity {
	pool := []string{"1", "1000m", "100Mi", "0", "1500m", "1.5", "2", "1e3", "1k", "0.1", "-1"}
	i := g.pick(len(pool) + 1)
	if i == len(pool) {
		return resource.Quantity{}
	}
	return resource.MustParse(pool[i])
}

// keyFields are fields used as merge keys or names: drawn from a tiny pool so they collide.
var keyFields = map[string]bool{"Type": true, "IP": true, "Name": true, "ResourceClaimName": true}

func (g *gen) str(field string) string {
	if keyFields[field] {
		pool := []string{"A", "B", "Ready", "PodScheduled", "\xff", "\xfe", ""}
		return pool[g.pick(len(pool))]
	}
	pool := []string{"", "x", "y", "a<b&c>", "\xffz", "\xfez", "é", "\u2028", "l\nb\x01", `q"\`, "Running"}
	return pool[g.pick(len(pool))]
}

func (g *gen) fill(v reflect.Value, field string) {
	g.depth++
	defer func() { g.depth-- }()
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(g.time()))
		return
	case quantityType:
		v.Set(reflect.ValueOf(g.quantity()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(g.str(field))
	case reflect.Bool:
		v.SetBool(g.pick(2) == 1)
	case reflect.Int32, reflect.Int64:
		pool := []int64{0, 1, 2, -1, 1 << 40, 1<<63 - 1, -1 << 63}
		x := pool[g.pick(len(pool))]
		if v.Kind() == reflect.Int32 {
			x = int64(int32(x))
		}
		v.SetInt(x)
	case reflect.Pointer:
		if g.depth > 8 || g.pick(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		g.fill(p.Elem(), field)
		v.Set(p)
	case reflect.Slice:
		switch n := g.pick(6); {
		case n == 0 || g.depth > 8:
			v.SetZero()
		case n == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			l := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				g.fill(l.Index(i), field)
			}
			v.Set(l)
		}
	case reflect.Map:
		switch n := g.pick(5); n {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			keys := []string{"cpu", "memory", "\xffk", "\xfek", "example.com/gpu", "a<b"}
			for range n - 1 {
				k := reflect.New(v.Type().Key()).Elem()
				k.SetString(keys[g.pick(len(keys))])
				e := reflect.New(v.Type().Elem()).Elem()
				g.fill(e, "")
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			g.fill(v.Field(i), f.Name)
		}
	default:
		panic("patchtest: unhandled kind " + v.Kind().String() + " at " + field)
	}
}

// mutate changes v in place at one randomly chosen depth.
func (g *gen) mutate(v reflect.Value, field string) {
	if v.Type() == timeType || v.Type() == quantityType {
		g.fill(v, field)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		// Change one field, or a few.
		for range 1 + g.pick(3) {
			i := g.pick(v.NumField())
			f := v.Type().Field(i)
			if f.IsExported() {
				g.mutate(v.Field(i), f.Name)
			}
		}
	case reflect.Pointer:
		switch {
		case v.IsNil() || g.pick(4) == 0:
			g.fill(v, field)
		default:
			g.mutate(v.Elem(), field)
		}
	case reflect.Slice:
		g.mutateSlice(v, field)
	case reflect.Map:
		if v.Len() == 0 || g.pick(3) == 0 {
			g.fill(v, field)
			return
		}
		keys := v.MapKeys()
		k := keys[g.pick(len(keys))]
		if g.pick(2) == 0 {
			v.SetMapIndex(k, reflect.Value{})
			return
		}
		e := reflect.New(v.Type().Elem()).Elem()
		g.fill(e, "")
		v.SetMapIndex(k, e)
	default:
		g.fill(v, field)
	}
}

func (g *gen) mutateSlice(v reflect.Value, field string) {
	n := v.Len()
	if n == 0 {
		g.fill(v, field)
		return
	}
	switch g.pick(9) {
	case 0: // redraw or clear
		g.fill(v, field)
	case 1: // remove one
		i := g.pick(n)
		l := reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, n-1), v.Slice(0, i))
		v.Set(reflect.AppendSlice(l, v.Slice(i+1, n)))
	case 2: // duplicate one (a deep copy, then maybe changed)
		i := g.pick(n)
		e := reflect.New(v.Type().Elem()).Elem()
		deepCopy(e, v.Index(i))
		if g.pick(2) == 0 {
			g.mutate(e, field)
		}
		v.Set(reflect.Append(v, e))
	case 3: // swap two
		l := reflect.MakeSlice(v.Type(), n, n)
		reflect.Copy(l, v)
		i, j := g.pick(n), g.pick(n)
		a, b := l.Index(i).Interface(), l.Index(j).Interface()
		l.Index(i).Set(reflect.ValueOf(b))
		l.Index(j).Set(reflect.ValueOf(a))
		v.Set(l)
	case 4: // append a new element
		e := reflect.New(v.Type().Elem()).Elem()
		g.fill(e, field)
		v.Set(reflect.Append(v, e))
	default: // change one element
		l := reflect.MakeSlice(v.Type(), n, n)
		reflect.Copy(l, v)
		g.mutate(l.Index(g.pick(n)), field)
		v.Set(l)
	}
}

// deepCopy sets dst to a deep copy of src, through the type's generated DeepCopy when it has
// one (values without one hold no pointers here).
func deepCopy(dst, src reflect.Value) {
	if src.CanAddr() {
		if m := src.Addr().MethodByName("DeepCopy"); m.IsValid() {
			dst.Set(m.Call(nil)[0].Elem())
			return
		}
	}
	dst.Set(src)
}

// Plain returns a copy of s without the fields a kubelet rarely sets (resources, resource
// claims, volume health, and in container statuses resources, volume mounts, user and
// allocated-resource health), the shape of most statuses.
func Plain(s v1.PodStatus) v1.PodStatus {
	c := *s.DeepCopy()
	c.AllocatedResources, c.Resources, c.ExtendedResourceClaimStatus = nil, nil, nil
	c.ResourceClaimStatuses, c.NodeAllocatableResourceClaimStatuses, c.VolumeHealth = nil, nil, nil
	for _, l := range [][]v1.ContainerStatus{c.InitContainerStatuses, c.ContainerStatuses, c.EphemeralContainerStatuses} {
		for i := range l {
			l[i].AllocatedResources, l[i].Resources, l[i].VolumeMounts = nil, nil, nil
			l[i].User, l[i].AllocatedResourcesStatus = nil, nil
		}
	}
	return c
}

// MutateLeaf returns a deep copy of s with exactly one leaf redrawn (a scalar, a time, a
// quantity, or the presence of a pointer, list or map), every leaf equally likely. Changes
// this small, often invisible in JSON, are what equality shortcuts get wrong.
func MutateLeaf(t *rapid.T, s v1.PodStatus) v1.PodStatus {
	c := *s.DeepCopy()
	var leaves []leaf
	collectLeaves(reflect.ValueOf(&c).Elem(), "", &leaves)
	if len(leaves) == 0 {
		return c
	}
	g := gen{t: t}
	l := leaves[g.pick(len(leaves))]
	if l.v.Kind() == reflect.Pointer && !l.v.IsNil() && g.pick(2) == 0 {
		l.v.SetZero()
		return c
	}
	g.fill(l.v, l.field)
	return c
}

type leaf struct {
	v     reflect.Value
	field string
}

func collectLeaves(v reflect.Value, field string, out *[]leaf) {
	if v.Type() == timeType || v.Type() == quantityType {
		*out = append(*out, leaf{v, field})
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				collectLeaves(v.Field(i), f.Name, out)
			}
		}
	case reflect.Pointer:
		*out = append(*out, leaf{v, field})
		if !v.IsNil() {
			collectLeaves(v.Elem(), field, out)
		}
	case reflect.Slice:
		*out = append(*out, leaf{v, field})
		for i := range v.Len() {
			collectLeaves(v.Index(i), field, out)
		}
	case reflect.Map:
		*out = append(*out, leaf{v, field})
	default:
		*out = append(*out, leaf{v, field})
	}
}
