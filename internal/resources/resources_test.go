package resources

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"
)

func rl(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func ctr(name string, req, lim v1.ResourceList) v1.Container {
	return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
}

func sidecar(name string, req, lim v1.ResourceList) v1.Container {
	c := ctr(name, req, lim)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// equal compares two lists by value and by their serialized form (the status carries
// the string).
func equal(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		p, ok := b[k]
		if !ok || q.Cmp(p) != 0 || q.String() != p.String() {
			return false
		}
	}
	return true
}

func TestPodRequestsAndLimits(t *testing.T) {
	for _, tc := range []struct {
		name       string
		spec       v1.PodSpec
		opts       Options
		reqs, lims v1.ResourceList
	}{
		{name: "best effort", spec: v1.PodSpec{Containers: []v1.Container{{Name: "pause"}}}, reqs: rl(), lims: rl()},
		{name: "containers add up",
			spec: v1.PodSpec{Containers: []v1.Container{
				ctr("a", rl("cpu", "100m", "memory", "64Mi"), rl("cpu", "200m")),
				ctr("b", rl("cpu", "250m"), rl("cpu", "1", "memory", "1Gi")),
			}},
			reqs: rl("cpu", "350m", "memory", "64Mi"), lims: rl("cpu", "1200m", "memory", "1Gi")},
		{name: "an init container larger than the containers sets the floor",
			spec: v1.PodSpec{
				InitContainers: []v1.Container{ctr("init", rl("cpu", "2", "memory", "16Mi"), rl("cpu", "3"))},
				Containers:     []v1.Container{ctr("app", rl("cpu", "500m", "memory", "128Mi"), rl("cpu", "1"))},
			},
			reqs: rl("cpu", "2", "memory", "128Mi"), lims: rl("cpu", "3")},
		{name: "sidecars add to the containers and to later init containers",
			spec: v1.PodSpec{
				InitContainers: []v1.Container{
					ctr("first", rl("cpu", "1"), nil),
					sidecar("proxy", rl("cpu", "200m", "memory", "100Mi"), rl("memory", "200Mi")),
					ctr("migrate", rl("cpu", "900m"), nil),
				},
				Containers: []v1.Container{ctr("app", rl("cpu", "300m", "memory", "50Mi"), rl("memory", "100Mi"))},
			},
			// containers: 300m+200m = 500m; first alone 1; migrate 900m+200m = 1100m.
			reqs: rl("cpu", "1100m", "memory", "150Mi"), lims: rl("memory", "300Mi")},
		{name: "sidecars as ordinary init containers without the gate",
			opts: Options{NoSidecars: true},
			spec: v1.PodSpec{
				InitContainers: []v1.Container{sidecar("proxy", rl("cpu", "200m"), nil)},
				Containers:     []v1.Container{ctr("app", rl("cpu", "300m"), nil)},
			},
			reqs: rl("cpu", "300m"), lims: rl()},
		{name: "overhead adds to requests, and to limits only where set",
			spec: v1.PodSpec{
				Overhead:   rl("cpu", "250m", "memory", "120Mi"),
				Containers: []v1.Container{ctr("app", rl("cpu", "100m"), rl("cpu", "500m"))},
			},
			reqs: rl("cpu", "350m", "memory", "120Mi"), lims: rl("cpu", "750m")},
		{name: "pod-level resources replace the aggregate of supported resources",
			spec: v1.PodSpec{
				Resources: &v1.ResourceRequirements{
					Requests: rl("cpu", "1", "ephemeral-storage", "1Gi"),
					Limits:   rl("memory", "2Gi", "hugepages-2Mi", "4Mi"),
				},
				Containers: []v1.Container{ctr("app", rl("cpu", "100m", "memory", "1Gi", "ephemeral-storage", "2Gi"), rl("cpu", "200m"))},
			},
			reqs: rl("cpu", "1", "memory", "1Gi", "ephemeral-storage", "2Gi"),
			lims: rl("cpu", "200m", "memory", "2Gi", "hugepages-2Mi", "4Mi")},
		{name: "pod-level resources ignored without the gate",
			opts: Options{NoPodLevelResources: true},
			spec: v1.PodSpec{
				Resources:  &v1.ResourceRequirements{Requests: rl("cpu", "1")},
				Containers: []v1.Container{ctr("app", rl("cpu", "100m"), nil)},
			},
			reqs: rl("cpu", "100m"), lims: rl()},
		{name: "a zero limit stays zero under overhead",
			spec: v1.PodSpec{
				Overhead:   rl("cpu", "10m"),
				Containers: []v1.Container{ctr("app", nil, rl("cpu", "0"))},
			},
			reqs: rl("cpu", "10m"), lims: rl("cpu", "0")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: tc.spec}
			before := pod.DeepCopy()
			if got := PodRequests(pod, tc.opts); !equal(got, tc.reqs) {
				t.Errorf("PodRequests = %v, want %v", got, tc.reqs)
			}
			if got := PodLimits(pod, tc.opts); !equal(got, tc.lims) {
				t.Errorf("PodLimits = %v, want %v", got, tc.lims)
			}
			if !equalPods(before, pod) {
				t.Errorf("the pod was modified")
			}
		})
	}
}

