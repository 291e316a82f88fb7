package podstate_test

import (
	"encoding/json"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/podstate/podstatetest"
)

// list builds a resource list from name, quantity pairs.
func list(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func int64p(v int64) *int64 { return &v }

// burstablePod has a sidecar, an init container, two containers, overhead and pod-level
// requests and limits. Aggregates (component-helpers' PodRequests/PodLimits, computed
// by hand): requests cpu max(100m+200m+50m, 1+50m) = 1050m then pod-level 2, memory
// 64Mi+128Mi+32Mi = 224Mi, plus overhead cpu 100m, memory 10Mi; limits cpu
// 1+500m = 1500m then pod-level 3, memory pod-level 1Gi, plus overhead.
func burstablePod(phase v1.PodPhase) *v1.Pod {
	return &v1.Pod{
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{
				{Name: "proxy", RestartPolicy: sidecarPolicy(), Resources: v1.ResourceRequirements{
					Requests: list("cpu", "50m", "memory", "32Mi")}},
				{Name: "migrate", Resources: v1.ResourceRequirements{Requests: list("cpu", "1")}},
			},
			Containers: []v1.Container{
				{Name: "app", Resources: v1.ResourceRequirements{
					Requests: list("cpu", "100m", "memory", "64Mi"), Limits: list("cpu", "1")}},
				{Name: "log", Resources: v1.ResourceRequirements{
					Requests: list("cpu", "200m", "memory", "128Mi"), Limits: list("cpu", "500m")}},
			},
			Resources: &v1.ResourceRequirements{Requests: list("cpu", "2"), Limits: list("cpu", "3", "memory", "1Gi")},
			Overhead:  list("cpu", "100m", "memory", "10Mi"),
		},
		Status: v1.PodStatus{Phase: phase},
	}
}

// podLevelPod has only pod-level resources: cpu request 500m, cpu limit 1, memory
// limit 512Mi, and a container asking for 100Mi of memory.
func podLevelPod(phase v1.PodPhase) *v1.Pod {
	return &v1.Pod{
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{Requests: list("memory", "100Mi")}}},
			Resources:  &v1.ResourceRequirements{Requests: list("cpu", "500m"), Limits: list("cpu", "1", "memory", "512Mi")},
		},
		Status: v1.PodStatus{Phase: phase},
	}
}

func bestEffort(phase v1.PodPhase) *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
		Status: v1.PodStatus{Phase: phase}}
}

