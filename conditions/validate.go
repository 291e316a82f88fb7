package conditions

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateType checks that t is a valid pod condition type, as the API server checks the
// condition type of a readiness gate (ValidateQualifiedName in
// pkg/apis/core/validation/validation.go): a qualified name in label-key format, an
// optional DNS-subdomain prefix and a name of at most 63 characters, such as
// "www.example.com/feature-1". The built-in types pass it too. The errors are reported at
// fldPath, as the API server reports them.
func ValidateType(t v1.PodConditionType, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(t)) {
		errs = append(errs, field.Invalid(fldPath, string(t), msg))
	}
	return errs
}

// ValidateReadinessGates checks a pod's readiness gates as the API server does
// (validateReadinessGates in pkg/apis/core/validation/validation.go): every condition type
// must pass ValidateType, at fldPath.Index(i).Child("conditionType"). Pass
// field.NewPath("spec", "readinessGates") for a pod's spec. The server accepts a condition
// type listed twice, and so does this (the readiness engine reads the first condition of
// each type).
func ValidateReadinessGates(gates []v1.PodReadinessGate, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, g := range gates {
		errs = append(errs, ValidateType(g.ConditionType, fldPath.Index(i).Child("conditionType"))...)
	}
	return errs
}
