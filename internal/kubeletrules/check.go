package kubeletrules

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus"
)

// CheckPod returns a *podstatus.InputError when pod cannot be looked at by container
// name: it is nil, or two of its containers (init, regular or ephemeral) share a name.
// The API server never accepts such a pod, and every name-keyed lookup would be
// ambiguous. arg is the Go path of the input struct's Pod field, such as "Input.Pod" or
// "PhaseInput.Pod"; the error's field paths start there ("Input.Pod.Spec.Containers[1].Name").
// A valid pod with a small spec is checked without allocating.
func CheckPod(pod *v1.Pod, arg string) error {
	if pod == nil {
		return &podstatus.InputError{Errs: field.ErrorList{field.Required(field.NewPath(arg), "")}}
	}
	if i, dup := duplicateName(&pod.Spec); dup {
		spec := field.NewPath(arg).Child("Spec")
		var p *field.Path
		var name string
		switch s := &pod.Spec; {
		case i < len(s.InitContainers):
			p, name = spec.Child("InitContainers").Index(i), s.InitContainers[i].Name
		case i < len(s.InitContainers)+len(s.Containers):
			i -= len(s.InitContainers)
			p, name = spec.Child("Containers").Index(i), s.Containers[i].Name
		default:
			i -= len(s.InitContainers) + len(s.Containers)
			p, name = spec.Child("EphemeralContainers").Index(i), s.EphemeralContainers[i].Name
		}
		return &podstatus.InputError{Pod: PodName(pod), Errs: field.ErrorList{field.Duplicate(p.Child("Name"), name)}}
	}
	return nil
}

// PodName is pod's "namespace/name", as podstatus.InputError.Pod names it; "" when both
// are empty.
func PodName(pod *v1.Pod) string {
	if pod.Namespace == "" && pod.Name == "" {
		return ""
	}
	return pod.Namespace + "/" + pod.Name
}

// duplicateName returns the index, in the order init, regular, ephemeral, of the first
// container whose name an earlier container already has, if any.
func duplicateName(spec *v1.PodSpec) (int, bool) {
	n := len(spec.InitContainers) + len(spec.Containers) + len(spec.EphemeralContainers)
	name := func(i int) string {
		if i < len(spec.InitContainers) {
			return spec.InitContainers[i].Name
		}
		i -= len(spec.InitContainers)
		if i < len(spec.Containers) {
			return spec.Containers[i].Name
		}
		return spec.EphemeralContainers[i-len(spec.Containers)].Name
	}
	if n <= 32 {
		for j := 1; j < n; j++ {
			b := name(j)
			for i := 0; i < j; i++ {
				if SameName(name(i), b) {
					return j, true
				}
			}
		}
		return 0, false
	}
	seen := make(map[string]struct{}, n)
	for i := 0; i < n; i++ {
		a := name(i)
		if _, dup := seen[a]; dup {
			return i, true
		}
		seen[a] = struct{}{}
	}
	return 0, false
}

// SameName is a == b. Container names of one pod usually differ in length or in their
// last byte ("app-0", "app-1"), so those are compared before the bytes.
func SameName(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1]) && a == b
}