func TestPodLevelResources(t *testing.T) {
	oldRunning := &v1.PodStatus{Phase: v1.PodRunning, Resources: &v1.ResourceRequirements{
		Requests: list("cpu", "700m", "memory", "1Gi"), Limits: list("cpu", "4", "memory", "2Gi")}}
	oldPending := oldRunning.DeepCopy()
	oldPending.Phase = v1.PodPending
	for _, tc := range []struct {
		name      string
		pod       *v1.Pod
		old       *v1.PodStatus
		cgroup    *podstate.PodCgroup
		features  features.Set
		resources *v1.ResourceRequirements
		allocated v1.ResourceList
	}{
		{name: "best effort pending", pod: bestEffort(v1.PodPending),
			resources: &v1.ResourceRequirements{Requests: list(), Limits: list()}, allocated: list()},
		{name: "best effort running without a cgroup", pod: bestEffort(v1.PodRunning),
			resources: &v1.ResourceRequirements{Requests: list(), Limits: list()}, allocated: list()},
		{name: "best effort running at the cgroup floors keeps the old CPU limit", pod: bestEffort(v1.PodRunning),
			old:    &v1.PodStatus{Phase: v1.PodRunning, Resources: &v1.ResourceRequirements{Limits: list("cpu", "2")}},
			cgroup: &podstate.PodCgroup{CPU: &podstate.CPUCgroup{Shares: 2, Quota: -1, Period: 100000}},
			// 2 shares are 2m, not above the floor of 2: no CPU request; quota -1 reads as
			// no limit, so the previous one stays.
			resources: &v1.ResourceRequirements{Requests: list(), Limits: list("cpu", "2")}, allocated: list()},
		{name: "containers, init containers, sidecars, overhead and pod-level resources", pod: burstablePod(v1.PodPending),
			resources: &v1.ResourceRequirements{
				Requests: list("cpu", "2100m", "memory", "234Mi"),
				Limits:   list("cpu", "3100m", "memory", "1034Mi")},
			allocated: list("cpu", "2100m", "memory", "234Mi")},
		{name: "without pod-level resources the aggregate stands", pod: func() *v1.Pod {
			p := burstablePod(v1.PodSucceeded)
			p.Spec.Resources = nil
			return p
		}(),
			resources: &v1.ResourceRequirements{
				Requests: list("cpu", "1150m", "memory", "234Mi"),
				Limits:   list("cpu", "1600m")},
			allocated: list("cpu", "1150m", "memory", "234Mi")},
		{name: "running without a cgroup: the spec's pod-level values and the aggregate memory request",
			pod: burstablePod(v1.PodRunning),
			resources: &v1.ResourceRequirements{
				Requests: list("cpu", "2", "memory", "234Mi"),
				Limits:   list("cpu", "3", "memory", "1Gi")},
			allocated: list("cpu", "2100m", "memory", "234Mi")},
		{name: "running without a cgroup keeps the previous Running status's values",
			pod: podLevelPod(v1.PodRunning), old: oldRunning,
			resources: &v1.ResourceRequirements{
				Requests: list("cpu", "700m", "memory", "100Mi"),
				Limits:   list("cpu", "4", "memory", "2Gi")},
			allocated: list("cpu", "500m", "memory", "100Mi")},
		{name: "running without a cgroup ignores a previous status that was not Running",
			pod: podLevelPod(v1.PodRunning), old: oldPending,
			resources: &v1.ResourceRequirements{
				Requests: list("cpu", "500m", "memory", "100Mi"),
				Limits:   list("cpu", "1", "memory", "512Mi")},
			allocated: list("cpu", "500m", "memory", "100Mi")},
		{name: "running with the cgroup's values",
			pod: podLevelPod(v1.PodRunning), old: oldRunning,
			cgroup: &podstate.PodCgroup{
				CPU:         &podstate.CPUCgroup{Shares: 1024, Quota: 150000, Period: 100000},
				MemoryLimit: int64p(256 << 20),
			},
			resources: &v1.ResourceRequirements{
				Requests: list("cpu", "1", "memory", "100Mi"),
				Limits:   list("cpu", "1500m", "memory", "256Mi")},
			allocated: list("cpu", "500m", "memory", "100Mi")},
		{name: "a cgroup v2 read-back equal to the allocation after the weight round trip keeps the spec's request",
			// 500m is 512 shares, weight 20, read back as 500 shares (489m).
			pod: podLevelPod(v1.PodRunning),
			cgroup: &podstate.PodCgroup{
				CPU: &podstate.CPUCgroup{Shares: 500, Quota: 100000, Period: 100000},
			},
			resources: &v1.ResourceRequirements{
				Requests: list("cpu", "500m", "memory", "100Mi"),
				Limits:   list("cpu", "1", "memory", "512Mi")},
			allocated: list("cpu", "500m", "memory", "100Mi")},
		{name: "a cgroup read-back that differs after the round trip is written",
			pod: podLevelPod(v1.PodRunning),
			cgroup: &podstate.PodCgroup{
				CPU: &podstate.CPUCgroup{Shares: 510, Quota: 100000, Period: 100000},
			},
			resources: &v1.ResourceRequirements{
				Requests: list("cpu", "499m", "memory", "100Mi"),
				Limits:   list("cpu", "1", "memory", "512Mi")},
			allocated: list("cpu", "500m", "memory", "100Mi")},
		{name: "a CPU limit at or below 10m with none in the spec is neither written nor kept",
			pod: bestEffort(v1.PodRunning), old: &v1.PodStatus{Phase: v1.PodRunning, Resources: &v1.ResourceRequirements{Limits: list("cpu", "2")}},
			cgroup:    &podstate.PodCgroup{CPU: &podstate.CPUCgroup{Shares: 2, Quota: 1000, Period: 100000}},
			resources: &v1.ResourceRequirements{Requests: list(), Limits: list()}, allocated: list()},
		{name: "the gate off", pod: burstablePod(v1.PodRunning), features: features.V1_34()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod
			pod.Name, pod.Namespace, pod.UID = "p", "ns", "uid-1"
			before := pod.DeepCopy()
			s, err := podstate.Generate(podstate.Input{Pod: pod, OldStatus: tc.old, Features: tc.features, Runtime: podstate.Runtime{PodCgroup: tc.cgroup}})
			if err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(s.Resources, tc.resources) || !sameStrings(s.Resources, tc.resources) {
				t.Errorf("resources = %s, want %s", js(t, s.Resources), js(t, tc.resources))
			}
			if !apiequality.Semantic.DeepEqual(s.AllocatedResources, tc.allocated) || js(t, s.AllocatedResources) != js(t, tc.allocated) {
				t.Errorf("allocatedResources = %s, want %s", js(t, s.AllocatedResources), js(t, tc.allocated))
			}
			if tc.resources != nil && (s.Resources.Requests == nil || s.Resources.Limits == nil) {
				t.Errorf("resources has a nil list, the kubelet's are empty maps: %#v", s.Resources)
			}
			if !apiequality.Semantic.DeepEqual(pod, before) {
				t.Errorf("Generate modified the pod")
			}
		})
	}
}

// sameStrings compares the serialized quantities (the status carries the strings).
func sameStrings(a, b *v1.ResourceRequirements) bool {
	if a == nil || b == nil {
		return a == b
	}
	return js(nil, a) == js(nil, b)
}

