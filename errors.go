package podstatus

import (
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ErrInvalidInput is matched, with errors.Is, by every error podstatus returns for input
// it cannot work with: a nil pod, two containers of one name, a zero Now, an invalid
// option. Such an error means the caller built the input wrongly; retrying cannot help.
// Errors of every module of the repository (the root and its nested modules) match it.
var ErrInvalidInput = errors.New("invalid input")

// InputError reports input a function or method of podstatus cannot work with. It
// matches ErrInvalidInput. Test for it with errors.As when you need the fields.
type InputError struct {
	// Pod names the pod the input is about as "namespace/name"; it is empty when there is
	// no pod or the pod itself is at fault.
	Pod string
	// Errs lists every problem found. Each one's Field is the Go path of the bad value,
	// starting at the argument: the argument's type for a struct ("Input.Pod",
	// "Options.Now", "Input.Pod.Spec.Containers[1].Name"), its name for any other
	// argument ("pod.UID").
	Errs field.ErrorList
}

// Error renders the problems as "pod <namespace>/<name>: <field>: <problem>; ...", or
// without the pod part when Pod is empty.
func (e *InputError) Error() string {
	var b strings.Builder
	if e.Pod != "" {
		b.WriteString("pod ")
		b.WriteString(e.Pod)
		b.WriteString(": ")
	}
	if len(e.Errs) == 0 {
		b.WriteString(ErrInvalidInput.Error())
	}
	for i, fe := range e.Errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(fe.Error())
	}
	return b.String()
}

// Is reports whether target is ErrInvalidInput.
func (e *InputError) Is(target error) bool { return target == ErrInvalidInput }
