package nodegate

import (
	"encoding/json"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ConditionPolicy says how a rule combines its conditions.
type ConditionPolicy string

const (
	// ConditionAllOf (the default, also for "") releases the node when every
	// condition is satisfied.
	ConditionAllOf ConditionPolicy = "allOf"
	// ConditionAnyOf releases the node when at least one condition is satisfied.
	ConditionAnyOf ConditionPolicy = "anyOf"
)

// EnforcementMode says whether a rule keeps guarding a node after release.
type EnforcementMode string

const (
	// EnforcementModeContinuous re-adds the taint whenever the conditions regress.
	EnforcementModeContinuous EnforcementMode = "continuous"
	// EnforcementModeBootstrapOnly removes the taint once, marks the node with a completion
	// annotation, and never taints that node again.
	EnforcementModeBootstrapOnly EnforcementMode = "bootstrap-only"
)

// RuleTaintPrefix is the domain every rule's taint key must be in.
const RuleTaintPrefix = "readiness.k8s.io/"

// BootstrapAnnotationPrefix prefixes the node annotation that records a
// bootstrap-only rule's completion: the rule's UID follows (legacy markers use
// the rule's name instead).
const BootstrapAnnotationPrefix = "readiness.k8s.io/bootstrap-completed-"

// ConditionRequirement is one node condition a rule waits for.
type ConditionRequirement struct {
	// Type is the node condition type.
	Type v1.NodeConditionType
	// RequiredStatus is the status that satisfies the requirement.
	RequiredStatus v1.ConditionStatus
	// DefaultStatus stands in for a missing condition; "" means Unknown.
	// Not allowed with bootstrap-only rules.
	DefaultStatus v1.ConditionStatus
}

// Rule is a condition-based readiness rule: nodes its selector matches carry
// Taint until its conditions are met (a NodeReadinessRule spec).
type Rule struct {
	// Name and UID identify the rule; UID names the bootstrap marker.
	Name string
	UID  types.UID
	// Conditions are the requirements (1 to 32, unique types).
	Conditions []ConditionRequirement
	// Policy combines them; "" means ConditionAllOf.
	Policy ConditionPolicy
	// Mode is EnforcementModeContinuous or EnforcementModeBootstrapOnly (required).
	Mode EnforcementMode
	// Taint is the taint the rule keeps on unreleased nodes; its key must be
	// in RuleTaintPrefix.
	Taint v1.Taint
	// NodeSelector selects the nodes the rule applies to; it must not be empty.
	NodeSelector metav1.LabelSelector
	// DryRun makes the rule report what it would do without acting.
	DryRun bool
	// Deleting marks a rule being deleted: its taint is removed from every
	// node it selects and nothing else happens.
	Deleting bool
}

// ConditionResult reports one requirement on one node.
type ConditionResult struct {
	// Type is the requirement's node condition type.
	Type v1.NodeConditionType
	// Found reports whether the node has the condition.
	Found bool
	// CurrentStatus is the node's status for it, Unknown when missing.
	CurrentStatus v1.ConditionStatus
	// EffectiveStatus is CurrentStatus, or the default when missing.
	EffectiveStatus v1.ConditionStatus
	// RequiredStatus and DefaultStatus repeat the requirement.
	RequiredStatus v1.ConditionStatus
	DefaultStatus  v1.ConditionStatus
	// Satisfied reports EffectiveStatus == RequiredStatus.
	Satisfied bool
}

// RuleAction is what a rule does to one node.
type RuleAction string

const (
	// RuleActionNone: nothing changes.
	RuleActionNone RuleAction = "None"
	// RuleActionAddTaint: the rule's taint is added.
	RuleActionAddTaint RuleAction = "AddTaint"
	// RuleActionRemoveTaint: every taint with the rule's key and effect is removed.
	RuleActionRemoveTaint RuleAction = "RemoveTaint"
	// RuleActionMarkBootstrapped: only the completion annotation is added.
	RuleActionMarkBootstrapped RuleAction = "MarkBootstrapped"
)

// RuleResult is a rule's evaluation on one node.
type RuleResult struct {
	// Applies reports whether the rule's selector matches the node.
	Applies bool
	// Skipped explains why an applying rule was not evaluated ("" if it was):
	// "DryRun" or "BootstrapCompleted".
	Skipped string
	// Conditions are the per-requirement results, in rule order.
	Conditions []ConditionResult
	// MissingConditions counts requirements the node has no condition for.
	MissingConditions int
	// Release reports whether the conditions are met (allOf / anyOf).
	Release bool
	// HadTaint reports whether the node carried the rule's taint (key+effect).
	HadTaint bool
	// Action is what the rule does.
	Action RuleAction
	// Taints is the resulting change to the node's taints.
	Taints TaintDiff
	// Annotations are node annotations to add (the bootstrap marker).
	Annotations map[string]string
	// TaintPresent reports whether the node carries the taint afterwards.
	TaintPresent bool
}

// EvaluateRule decides what rule does to node, with the semantics of
// kubernetes-sigs/node-readiness-controller (RuleReadinessController in
// internal/controller): a rule that does not select the node leaves it alone;
// a satisfied rule removes its taint (bootstrap-only rules also write their
// completion annotation); an unsatisfied rule adds its taint unless present (a
// pre-existing taint with the same key and effect is adopted, whatever its
// value). Dry-run rules report conditions but act on nothing.
//
// A bootstrap-only rule whose completion annotation the node carries is
// skipped (Skipped "BootstrapCompleted", RuleActionNone), even when its taint is
// back on the node and its conditions hold. Upstream's two reconcilers
// disagree on that node: the node reconciler
// (processNodeAgainstAllRules in internal/controller/node_controller.go)
// skips the rule through isBootstrapCompleted, while the rule reconciler
// (processAllNodesForRule and evaluateRuleForNode in
// internal/controller/nodereadinessrule_controller.go) checks no marker
// before removing, so after a controller restart or a rule update it removes
// a re-added taint once. Both refuse to add the taint again (addTaintBySpec
// checks nodeHasBootstrapAnnotation). EvaluateRule follows the node
// reconciler, which runs on every node change and matches the documented
// contract of bootstrap-only ("applies configuration only during the first
// reconcile"): a completed node is never touched again, so whoever re-added
// the taint owns it, and the answer does not depend on which reconciler ran.
//
// The error is only for a nil node or a rule the cluster would refuse: a
// *[podstatus.InputError], matching [podstatus.ErrInvalidInput]. Its field
// paths start at RuleInput: "RuleInput.Node" for a nil node, and for the rule
// the paths [ValidateRule] reports below "RuleInput.Rule"
// ("RuleInput.Rule.spec.taint"), so a caller tells the two apart by the
// prefix.
func EvaluateRule(in RuleInput) (RuleResult, error) {
	errs := ValidateRule(in.Rule, field.NewPath("RuleInput", "Rule"))
	if in.Node == nil {
		errs = append(field.ErrorList{field.Required(field.NewPath("RuleInput", "Node"), "")}, errs...)
	}
	if err := inputError("EvaluateRule", ruleSubject(in.Rule), errs); err != nil {
		return RuleResult{}, err
	}
	rule, node := in.Rule, in.Node
	res := RuleResult{Action: RuleActionNone}
	res.HadTaint = hasRuleTaint(node, rule.Taint)
	res.TaintPresent = res.HadTaint
	res.Taints = TaintDiff{NewTaints: append([]v1.Taint(nil), node.Spec.Taints...)}
	if !ruleSelects(rule, node) {
		return res, nil
	}
	res.Applies = true
	owned := func(t *v1.Taint) bool { return t.MatchTaint(&rule.Taint) }
	if rule.Deleting {
		res.Taints = diffTaints(node.Spec.Taints, nil, owned, false)
		if !res.Taints.Empty() {
			res.Action = RuleActionRemoveTaint
		}
		res.TaintPresent = false
		return res, nil
	}
	res.Conditions, res.MissingConditions, res.Release = evaluateConditions(rule, node)
	if rule.DryRun {
		res.Skipped = "DryRun"
		return res, nil
	}
	if rule.Mode == EnforcementModeBootstrapOnly && bootstrapCompleted(rule, node) {
		res.Skipped = "BootstrapCompleted"
		return res, nil
	}
	switch {
	case res.Release && res.HadTaint:
		res.Action = RuleActionRemoveTaint
		res.Taints = diffTaints(node.Spec.Taints, nil, owned, false)
		res.TaintPresent = false
		if rule.Mode == EnforcementModeBootstrapOnly {
			res.Annotations = bootstrapMarker(rule)
		}
	case !res.Release && !res.HadTaint:
		res.Action = RuleActionAddTaint
		res.Taints = diffTaints(node.Spec.Taints, []v1.Taint{rule.Taint}, owned, false)
		res.TaintPresent = true
	case res.Release && !res.HadTaint && rule.Mode == EnforcementModeBootstrapOnly:
		res.Action = RuleActionMarkBootstrapped
		res.Annotations = bootstrapMarker(rule)
	}
	return res, nil
}

// DryRunResult counts what a dry-run rule would do across nodes.
type DryRunResult struct {
	// AffectedNodes counts the nodes the rule selects.
	AffectedNodes int
	// TaintsToAdd counts selected nodes that are unsatisfied and untainted.
	TaintsToAdd int
	// TaintsToRemove counts selected nodes that are satisfied and tainted.
	TaintsToRemove int
	// RiskyOperations counts selected nodes missing a required condition.
	RiskyOperations int
	// Summary is the controller's one-line summary.
	Summary string
}

// DryRun reports what rule would do to nodes, as the controller's dry-run
// status does (processDryRun in
// internal/controller/nodereadinessrule_controller.go). Bootstrap markers are
// ignored, as upstream.
//
// The error is only for a nil node or a rule the cluster would refuse: a
// *[podstatus.InputError], matching [podstatus.ErrInvalidInput], whose field
// paths start at DryRunInput ("DryRunInput.Nodes[2]"; for the rule, the paths
// [ValidateRule] reports below "DryRunInput.Rule").
func DryRun(in DryRunInput) (DryRunResult, error) {
	errs := ValidateRule(in.Rule, field.NewPath("DryRunInput", "Rule"))
	for i, n := range in.Nodes {
		if n == nil {
			errs = append(errs, field.Required(field.NewPath("DryRunInput", "Nodes").Index(i), ""))
		}
	}
	if err := inputError("DryRun", ruleSubject(in.Rule), errs); err != nil {
		return DryRunResult{}, err
	}
	rule := in.Rule
	var r DryRunResult
	for _, n := range in.Nodes {
		if !ruleSelects(rule, n) {
			continue
		}
		r.AffectedNodes++
		_, missing, release := evaluateConditions(rule, n)
		has := hasRuleTaint(n, rule.Taint)
		switch {
		case release && has:
			r.TaintsToRemove++
		case !release && !has:
			r.TaintsToAdd++
		}
		if missing > 0 {
			r.RiskyOperations++
		}
	}
	var parts []string
	if r.TaintsToAdd > 0 {
		parts = append(parts, fmt.Sprintf("would add %d taints", r.TaintsToAdd))
	}
	if r.TaintsToRemove > 0 {
		parts = append(parts, fmt.Sprintf("would remove %d taints", r.TaintsToRemove))
	}
	if r.RiskyOperations > 0 {
		parts = append(parts, fmt.Sprintf("%d nodes have missing conditions", r.RiskyOperations))
	}
	r.Summary = "No changes needed"
	if len(parts) > 0 {
		r.Summary = strings.Join(parts, ", ")
	}
	return r, nil
}

// ruleSubject names rule in an error, "" when it has no name.
func ruleSubject(rule Rule) string {
	if rule.Name == "" {
		return ""
	}
	return fmt.Sprintf("rule %q", rule.Name)
}

// evaluateConditions evaluates the requirements on node.
func evaluateConditions(rule Rule, node *v1.Node) ([]ConditionResult, int, bool) {
	var out []ConditionResult
	missing, all, any := 0, true, false
	for _, c := range rule.Conditions {
		r := ConditionResult{Type: c.Type, RequiredStatus: c.RequiredStatus, DefaultStatus: c.DefaultStatus, CurrentStatus: v1.ConditionUnknown}
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == c.Type {
				r.Found = true
				r.CurrentStatus = node.Status.Conditions[i].Status
				break
			}
		}
		r.EffectiveStatus = r.CurrentStatus
		if !r.Found {
			missing++
			r.EffectiveStatus = v1.ConditionUnknown
			if c.DefaultStatus != "" {
				r.EffectiveStatus = c.DefaultStatus
			}
		}
		r.Satisfied = r.EffectiveStatus == c.RequiredStatus
		all = all && r.Satisfied
		any = any || r.Satisfied
		out = append(out, r)
	}
	if rule.Policy == ConditionAnyOf {
		return out, missing, any
	}
	return out, missing, all
}

