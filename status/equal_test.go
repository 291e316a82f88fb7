package status

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

// mgrReferenceFieldsEqual is the kubelet's comparison, written the kubelet's way: the
// whole status through Semantic.DeepEqual with the ignored fields blanked.
func mgrReferenceFieldsEqual(a, b *v1.PodStatus) bool {
	ac, bc := *a, *b
	ac.Conditions, bc.Conditions = nil, nil
	ac.ResourceClaimStatuses, bc.ResourceClaimStatuses = nil, nil
	ac.ExtendedResourceClaimStatus, bc.ExtendedResourceClaimStatus = nil, nil
	ac.NodeAllocatableResourceClaimStatuses, bc.NodeAllocatableResourceClaimStatuses = nil, nil
	return apiequality.Semantic.DeepEqual(&ac, &bc)
}

// mgrNonZero returns a non-zero value of type t.
func mgrNonZero(t reflect.Type) reflect.Value {
	switch t {
	case reflect.TypeOf(metav1.Time{}):
		return reflect.ValueOf(metav1.NewTime(mgrT0))
	case reflect.TypeOf(resource.Quantity{}):
		return reflect.ValueOf(resource.MustParse("1"))
	}
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Ptr:
		p := reflect.New(t.Elem())
		p.Elem().Set(mgrNonZero(t.Elem()))
		v.Set(p)
	case reflect.Slice:
		v.Set(reflect.Append(v, mgrNonZero(t.Elem())))
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(mgrNonZero(t.Key()), mgrNonZero(t.Elem()))
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				v.Field(i).Set(mgrNonZero(t.Field(i).Type))
				break
			}
		}
	}
	return v
}

// TestSameKubeletFieldsCovers sets every field of PodStatus, ContainerStatus and the
// container states, one at a time, and checks the typed comparison notices, as the
// kubelet's TestIsPodStatusByKubeletEqualFutureProof does. A field added by a new API
// version fails here until equal.go compares it.
func TestSameKubeletFieldsCovers(t *testing.T) {
	ignored := map[string]bool{"Conditions": true, "ResourceClaimStatuses": true,
		"ExtendedResourceClaimStatus": true, "NodeAllocatableResourceClaimStatuses": true}
	check := func(what string, base v1.PodStatus, set func(*v1.PodStatus, reflect.Value, int), typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if what == "PodStatus" && ignored[f.Name] {
				continue
			}
			b := *base.DeepCopy()
			set(&b, mgrNonZero(f.Type), i)
			if sameKubeletFields(&base, &b) {
				t.Errorf("%s.%s: a change is not noticed", what, f.Name)
			}
			if mgrReferenceFieldsEqual(&base, &b) {
				t.Errorf("%s.%s: the reference does not notice either (test bug)", what, f.Name)
			}
		}
	}
	check("PodStatus", v1.PodStatus{}, func(s *v1.PodStatus, v reflect.Value, i int) {
		reflect.ValueOf(s).Elem().Field(i).Set(v)
	}, reflect.TypeOf(v1.PodStatus{}))
	one := v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{}}}
	check("ContainerStatus", one, func(s *v1.PodStatus, v reflect.Value, i int) {
		reflect.ValueOf(&s.ContainerStatuses[0]).Elem().Field(i).Set(v)
	}, reflect.TypeOf(v1.ContainerStatus{}))
	for _, st := range []struct {
		name string
		base v1.ContainerState
		get  func(*v1.ContainerState) reflect.Value
		typ  reflect.Type
	}{
		{"ContainerStateWaiting", v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}},
			func(c *v1.ContainerState) reflect.Value { return reflect.ValueOf(c.Waiting).Elem() }, reflect.TypeOf(v1.ContainerStateWaiting{})},
		{"ContainerStateRunning", v1.ContainerState{Running: &v1.ContainerStateRunning{}},
			func(c *v1.ContainerState) reflect.Value { return reflect.ValueOf(c.Running).Elem() }, reflect.TypeOf(v1.ContainerStateRunning{})},
		{"ContainerStateTerminated", v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}},
			func(c *v1.ContainerState) reflect.Value { return reflect.ValueOf(c.Terminated).Elem() }, reflect.TypeOf(v1.ContainerStateTerminated{})},
	} {
		base := v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{{State: st.base, LastTerminationState: *st.base.DeepCopy()}}}
		check(st.name+" (state)", base, func(s *v1.PodStatus, v reflect.Value, i int) {
			st.get(&s.InitContainerStatuses[0].State).Field(i).Set(v)
		}, st.typ)
		check(st.name+" (last state)", base, func(s *v1.PodStatus, v reflect.Value, i int) {
			st.get(&s.InitContainerStatuses[0].LastTerminationState).Field(i).Set(v)
		}, st.typ)
	}
	// The state kinds themselves.
	check("ContainerState", one, func(s *v1.PodStatus, v reflect.Value, i int) {
		reflect.ValueOf(&s.ContainerStatuses[0].State).Elem().Field(i).Set(v)
	}, reflect.TypeOf(v1.ContainerState{}))
}

