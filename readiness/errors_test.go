package readiness_test

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/readiness"
)

// TestInputErrors: malformed input is an *InputError, wrapped with the function's name,
// from every function that checks a pod.
func TestInputErrors(t *testing.T) {
	dup := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec:       v1.PodSpec{InitContainers: []v1.Container{{Name: "a"}}, Containers: []v1.Container{{Name: "a"}}},
	}
	call := map[string]func(*v1.Pod) error{
		"Evaluate": func(p *v1.Pod) error { _, err := readiness.Evaluate(readiness.Input{Pod: p}); return err },
		"Explain":  func(p *v1.Pod) error { _, err := readiness.Explain(readiness.Input{Pod: p}); return err },
		"Phase":    func(p *v1.Pod) error { _, err := readiness.Phase(readiness.PhaseInput{Pod: p}); return err },
	}
	for name, f := range call {
		err := f(nil)
		var ie *readiness.InputError
		if !errors.As(err, &ie) || ie.Field != "Pod" || err.Error() != "readiness: "+name+": Pod: missing (nil)" {
			t.Errorf("%s(nil pod): %v", name, err)
		}
		err = f(dup)
		want := readiness.InputError{Namespace: "ns", Name: "p", Field: "Pod.Spec", Problem: `duplicate container name "a"`}
		if !errors.As(err, &ie) || *ie != want {
			t.Errorf("%s(duplicate names): %v, want %+v", name, err, want)
		}
		if got := "readiness: " + name + `: pod ns/p: Pod.Spec: duplicate container name "a"`; err.Error() != got {
			t.Errorf("%s: error %q, want %q", name, err, got)
		}
	}
}
