package nodegate

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podstatus/podstatus"
)

// reservedTaintPrefixes are the domains whose taints the node lifecycle
// controller and the cloud node controller manage; a readiness evaluator that
// used them would fight those controllers.
var reservedTaintPrefixes = []string{"node.kubernetes.io/", "node.cloudprovider.kubernetes.io/"}

// The values the API server accepts for a taint's effect, and the values of
// Input's enumerations.
var (
	taintEffects        = []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute}
	taintModes          = []TaintMode{TaintModeSingle, TaintModePerGate}
	terminatingPolicies = []TerminatingPolicy{TerminatingExclude, TerminatingNotReady, TerminatingAsIs}
	noGatesPolicies     = []NoGatesPolicy{NoGatesReady, NoGatesLeaveTaints}
)

// validEffect reports whether e is a taint effect the API server accepts.
func validEffect(e v1.TaintEffect) bool {
	for _, x := range taintEffects {
		if e == x {
			return true
		}
	}
	return false
}

// validateTaintKey checks that key is a qualified name outside the reserved
// domains.
func validateTaintKey(key string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(key) {
		errs = append(errs, field.Invalid(path, key, msg))
	}
	for _, p := range reservedTaintPrefixes {
		if strings.HasPrefix(key, p) {
			errs = append(errs, field.Invalid(path, key, "is managed by the node lifecycle or cloud node controller, which would remove it"))
		}
	}
	return errs
}

// validateInput checks defaulted input: the errors' paths are the Go paths of
// the bad values from Input.
func validateInput(in Input) field.ErrorList {
	p := field.NewPath("Input")
	var errs field.ErrorList
	switch {
	case in.Node == nil:
		errs = append(errs, field.Required(p.Child("Node"), ""))
	case in.Node.Name == "":
		errs = append(errs, field.Required(p.Child("Node", "Name"), ""))
	}
	for i, pod := range in.Pods {
		if pod == nil {
			errs = append(errs, field.Required(p.Child("Pods").Index(i), ""))
		}
	}
	if in.Now.IsZero() {
		errs = append(errs, field.Required(p.Child("Now"), "the time of the evaluation is required"))
	}
	switch in.TaintMode {
	case TaintModeSingle:
		errs = append(errs, validateTaintKey(in.TaintKey, p.Child("TaintKey"))...)
	case TaintModePerGate:
		for _, r := range reservedTaintPrefixes {
			if strings.HasPrefix(in.TaintKeyPrefix, r) || strings.HasPrefix(r, in.TaintKeyPrefix) {
				errs = append(errs, field.Invalid(p.Child("TaintKeyPrefix"), in.TaintKeyPrefix,
					fmt.Sprintf("overlaps %q, managed by the node lifecycle or cloud node controller", r)))
			}
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("TaintMode"), in.TaintMode, taintModes))
	}
	if !validEffect(in.TaintEffect) {
		errs = append(errs, field.NotSupported(p.Child("TaintEffect"), in.TaintEffect, taintEffects))
	}
	for _, msg := range validation.IsValidLabelValue(in.TaintValue) {
		errs = append(errs, field.Invalid(p.Child("TaintValue"), in.TaintValue, msg))
	}
	switch in.TerminatingPods {
	case TerminatingExclude, TerminatingNotReady, TerminatingAsIs:
	default:
		errs = append(errs, field.NotSupported(p.Child("TerminatingPods"), in.TerminatingPods, terminatingPolicies))
	}
	switch in.NoGates {
	case NoGatesReady, NoGatesLeaveTaints:
	default:
		errs = append(errs, field.NotSupported(p.Child("NoGates"), in.NoGates, noGatesPolicies))
	}
	return append(errs, validateGates(in, p.Child("Gates"))...)
}

// validateGates checks the gates' names: non-empty, unique and, in PerGate
// mode, usable in a taint key.
func validateGates(in Input, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, g := range in.Gates {
		name := path.Index(i).Child("Name")
		switch {
		case g.Name == "":
			errs = append(errs, field.Required(name, ""))
			continue
		case seen[g.Name]:
			errs = append(errs, field.Duplicate(name, g.Name))
		}
		seen[g.Name] = true
		if in.TaintMode == TaintModePerGate {
			key := in.TaintKeyPrefix + g.Name
			for _, msg := range validation.IsQualifiedName(key) {
				errs = append(errs, field.Invalid(name, g.Name, fmt.Sprintf("makes taint key %q: %s", key, msg)))
			}
		}
	}
	return errs
}

// inputError wraps errs, if any, as the *podstatus.InputError of function fn
// about subject ("node n1", "rule r"; "" for none).
func inputError(fn, subject string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	if subject != "" {
		return fmt.Errorf("nodegate: %s: %s: %w", fn, subject, &podstatus.InputError{Errs: errs})
	}
	return fmt.Errorf("nodegate: %s: %w", fn, &podstatus.InputError{Errs: errs})
}
