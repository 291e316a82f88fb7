package readiness_test

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/readiness"
)

// TestInputErrors: malformed input is a *podstatus.InputError whose field paths start at
// the function's argument, wrapped with the function's name, from every function that
// checks a pod.
func TestInputErrors(t *testing.T) {
	dup := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec:       v1.PodSpec{InitContainers: []v1.Container{{Name: "a"}}, Containers: []v1.Container{{Name: "a"}}},
	}
	call := map[string]struct {
		arg string
		f   func(*v1.Pod) error
	}{
		"Evaluate": {"Input", func(p *v1.Pod) error { _, err := readiness.Evaluate(readiness.Input{Pod: p}); return err }},
		"Explain":  {"Input", func(p *v1.Pod) error { _, err := readiness.Explain(readiness.Input{Pod: p}); return err }},
		"Phase":    {"PhaseInput", func(p *v1.Pod) error { _, err := readiness.Phase(readiness.PhaseInput{Pod: p}); return err }},
	}
	for name, c := range call {
		err := c.f(nil)
		var ie *podstatus.InputError
		if !errors.As(err, &ie) || !errors.Is(err, podstatus.ErrInvalidInput) || len(ie.Errs) != 1 || ie.Errs[0].Field != c.arg+".Pod" ||
			err.Error() != "readiness: "+name+": "+c.arg+".Pod: Required value" {
			t.Errorf("%s(nil pod): %v", name, err)
		}
		err = c.f(dup)
		field := c.arg + ".Pod.Spec.Containers[0].Name"
		if !errors.As(err, &ie) || ie.Pod != "ns/p" || len(ie.Errs) != 1 || ie.Errs[0].Field != field {
			t.Errorf("%s(duplicate names): %v, want a duplicate at %s", name, err, field)
		}
		if got := "readiness: " + name + `: pod ns/p: ` + field + `: Duplicate value: "a"`; err.Error() != got {
			t.Errorf("%s: error %q, want %q", name, err, got)
		}
	}
}