// ruleSelects reports whether the rule's node selector matches the node.
// ValidateRule has refused unparsable selectors; should one get here anyway,
// it matches nothing.
func ruleSelects(rule Rule, node *v1.Node) bool {
	sel, err := metav1.LabelSelectorAsSelector(&rule.NodeSelector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(node.Labels))
}

// hasRuleTaint reports whether the node has a taint with the rule taint's key
// and effect (any value).
func hasRuleTaint(node *v1.Node, taint v1.Taint) bool {
	for i := range node.Spec.Taints {
		if node.Spec.Taints[i].MatchTaint(&taint) {
			return true
		}
	}
	return false
}

// BootstrapAnnotationKey is the completion annotation a bootstrap-only rule
// writes on a node: BootstrapAnnotationPrefix + UID (+ name when the UID is
// empty, the legacy form).
func BootstrapAnnotationKey(rule Rule) string {
	if rule.UID != "" {
		return BootstrapAnnotationPrefix + string(rule.UID)
	}
	return BootstrapAnnotationPrefix + rule.Name
}

// bootstrapCompleted reports whether the node carries the rule's completion
// marker, under the UID or the legacy name key.
func bootstrapCompleted(rule Rule, node *v1.Node) bool {
	if _, ok := node.Annotations[BootstrapAnnotationKey(rule)]; ok {
		return true
	}
	_, ok := node.Annotations[BootstrapAnnotationPrefix+rule.Name]
	return ok
}

// bootstrapMarker is the annotation written on completion.
func bootstrapMarker(rule Rule) map[string]string {
	v, _ := json.Marshal(map[string]string{"rule-name": rule.Name})
	return map[string]string{BootstrapAnnotationKey(rule): string(v)}
}