// TestSameKubeletFieldsMatchesSemantic compares the typed comparison with Semantic.DeepEqual
// on random pairs drawn from small domains, so that equal and nearly equal pairs are
// common: nil against empty lists and maps, times in other zones or with nanoseconds,
// quantities written differently.
func TestSameKubeletFieldsMatchesSemantic(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	times := []metav1.Time{{}, metav1.NewTime(mgrT0), metav1.NewTime(mgrT0.In(loc)), metav1.NewTime(mgrT0.Add(1))}
	genTime := rapid.SampledFrom(times)
	genTimePtr := rapid.Custom(func(t *rapid.T) *metav1.Time {
		if rapid.Bool().Draw(t, "nil") {
			return nil
		}
		v := genTime.Draw(t, "time")
		return &v
	})
	genStr := rapid.SampledFrom([]string{"", "a", "b"})
	genQty := rapid.SampledFrom([]string{"1", "1000m", "2"})
	genList := rapid.Custom(func(t *rapid.T) v1.ResourceList {
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0:
			return nil
		case 1:
			return v1.ResourceList{}
		}
		return v1.ResourceList{v1.ResourceCPU: resource.MustParse(genQty.Draw(t, "q"))}
	})
	genState := rapid.Custom(func(t *rapid.T) v1.ContainerState {
		var s v1.ContainerState
		switch rapid.IntRange(0, 3).Draw(t, "state") {
		case 1:
			s.Waiting = &v1.ContainerStateWaiting{Reason: genStr.Draw(t, "r")}
		case 2:
			s.Running = &v1.ContainerStateRunning{StartedAt: genTime.Draw(t, "t")}
		case 3:
			s.Terminated = &v1.ContainerStateTerminated{ExitCode: int32(rapid.IntRange(0, 1).Draw(t, "code")),
				Message: genStr.Draw(t, "m"), StartedAt: genTime.Draw(t, "s"), FinishedAt: genTime.Draw(t, "f")}
		}
		return s
	})
	genCS := rapid.Custom(func(t *rapid.T) v1.ContainerStatus {
		c := v1.ContainerStatus{Name: genStr.Draw(t, "name"), Ready: rapid.Bool().Draw(t, "ready"),
			State: genState.Draw(t, "state"), LastTerminationState: genState.Draw(t, "last"),
			AllocatedResources: genList.Draw(t, "alloc")}
		if rapid.Bool().Draw(t, "started?") {
			b := rapid.Bool().Draw(t, "started")
			c.Started = &b
		}
		if rapid.Bool().Draw(t, "mounts?") {
			c.VolumeMounts = []v1.VolumeMountStatus{}
			if rapid.Bool().Draw(t, "mount") {
				c.VolumeMounts = append(c.VolumeMounts, v1.VolumeMountStatus{Name: genStr.Draw(t, "mn")})
			}
		}
		return c
	})
	genCSs := rapid.Custom(func(t *rapid.T) []v1.ContainerStatus {
		if rapid.Bool().Draw(t, "nil") {
			return nil
		}
		return rapid.SliceOfN(genCS, 0, 2).Draw(t, "list")
	})
	genStatus := rapid.Custom(func(t *rapid.T) v1.PodStatus {
		s := v1.PodStatus{
			Phase: v1.PodPhase(genStr.Draw(t, "phase")), Message: genStr.Draw(t, "msg"),
			StartTime: genTimePtr.Draw(t, "start"), ContainerStatuses: genCSs.Draw(t, "cs"),
			InitContainerStatuses: genCSs.Draw(t, "init"), AllocatedResources: genList.Draw(t, "alloc"),
			ObservedGeneration: int64(rapid.IntRange(0, 1).Draw(t, "gen")),
		}
		if rapid.Bool().Draw(t, "ips") {
			s.PodIPs = []v1.PodIP{{IP: genStr.Draw(t, "ip")}}
		}
		return s
	})
	rapid.Check(t, func(t *rapid.T) {
		a := genStatus.Draw(t, "a")
		b := genStatus.Draw(t, "b")
		if rapid.Bool().Draw(t, "near") {
			b = *a.DeepCopy() // mostly equal pairs, then one perturbation
			if rapid.Bool().Draw(t, "perturb") {
				b.ContainerStatuses = genCSs.Draw(t, "cs2")
			}
		}
		if got, want := sameKubeletFields(&a, &b), mgrReferenceFieldsEqual(&a, &b); got != want {
			t.Fatalf("typed %v, Semantic.DeepEqual %v\na=%+v\nb=%+v", got, want, a, b)
		}
	})
}