func js(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil && t != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The kubelet v1.37.0 writes "resources": {} for a BestEffort pod and no
// allocatedResources (an empty map is omitted).
func TestBestEffortJSON(t *testing.T) {
	pod := bestEffort(v1.PodPending)
	pod.Name, pod.Namespace = "p", "ns"
	s, err := podstate.Generate(podstate.Input{Pod: pod})
	if err != nil {
		t.Fatal(err)
	}
	out := js(t, s)
	if !strings.Contains(out, `"resources":{}`) || strings.Contains(out, "allocatedResources") {
		t.Fatalf("status %s: want \"resources\":{} and no allocatedResources", out)
	}
}

// Properties of the pod-level resources on every generated input, each checked from the
// inputs directly:
//   - the gate off writes neither field;
//   - a pod the server does not show Running gets the aggregate requests in both
//     allocatedResources and resources.requests, and spec.resources' claims;
//   - a Running pod without cgroup facts gets, for CPU request, CPU limit and memory
//     limit, the previous status's value when that status was Running and has one, and
//     the spec's pod-level value otherwise; the memory request is the spec's pod-level
//     one, else the aggregate's; other resources are the spec's pod-level ones;
//   - a Running pod with a positive cgroup memory limit gets that limit;
//   - feeding the status back as the previous one changes neither field (no PATCH
//     churn from a settled pod), unless the pod is Running on the server but the new
//     status is not (the previous values are kept only from a Running status).
func TestPropertyPodLevelResources(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := drawInput(t, podstatetest.Options{})
		in.Features.NoPodLevelResourcesStatus = rapid.IntRange(0, 5).Draw(t, "gateOff") == 0
		s, err := podstate.Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		if in.Features.NoPodLevelResourcesStatus {
			if s.Resources != nil || s.AllocatedResources != nil {
				t.Fatalf("gate off, but resources %s, allocatedResources %s", js(nil, s.Resources), js(nil, s.AllocatedResources))
			}
			return
		}
		if s.Resources == nil || s.AllocatedResources == nil {
			t.Fatalf("gate on, but resources %v, allocatedResources %v", s.Resources, s.AllocatedResources)
		}
		var spec v1.ResourceRequirements
		if in.Pod.Spec.Resources != nil {
			spec = *in.Pod.Spec.Resources
		}
		got := s.Resources
		if in.Pod.Status.Phase != v1.PodRunning {
			if js(nil, got.Requests) != js(nil, s.AllocatedResources) || !apiequality.Semantic.DeepEqual(got.Claims, spec.Claims) {
				t.Fatalf("not Running: resources %s, allocatedResources %s", js(nil, got), js(nil, s.AllocatedResources))
			}
		} else if in.PodCgroup == nil {
			base := in.Pod.Status
			if in.OldStatus != nil {
				base = *in.OldStatus
			}
			var old v1.ResourceRequirements
			if base.Resources != nil && base.Phase == v1.PodRunning {
				old = *base.Resources
			}
			want := func(name v1.ResourceName, oldList, specList v1.ResourceList) (resource.Quantity, bool) {
				if q, ok := oldList[name]; ok {
					return q, true
				}
				q, ok := specList[name]
				return q, ok
			}
			check := func(what string, name v1.ResourceName, gotList, oldList, specList v1.ResourceList) {
				w, wok := want(name, oldList, specList)
				g, gok := gotList[name]
				if gok != wok || gok && g.String() != w.String() {
					t.Fatalf("%s %s = %v (%v), want %v (%v); resources %s", what, name, g.String(), gok, w.String(), wok, js(nil, got))
				}
			}
			check("request", v1.ResourceCPU, got.Requests, old.Requests, spec.Requests)
			check("limit", v1.ResourceCPU, got.Limits, old.Limits, spec.Limits)
			check("limit", v1.ResourceMemory, got.Limits, old.Limits, spec.Limits)
			if _, ok := spec.Requests[v1.ResourceMemory]; ok {
				check("request", v1.ResourceMemory, got.Requests, nil, spec.Requests)
			} else {
				check("request", v1.ResourceMemory, got.Requests, nil, s.AllocatedResources)
			}
			for _, pair := range [][2]v1.ResourceList{{got.Requests, spec.Requests}, {got.Limits, spec.Limits}} {
				for name, q := range pair[1] {
					g := pair[0][name]
					if name != v1.ResourceCPU && name != v1.ResourceMemory && g.String() != q.String() {
						t.Fatalf("%s: %s, spec %s", name, js(nil, got), js(nil, spec))
					}
				}
			}
		} else if m := in.PodCgroup.MemoryLimit; m != nil && *m > 0 {
			if q := got.Limits[v1.ResourceMemory]; q.Value() != *m {
				t.Fatalf("memory limit %s, cgroup %d", q.String(), *m)
			}
		}

		if in.Pod.Status.Phase == v1.PodRunning && s.Phase != v1.PodRunning {
			return // the kubelet keeps previous values only from a Running status
		}
		in.OldStatus = &s
		again, err := podstate.Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		if js(nil, again.Resources) != js(nil, s.Resources) || js(nil, again.AllocatedResources) != js(nil, s.AllocatedResources) {
			t.Fatalf("fed back: resources %s became %s", js(nil, s.Resources), js(nil, again.Resources))
		}
	})
}
