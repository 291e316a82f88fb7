package conditions

import (
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ValidateType checks that t is a valid pod condition type: a qualified name in label-key
// format, an optional DNS-subdomain prefix and a name of at most 63 characters, such as
// "www.example.com/feature-1". This is the rule the API server applies to readiness-gate
// condition types (Pod Ready++); the built-in types pass it too.
func ValidateType(t v1.PodConditionType) error {
	if t == "" {
		return errors.New("invalid condition type: must not be empty; use a qualified name such as \"www.example.com/feature-1\"")
	}
	if msgs := validation.IsQualifiedName(string(t)); len(msgs) > 0 {
		return fmt.Errorf("invalid condition type %q: %s", t, strings.Join(msgs, "; "))
	}
	return nil
}

// ValidateReadinessGates checks a pod's readiness gates: every condition type must pass
// ValidateType and no type may appear twice. All problems are reported, joined, in gate
// order; nil means the gates are valid.
func ValidateReadinessGates(gates []v1.PodReadinessGate) error {
	var errs []error
	seen := make(map[v1.PodConditionType]int, len(gates))
	for i, g := range gates {
		if err := ValidateType(g.ConditionType); err != nil {
			errs = append(errs, fmt.Errorf("spec.readinessGates[%d]: %w", i, err))
		}
		if j, dup := seen[g.ConditionType]; dup {
			errs = append(errs, fmt.Errorf("spec.readinessGates[%d]: duplicate condition type %q (first at index %d)", i, g.ConditionType, j))
			continue
		}
		seen[g.ConditionType] = i
	}
	return errors.Join(errs...)
}
