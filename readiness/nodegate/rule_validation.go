package nodegate

import (
	"regexp"
	"strings"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits of a NodeReadinessRule, from the kubebuilder markers of
// kubernetes-sigs/node-readiness-controller api/v1alpha1/nodereadinessrule_types.go
// (rendered in config/crd/bases/readiness.node.x-k8s.io_nodereadinessrules.yaml).
const (
	// MaxRuleConditions is spec.conditions' MaxItems (MinItems is 1).
	MaxRuleConditions = 32
	// MaxConditionTypeLength is spec.conditions[].type's MaxLength, in
	// characters (MinLength is 1).
	MaxConditionTypeLength = 316
	// MaxRuleTaintKeyLength bounds spec.taint.key, in characters.
	MaxRuleTaintKeyLength = 253
	// MaxRuleTaintNameLength bounds the part of spec.taint.key after
	// RuleTaintPrefix, in characters.
	MaxRuleTaintNameLength = 63
	// MaxRuleTaintValueLength bounds spec.taint.value, in characters.
	MaxRuleTaintValueLength = 63
)

// ruleTaintName is the CEL pattern of the taint key's name part.
var ruleTaintName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)

var (
	conditionStatuses = []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown}
	enforcementModes  = []EnforcementMode{EnforcementModeBootstrapOnly, EnforcementModeContinuous}
	conditionPolicies = []ConditionPolicy{ConditionAllOf, ConditionAnyOf}
)

// ValidateRule reports what a cluster running node-readiness-controller says
// when rule is created as a NodeReadinessRule: nil when the cluster accepts
// it, otherwise the errors it answers, with the same field paths below
// fldPath, the path of the object (nil for an object of its own, whose errors
// are at metadata.name, spec.conditions[0].type, spec.taint,
// spec.nodeSelector, ...; field.NewPath("items").Index(i) for a list's item).
// The checks run in the cluster's three stages, and a stage runs only
// when the earlier ones let it, as in the API server:
//
//  1. The API server's object checks: metadata.name is a DNS subdomain
//     (NameIsDNSSubdomain, apiextensions-apiserver
//     pkg/registry/customresource/validator.go), then the CRD's OpenAPI
//     schema (config/crd/bases/readiness.node.x-k8s.io_nodereadinessrules.yaml
//     in kubernetes-sigs/node-readiness-controller): required fields,
//     1 to 32 conditions, condition types 1 to 316 characters and unique
//     (listType=map), the enums of requiredStatus, defaultStatus,
//     enforcementMode and conditionPolicy, and the required fields a zero Go
//     value leaves out of the JSON (conditions, type, requiredStatus,
//     enforcementMode, taint, nodeSelector).
//  2. The CRD's CEL rules on spec.taint (api/v1alpha1/nodereadinessrule_types.go),
//     only when stage 1 found no error of a type that blocks them (Required,
//     NotSupported, TooLong, TooMany; customResourceStrategy.Validate and
//     hasBlockingErr in pkg/registry/customresource/strategy.go): the key is
//     "readiness.k8s.io/<name>" with one "/", at most 253 characters, a name
//     of 1 to 63 characters matching ^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$,
//     a value of at most 63 characters, and an effect among NoSchedule,
//     PreferNoSchedule and NoExecute. CEL counts characters (Unicode code
//     points), not bytes. These errors all have the path spec.taint, the
//     object the rules are attached to.
//  3. The validating webhook (internal/webhook/nodereadinessgaterule_webhook.go,
//     validateSpec), only when the API server accepted the object: the node
//     selector parses as a label selector and is not empty, and
//     bootstrap-only rules use neither defaultStatus nor anyOf.
//
// Update-only rules (the CEL immutability rules) and the webhook's check
// against the other rules in the cluster (validateTaintConflicts: same taint
// key and effect with overlapping selectors) need state ValidateRule does not
// have and are not checked. Messages follow the cluster's where it matters;
// the verdict and the field paths are what callers can rely on.
func ValidateRule(rule Rule, fldPath *field.Path) field.ErrorList {
	errs := validateRuleSchema(rule, fldPath)
	if blocksCEL(errs) {
		return errs
	}
	errs = append(errs, validateRuleTaintCEL(rule.Taint, fldPath.Child("spec", "taint"))...)
	if len(errs) > 0 {
		return errs
	}
	return validateRuleWebhook(rule, fldPath.Child("spec"))
}

