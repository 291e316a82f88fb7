package kubeletrules_test

import (
	"errors"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/internal/kubeletrules"
)

func names(ns ...string) []v1.Container {
	out := make([]v1.Container, len(ns))
	for i, n := range ns {
		out[i].Name = n
	}
	return out
}

// TestCheckPod: the field path of a duplicate names the second container of the name, in
// the list it is in; a nil pod is a required value.
func TestCheckPod(t *testing.T) {
	meta := metav1.ObjectMeta{Namespace: "ns", Name: "p"}
	many := make([]string, 40) // past the small-spec loop
	for i := range many {
		many[i] = fmt.Sprint("c", i)
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string // the error; "" for none
	}{
		{"nil", nil, "Input.Pod: Required value"},
		{"fine", &v1.Pod{ObjectMeta: meta, Spec: v1.PodSpec{InitContainers: names("i"), Containers: names("a", "b")}}, ""},
		{"empty", &v1.Pod{}, ""},
		{"regular", &v1.Pod{ObjectMeta: meta, Spec: v1.PodSpec{Containers: names("a", "b", "a")}},
			`pod ns/p: Input.Pod.Spec.Containers[2].Name: Duplicate value: "a"`},
		{"init and regular", &v1.Pod{ObjectMeta: meta, Spec: v1.PodSpec{InitContainers: names("x", "a"), Containers: names("b", "a")}},
			`pod ns/p: Input.Pod.Spec.Containers[1].Name: Duplicate value: "a"`},
		{"init", &v1.Pod{ObjectMeta: meta, Spec: v1.PodSpec{InitContainers: names("a", "a")}},
			`pod ns/p: Input.Pod.Spec.InitContainers[1].Name: Duplicate value: "a"`},
		{"ephemeral", &v1.Pod{ObjectMeta: meta, Spec: v1.PodSpec{Containers: names("a"),
			EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "a"}}}}},
			`pod ns/p: Input.Pod.Spec.EphemeralContainers[0].Name: Duplicate value: "a"`},
		{"large", &v1.Pod{ObjectMeta: meta, Spec: v1.PodSpec{Containers: names(append(many, "c3")...)}},
			`pod ns/p: Input.Pod.Spec.Containers[40].Name: Duplicate value: "c3"`},
		{"large and fine", &v1.Pod{ObjectMeta: meta, Spec: v1.PodSpec{Containers: names(many...)}}, ""},
	} {
		err := kubeletrules.CheckPod(tc.pod, "Input.Pod")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		case tc.want != "":
			var ie *podstatus.InputError
			if !errors.As(err, &ie) || !errors.Is(err, podstatus.ErrInvalidInput) {
				t.Errorf("%s: %T is not a *podstatus.InputError", tc.name, err)
			}
		}
	}
}

// TestCheckPodDoesNotAllocate: a valid small pod is checked without allocating, so that
// readiness.Evaluate of a ready pod does not allocate.
func TestCheckPodDoesNotAllocate(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{InitContainers: names("i0", "i1"), Containers: names("app-0", "app-1", "app-2")}}
	if n := testing.AllocsPerRun(100, func() {
		if kubeletrules.CheckPod(pod, "Input.Pod") != nil {
			t.Fatal("error")
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestIsSidecar(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	never := v1.ContainerRestartPolicyNever
	for _, tc := range []struct {
		c    v1.Container
		r    kubeletrules.Rules
		want bool
	}{
		{v1.Container{RestartPolicy: &always}, kubeletrules.Rules{}, true},
		{v1.Container{RestartPolicy: &always}, kubeletrules.Rules{Features: features.Set{NoSidecars: true}}, false},
		{v1.Container{RestartPolicy: &never}, kubeletrules.Rules{}, false},
		{v1.Container{}, kubeletrules.Rules{}, false},
	} {
		if got := tc.r.IsSidecar(&tc.c); got != tc.want {
			t.Errorf("IsSidecar(%v, %+v) = %v", tc.c.RestartPolicy, tc.r.Features, got)
		}
	}
}