func equalPods(a, b *v1.Pod) bool { return apiequality.Semantic.DeepEqual(a, b) }

// TestResultSharesNothing checks that changing the result leaves the pod alone, even for
// quantities held in big-decimal form.
func TestResultSharesNothing(t *testing.T) {
	big := resource.MustParse("1.5e30")
	pod := &v1.Pod{Spec: v1.PodSpec{
		Resources:  &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: big}},
		Overhead:   v1.ResourceList{"example.com/x": big},
		Containers: []v1.Container{{Name: "a", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: big}}}},
	}}
	before := pod.DeepCopy()
	for _, l := range []v1.ResourceList{PodRequests(pod, Options{}), PodRequests(pod, Options{})} {
		for k, q := range l {
			q.Add(resource.MustParse("1e31"))
			l[k] = q
		}
	}
	for k, q := range before.Spec.Containers[0].Resources.Requests {
		if p := pod.Spec.Containers[0].Resources.Requests[k]; p.Cmp(q) != 0 {
			t.Fatalf("container request %s changed to %s", k, p.String())
		}
	}
	if p, q := pod.Spec.Resources.Requests[v1.ResourceMemory], before.Spec.Resources.Requests[v1.ResourceMemory]; p.Cmp(q) != 0 {
		t.Fatalf("pod-level request changed to %s", p.String())
	}
	if p, q := pod.Spec.Overhead["example.com/x"], before.Spec.Overhead["example.com/x"]; p.Cmp(q) != 0 {
		t.Fatalf("overhead changed to %s", p.String())
	}
}

// names are the resources the property draws from: two pod-level ones, one that is not.
var names = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, "example.com/gpu"}

// drawList draws a list of small milli values, returning it and the values.
func drawList(t *rapid.T, label string) (v1.ResourceList, map[v1.ResourceName]int64) {
	l := v1.ResourceList{}
	m := map[v1.ResourceName]int64{}
	for _, n := range names {
		if rapid.Bool().Draw(t, label+"-has-"+string(n)) {
			v := rapid.Int64Range(0, 5000).Draw(t, label+"-"+string(n))
			l[n] = *resource.NewMilliQuantity(v, resource.DecimalSI)
			m[n] = v
		}
	}
	return l, m
}

// TestPropertyRequestsOracle compares PodRequests with the KEP-753 formula written per
// resource over int64 milli values: max(sum of containers and sidecars, max over init
// containers of their need while running), then pod-level override, then overhead.
func TestPropertyRequestsOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := &v1.Pod{}
		type entry struct {
			vals    map[v1.ResourceName]int64
			sidecar bool
		}
		var regular, inits []entry
		for i := range rapid.IntRange(0, 3).Draw(t, "containers") {
			l, m := drawList(t, fmt.Sprint("c", i))
			pod.Spec.Containers = append(pod.Spec.Containers, ctr(fmt.Sprint("c", i), l, nil))
			regular = append(regular, entry{vals: m})
		}
		for i := range rapid.IntRange(0, 3).Draw(t, "inits") {
			l, m := drawList(t, fmt.Sprint("i", i))
			sc := rapid.Bool().Draw(t, fmt.Sprint("sidecar", i))
			c := ctr(fmt.Sprint("i", i), l, nil)
			if sc {
				c = sidecar(c.Name, l, nil)
			}
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
			inits = append(inits, entry{vals: m, sidecar: sc})
		}
		podLevel, podLevelVals := drawList(t, "pod")
		if len(podLevel) > 0 {
			pod.Spec.Resources = &v1.ResourceRequirements{Requests: podLevel}
		}
		overhead, overheadVals := drawList(t, "overhead")
		if len(overhead) > 0 {
			pod.Spec.Overhead = overhead
		}
		noSidecars := rapid.Bool().Draw(t, "noSidecars")
		got := PodRequests(pod, Options{NoSidecars: noSidecars})

		for _, n := range names {
			named := false
			var sum, sidecars, peak int64
			for _, e := range regular {
				v, ok := e.vals[n]
				named = named || ok
				sum += v
			}
			for _, e := range inits {
				v, ok := e.vals[n]
				named = named || ok
				if e.sidecar && !noSidecars {
					sum += v
					sidecars += v
					peak = max(peak, sidecars)
				} else {
					peak = max(peak, v+sidecars)
				}
			}
			want := max(sum, peak)
			if v, ok := podLevelVals[n]; ok && n != "example.com/gpu" {
				want, named = v, true
			}
			if v, ok := overheadVals[n]; ok {
				want += v
				named = true
			}
			q, ok := got[n]
			if ok != named {
				t.Fatalf("%s present = %v, want %v (got %v)", n, ok, named, got)
			}
			if ok && q.MilliValue() != want {
				t.Fatalf("%s = %dm, want %dm (got %v)", n, q.MilliValue(), want, got)
			}
		}
		if len(got) > len(names) {
			t.Fatalf("unexpected resources in %v", got)
		}
	})
}
