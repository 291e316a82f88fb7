package podstatus_test

import (
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus"
)

func TestInputError(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *podstatus.InputError
		want string
	}{
		{"pod and one problem", &podstatus.InputError{Pod: "ns/web",
			Errs: field.ErrorList{field.Duplicate(field.NewPath("Input", "Pod", "Spec", "Containers").Index(1).Child("Name"), "app")}},
			`pod ns/web: Input.Pod.Spec.Containers[1].Name: Duplicate value: "app"`},
		{"no pod, two problems", &podstatus.InputError{Errs: field.ErrorList{
			field.Required(field.NewPath("Options", "Now"), "the time of the request"),
			field.Required(field.NewPath("Input", "Pod"), "")}},
			`Options.Now: Required value: the time of the request; Input.Pod: Required value`},
		{"no problems listed", &podstatus.InputError{}, "invalid input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
			wrapped := fmt.Errorf("readiness: Evaluate: %w", tc.err)
			if !errors.Is(wrapped, podstatus.ErrInvalidInput) {
				t.Errorf("errors.Is(%v, ErrInvalidInput) = false", wrapped)
			}
			var ie *podstatus.InputError
			if !errors.As(wrapped, &ie) || ie != tc.err {
				t.Errorf("errors.As did not find the InputError")
			}
		})
	}
	if errors.Is(errors.New("invalid input"), podstatus.ErrInvalidInput) {
		t.Error("an unrelated error with the same text matches ErrInvalidInput")
	}
}