// validateRuleSchema is stage 1: the object metadata and the CRD's OpenAPI schema.
func validateRuleSchema(rule Rule, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	name := fldPath.Child("metadata", "name")
	if rule.Name == "" {
		errs = append(errs, field.Required(name, "name or generateName is required"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(rule.Name) {
			errs = append(errs, field.Invalid(name, rule.Name, msg))
		}
	}

	spec := fldPath.Child("spec")
	conds := spec.Child("conditions")
	switch n := len(rule.Conditions); {
	case rule.Conditions == nil: // serialized as null, which the API server drops
		errs = append(errs, field.Required(conds, ""))
	case n == 0:
		errs = append(errs, field.Invalid(conds, n, "should have at least 1 items"))
	case n > MaxRuleConditions:
		errs = append(errs, field.TooMany(conds, n, MaxRuleConditions))
	}
	seen := map[v1.NodeConditionType]bool{}
	for i, c := range rule.Conditions {
		p := conds.Index(i)
		switch {
		case c.Type == "":
			errs = append(errs, field.Required(p.Child("type"), ""))
		case utf8.RuneCountInString(string(c.Type)) > MaxConditionTypeLength:
			errs = append(errs, field.TooLong(p.Child("type"), c.Type, MaxConditionTypeLength))
		case seen[c.Type]:
			errs = append(errs, field.Duplicate(p, map[string]any{"type": string(c.Type)}))
		}
		seen[c.Type] = true
		if c.RequiredStatus == "" {
			errs = append(errs, field.Required(p.Child("requiredStatus"), ""))
		} else if !validStatus(c.RequiredStatus) {
			errs = append(errs, field.NotSupported(p.Child("requiredStatus"), c.RequiredStatus, conditionStatuses))
		}
		if c.DefaultStatus != "" && !validStatus(c.DefaultStatus) {
			errs = append(errs, field.NotSupported(p.Child("defaultStatus"), c.DefaultStatus, conditionStatuses))
		}
	}

	switch rule.Mode {
	case "":
		errs = append(errs, field.Required(spec.Child("enforcementMode"), ""))
	case EnforcementModeBootstrapOnly, EnforcementModeContinuous:
	default:
		errs = append(errs, field.NotSupported(spec.Child("enforcementMode"), rule.Mode, enforcementModes))
	}
	switch rule.Policy {
	case "", ConditionAllOf, ConditionAnyOf:
	default:
		errs = append(errs, field.NotSupported(spec.Child("conditionPolicy"), rule.Policy, conditionPolicies))
	}

	// taint and nodeSelector are omitted from the JSON when zero (omitzero),
	// and then missing; their own fields are always sent (key, effect,
	// operator have no omitempty), so an empty key or operator is left to the
	// CEL rules and the webhook.
	if rule.Taint == (v1.Taint{}) {
		errs = append(errs, field.Required(spec.Child("taint"), ""))
	}
	if rule.NodeSelector.MatchLabels == nil && rule.NodeSelector.MatchExpressions == nil {
		errs = append(errs, field.Required(spec.Child("nodeSelector"), ""))
	}
	return errs
}

// blocksCEL reports whether the API server skips the CRD's CEL rules because
// of errs (hasBlockingErr in apiextensions-apiserver
// pkg/registry/customresource/strategy.go).
func blocksCEL(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong,
			field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// validateRuleTaintCEL is stage 2: the x-kubernetes-validations rules of
// spec.taint, each reported with its own message at spec.taint, as the API
// server reports a failed CEL rule (a rule that cannot be evaluated, such as
// split('/')[1] of a key without "/", fails too). path is spec.taint's.
func validateRuleTaintCEL(t v1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	fail := func(msg string) { errs = append(errs, field.Invalid(path, "object", msg)) }
	if !strings.HasPrefix(t.Key, RuleTaintPrefix) {
		fail("taint key must start with 'readiness.k8s.io/'")
	}
	if utf8.RuneCountInString(t.Key) > MaxRuleTaintKeyLength {
		fail("taint key length must be at most 253 characters")
	}
	parts := strings.Split(t.Key, "/")
	if len(parts) != 2 {
		fail("taint key must have exactly one '/' separator (prefix/name format)")
	}
	if len(parts) < 2 {
		fail("taint key name part must be 1-63 characters")
		fail("taint key name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character")
	} else {
		if n := utf8.RuneCountInString(parts[1]); n == 0 || n > MaxRuleTaintNameLength {
			fail("taint key name part must be 1-63 characters")
		}
		if !ruleTaintName.MatchString(parts[1]) {
			fail("taint key name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character")
		}
	}
	if utf8.RuneCountInString(t.Value) > MaxRuleTaintValueLength {
		fail("taint value length must be at most 63 characters")
	}
	if !validEffect(t.Effect) {
		fail("taint effect must be one of 'NoSchedule', 'PreferNoSchedule', 'NoExecute'")
	}
	return errs
}

// validateRuleWebhook is stage 3: validateSpec of the controller's webhook on
// create. spec is the path of the rule's spec.
func validateRuleWebhook(rule Rule, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	sel, err := metav1.LabelSelectorAsSelector(&rule.NodeSelector)
	if err != nil {
		errs = append(errs, field.Invalid(spec.Child("nodeSelector"), rule.NodeSelector, err.Error()))
	}
	if sel != nil && sel.Empty() {
		errs = append(errs, field.Required(spec.Child("nodeSelector"), "nodeSelector must not be empty"))
	}
	if rule.Mode == EnforcementModeBootstrapOnly {
		for i, c := range rule.Conditions {
			if c.DefaultStatus != "" {
				errs = append(errs, field.Forbidden(spec.Child("conditions").Index(i).Child("defaultStatus"),
					"defaultStatus should not be used with bootstrap-only enforcementMode"))
			}
		}
		if rule.Policy == ConditionAnyOf {
			errs = append(errs, field.Forbidden(spec.Child("conditionPolicy"),
				"anyOf conditionPolicy is not supported with bootstrap-only enforcementMode"))
		}
	}
	return errs
}

func validStatus(s v1.ConditionStatus) bool {
	return s == v1.ConditionTrue || s == v1.ConditionFalse || s == v1.ConditionUnknown
}
