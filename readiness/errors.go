package readiness

// InputError reports input that cannot be evaluated: a nil pod, two containers of one
// name, or (in podstate) two runtime facts of one name. Evaluate, Explain, Phase and
// podstate.Generate return it wrapped with the function's name; test for it with
// errors.As. The API server never accepts a pod with such a spec, so an InputError
// means the caller built the input by hand and got it wrong.
type InputError struct {
	// Namespace and Name identify the pod; both are empty when there is no pod.
	Namespace, Name string
	// Field is the input field at fault, such as "Pod" or "Pod.Spec".
	Field string
	// Problem says what is wrong with it.
	Problem string
}

// Error renders the error as "pod <namespace>/<name>: <field>: <problem>", or
// "<field>: <problem>" when there is no pod.
func (e *InputError) Error() string {
	msg := e.Field + ": " + e.Problem
	if e.Name == "" && e.Namespace == "" {
		return msg
	}
	return "pod " + e.Namespace + "/" + e.Name + ": " + msg
}
