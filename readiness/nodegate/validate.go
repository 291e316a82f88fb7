package nodegate

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// reservedTaintPrefixes are the domains whose taints the node lifecycle
// controller and the cloud node controller manage; a readiness evaluator that
// used them would fight those controllers.
var reservedTaintPrefixes = []string{"node.kubernetes.io/", "node.cloudprovider.kubernetes.io/"}

// validateTaintKey checks that key is a qualified name outside the reserved domains.
func validateTaintKey(what, key string) error {
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return fmt.Errorf("nodegate: %s %q: %s: %w", what, key, strings.Join(errs, "; "), ErrInvalidOptions)
	}
	for _, p := range reservedTaintPrefixes {
		if strings.HasPrefix(key, p) {
			return fmt.Errorf("nodegate: %s %q is managed by the node lifecycle or cloud node controller, which would remove it: %w", what, key, ErrInvalidOptions)
		}
	}
	return nil
}

// validateEffect checks that e is a taint effect the API server accepts.
func validateEffect(e v1.TaintEffect) error {
	switch e {
	case v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute:
		return nil
	}
	return fmt.Errorf("nodegate: taint effect %q is not NoSchedule, PreferNoSchedule or NoExecute: %w", e, ErrInvalidOptions)
}

// validateOptions checks defaulted options.
func validateOptions(o Options) error {
	switch o.TaintMode {
	case TaintModeSingle:
		if err := validateTaintKey("taint key", o.TaintKey); err != nil {
			return err
		}
	case TaintModePerGate:
		for _, p := range reservedTaintPrefixes {
			if strings.HasPrefix(o.TaintKeyPrefix, p) || strings.HasPrefix(p, o.TaintKeyPrefix) {
				return fmt.Errorf("nodegate: taint key prefix %q overlaps the reserved %q: %w", o.TaintKeyPrefix, p, ErrInvalidOptions)
			}
		}
	default:
		return fmt.Errorf("nodegate: unknown taint mode %q: %w", o.TaintMode, ErrInvalidOptions)
	}
	if err := validateEffect(o.TaintEffect); err != nil {
		return err
	}
	if errs := validation.IsValidLabelValue(o.TaintValue); len(errs) > 0 {
		return fmt.Errorf("nodegate: taint value %q: %s: %w", o.TaintValue, strings.Join(errs, "; "), ErrInvalidOptions)
	}
	switch o.TerminatingPods {
	case TerminatingExclude, TerminatingNotReady, TerminatingAsIs:
	default:
		return fmt.Errorf("nodegate: unknown terminating-pod policy %q: %w", o.TerminatingPods, ErrInvalidOptions)
	}
	switch o.NoGates {
	case NoGatesReady, NoGatesLeaveTaints:
	default:
		return fmt.Errorf("nodegate: unknown no-gates policy %q: %w", o.NoGates, ErrInvalidOptions)
	}
	return nil
}

// validateGates checks names: non-empty, unique and, in PerGate mode, usable
// in a taint key.
func validateGates(gates []Gate, o Options) error {
	seen := map[string]int{}
	for i, g := range gates {
		if g.Name == "" {
			return fmt.Errorf("nodegate: gates[%d] has no name: %w", i, ErrInvalidGates)
		}
		if j, dup := seen[g.Name]; dup {
			return fmt.Errorf("nodegate: gates[%d] and gates[%d] are both named %q: %w", j, i, g.Name, ErrInvalidGates)
		}
		seen[g.Name] = i
		if o.TaintMode == TaintModePerGate {
			if errs := validation.IsQualifiedName(o.TaintKeyPrefix + g.Name); len(errs) > 0 {
				return fmt.Errorf("nodegate: gate %q makes taint key %q: %s: %w", g.Name, o.TaintKeyPrefix+g.Name, strings.Join(errs, "; "), ErrInvalidGates)
			}
		}
	}
	return nil
}
