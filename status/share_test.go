package status

import (
	"context"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	patchenc "github.com/podstatus/podstatus/internal/patch"
	"github.com/podstatus/podstatus/status/statustest"
)

// shareStatus is a synced kubelet status: conditions, one running container, addresses.
func shareStatus(at time.Time) v1.PodStatus {
	t := metav1.NewTime(at)
	return v1.PodStatus{
		Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{
			{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue, LastTransitionTime: t},
			{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: t},
			{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: t},
		},
		PodIP:     "10.0.0.7",
		PodIPs:    []v1.PodIP{{IP: "10.0.0.7"}},
		StartTime: &t,
		ContainerStatuses: []v1.ContainerStatus{{
			Name: "app", Ready: true, Started: ptr.To(true), Image: "app:1",
			State:     v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t}},
			Resources: &v1.ResourceRequirements{},
		}},
	}
}

func TestShareBase(t *testing.T) {
	at := mgrT0
	// The server's copy of a time is in the local zone (a protobuf decode's
	// time.Unix(...).Local()): the same instant, another location.
	local := func(s *v1.PodStatus) {
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = metav1.NewTime(s.Conditions[i].LastTransitionTime.Local())
		}
	}
	for _, tc := range []struct {
		name                  string
		server                func(*v1.PodStatus)
		fields, conditionsToo bool
	}{
		{name: "equal", server: func(*v1.PodStatus) {}, fields: true, conditionsToo: true},
		{name: "equal, times in another location", server: local, fields: true, conditionsToo: true},
		{name: "another writer's condition", server: func(s *v1.PodStatus) {
			s.Conditions = append(s.Conditions, v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue})
		}, fields: true},
		{name: "a condition's time differs", server: func(s *v1.PodStatus) {
			s.Conditions[2].LastTransitionTime = metav1.NewTime(at.Add(time.Second))
		}, fields: true},
		{name: "conditions in another order", server: func(s *v1.PodStatus) {
			s.Conditions[0], s.Conditions[1] = s.Conditions[1], s.Conditions[0]
		}, fields: true},
		{name: "a container differs", server: func(s *v1.PodStatus) { s.ContainerStatuses[0].Ready = false }, conditionsToo: true},
		{name: "a claim status on the server only", server: func(s *v1.PodStatus) {
			s.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("gpu-0")}}
		}, fields: true, conditionsToo: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cached := shareStatus(at)
			server := shareStatus(at)
			tc.server(&server)
			before := *cached.DeepCopy()
			shareBase(&cached, &server, false)

			if !apiequality.Semantic.DeepEqual(cached, before) {
				t.Fatalf("shareBase changed the status:\n got %+v\nwant %+v", cached, before)
			}
			if got := &cached.ContainerStatuses[0] == &server.ContainerStatuses[0]; got != tc.fields {
				t.Errorf("container statuses shared = %v, want %v", got, tc.fields)
			}
			if got := cached.StartTime == server.StartTime; got != tc.fields {
				t.Errorf("start time shared = %v, want %v", got, tc.fields)
			}
			if got := len(server.Conditions) > 0 && &cached.Conditions[0] == &server.Conditions[0]; got != tc.conditionsToo {
				t.Errorf("conditions shared = %v, want %v", got, tc.conditionsToo)
			}
			if cached.ResourceClaimStatuses != nil {
				t.Errorf("the server's claim statuses were taken: %v", cached.ResourceClaimStatuses)
			}
		})
	}
}

// TestEqualConditionsCovers fails when PodCondition grows a field internal/patch's
// EqualConditions does not compare: shareBase would then hide a difference (and the patch
// encoder skip one).
func TestEqualConditionsCovers(t *testing.T) {
	typ := reflect.TypeOf(v1.PodCondition{})
	for _, e := range []patchenc.Equality{patchenc.Semantic, patchenc.RoundTrip} {
		for i := range typ.NumField() {
			f := typ.Field(i)
			a := []v1.PodCondition{{}}
			b := []v1.PodCondition{{}}
			reflect.ValueOf(&b[0]).Elem().Field(i).Set(mgrNonZero(f.Type))
			if patchenc.EqualConditions(a, b, e) {
				t.Errorf("equality %d, PodCondition.%s: a change is not noticed", e, f.Name)
			}
		}
		if !patchenc.EqualConditions(nil, []v1.PodCondition{}, e) {
			t.Errorf("equality %d: nil and empty lists differ", e)
		}
	}
}

// TestSyncedStatusSharesTheBase checks the point of shareBase: once the Manager's PATCH is
// answered, the cached status holds no copy of its own of what the server's copy holds,
// and what the Manager reports is unchanged.
func TestSyncedStatusSharesTheBase(t *testing.T) {
	srv := statustest.NewServer(mgrPod())
	m, _ := mgrWithServer(t, srv, Options{})
	mgrSet(t, m, mgrPod(), shareStatus(mgrT0))
	want := mgrStatus(t, m, "12345678")
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=1")

	m.mu.Lock()
	e := m.pods["12345678"]
	cs, base := e.status.ContainerStatuses, e.base.Status.ContainerStatuses
	conds, baseConds := e.status.Conditions, e.base.Status.Conditions
	m.mu.Unlock()
	if len(cs) != 1 || len(base) != 1 || &cs[0] != &base[0] {
		t.Error("the cached container statuses are a copy of the base's")
	}
	if len(conds) == 0 || len(baseConds) == 0 || &conds[0] != &baseConds[0] {
		t.Error("the cached conditions are a copy of the base's")
	}
	if got := mgrStatus(t, m, "12345678"); !apiequality.Semantic.DeepEqual(got, want) {
		t.Fatalf("GetPodStatus after the sync:\n got %+v\nwant %+v", got, want)
	}
	// A later change is still computed and sent: the shared status is not modified in
	// place.
	next := shareStatus(mgrT0)
	next.ContainerStatuses[0].Ready = false
	next.Conditions[2].Status = v1.ConditionFalse
	mgrSet(t, m, mgrPod(), next)
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=2")
	if got := mgrServerPod(t, srv).Status.ContainerStatuses[0].Ready; got {
		t.Error("the server's container is still ready")
	}
	if base[0].Ready != true || baseConds[2].Status != v1.ConditionTrue {
		t.Error("the earlier base was modified")
	}
}

// TestObservedCopySharesTheBase: a watch event's copy of the synced pod, decoded apart
// from the PATCH response, becomes the base and the cached status shares it instead,
// so the PATCH response can be collected.
func TestObservedCopySharesTheBase(t *testing.T) {
	srv := statustest.NewServer(mgrPod())
	m, _ := mgrWithServer(t, srv, Options{})
	mgrSet(t, m, mgrPod(), shareStatus(mgrT0))
	mgrSync(t, m)
	ev := mgrServerPod(t, srv).DeepCopy() // the event of the PATCH: same version, own memory
	ev.ResourceVersion += "0"             // and newer, as a later event (another writer's label, say)
	m.ObservePod(context.Background(), ev)

	m.mu.Lock()
	e := m.pods["12345678"]
	sharesEvent := e.base == ev && shared(e.status.ContainerStatuses, ev.Status.ContainerStatuses) &&
		shared(e.status.Conditions, ev.Status.Conditions)
	m.mu.Unlock()
	if !sharesEvent {
		t.Error("the cached status does not share the observed copy")
	}
	mgrSync(t, m)
	mgrWant(t, srv, "get=1 patch=1") // nothing to send
}
