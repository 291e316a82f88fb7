package eviction

import (
	"fmt"
	"math/rand/v2"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// podName is the name of the one pod of every case.
const podName = "target"

// holdFinalizer keeps a deleted pod on the server with its deletionTimestamp.
const holdFinalizer = "podstatus.test/hold"

// caseSpec is one random case: the pod, the PDBs of its namespace and the request.
type caseSpec struct {
	Index int
	Pod   podSpec
	PDBs  []pdbSpec
	Req   reqSpec
}

// podSpec is the state the pod is brought into before the eviction.
type podSpec struct {
	Labels   map[string]string
	NodeName string
	Phase    v1.PodPhase
	// Ready is the status of the Ready condition, "" for none.
	Ready v1.ConditionStatus
	// DisruptionTarget is the status of a DisruptionTarget condition the pod
	// already has, "" for none; DTReason is its reason.
	DisruptionTarget v1.ConditionStatus
	DTReason         string
	Finalizer        bool
	Terminating      bool
}

// condVariant is the DisruptionAllowed condition a PDB status carries.
type condVariant int

const (
	condNone condVariant = iota
	condSufficient
	condInsufficient
	condSyncFailed
	condSyncFailedNoMessage
	condOtherFalse
	condUnknown
)

var condNames = [...]string{"none", "True/SufficientPods", "False/InsufficientPods", "False/SyncFailed", "False/SyncFailed(no message)", "False/Other", "Unknown"}

// pdbSpec is one PDB: its spec, how many spec updates bump its generation, and
// the status written through the status subresource.
type pdbSpec struct {
	Name           string
	Selector       *metav1.LabelSelector
	Policy         *policyv1.UnhealthyPodEvictionPolicyType
	MinAvailable   *intstr.IntOrString
	MaxUnavailable *intstr.IntOrString
	SpecUpdates    int
	// ObservedGen is how status.observedGeneration relates to the generation:
	// "equal", "behind" (generation-1), "zero" or "ahead" (generation+1).
	ObservedGen        string
	DisruptionsAllowed int32
	CurrentHealthy     int32
	DesiredHealthy     int32
	ExpectedPods       int32
	DisruptedPods      int
	// DisruptedSelf puts the evicted pod itself among disruptedPods.
	DisruptedSelf bool
	Condition     condVariant
	// Negative, when not 0, is a negative disruptionsAllowed written straight
	// into etcd after the status (v1 validation rejects it).
	Negative int32
	// InvalidSelector and UnknownPolicy replace the selector with one that
	// does not parse (In without values) and the policy with an unknown
	// value, written straight into etcd.
	InvalidSelector bool
	UnknownPolicy   bool
}

// invalidSelector is a selector LabelSelectorAsSelector rejects.
var invalidSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn}}}

// unknownPolicy is an unhealthyPodEvictionPolicy no server accepts.
const unknownPolicy policyv1.UnhealthyPodEvictionPolicyType = "OnlyOnTuesdays"

// precondition says how a precondition field is set: absent, right (the pod's
// current value), wrong, or the empty string.
type precondition string

const (
	precNone  precondition = ""
	precRight precondition = "right"
	precWrong precondition = "wrong"
	precEmpty precondition = "empty"
)

// reqSpec is the eviction request.
type reqSpec struct {
	OtherName   bool
	QueryDryRun []string
	Body        bool
	BodyDryRun  []string
	UID, RV     precondition
	// EmptyPreconditions sends preconditions: {} when neither field is set.
	EmptyPreconditions bool
	Grace              *int64
	IgnoreStoreRead    *bool
}

// pick returns one of the values, chosen with the given weights.
func pick[T any](r *rand.Rand, weights []int, values []T) T {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := r.IntN(total)
	for i, w := range weights {
		if n < w {
			return values[i]
		}
		n -= w
	}
	return values[len(values)-1]
}

// genCase builds case i from the seed; the same seed and index give the same case.
func genCase(seed uint64, i int) caseSpec {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	c := caseSpec{Index: i}

	c.Pod.Labels = pick(r, []int{4, 3, 1, 1}, []map[string]string{
		{"app": "web"}, {"app": "web", "tier": "front"}, {"app": "db"}, nil,
	})
	c.Pod.NodeName = pick(r, []int{4, 1}, []string{"node-1", ""})
	c.Pod.Phase = pick(r, []int{10, 65, 5, 5, 5}, []v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, v1.PodUnknown})
	c.Pod.Ready = pick(r, []int{2, 5, 2, 1}, []v1.ConditionStatus{"", v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown})
	c.Pod.DisruptionTarget = pick(r, []int{8, 1, 1}, []v1.ConditionStatus{"", v1.ConditionTrue, v1.ConditionFalse})
	c.Pod.DTReason = pick(r, []int{1, 1}, []string{"EvictionByEvictionAPI", "PreemptionByScheduler"})
	c.Pod.Terminating = r.IntN(100) < 8
	c.Pod.Finalizer = c.Pod.Terminating || r.IntN(100) < 20

	n := pick(r, []int{12, 58, 22, 8}, []int{0, 1, 2, 3})
	for j := 0; j < n; j++ {
		c.PDBs = append(c.PDBs, genPDB(r, fmt.Sprintf("pdb-%d", j)))
	}

	c.Req.OtherName = r.IntN(100) < 3
	if r.IntN(100) < 15 {
		c.Req.QueryDryRun = []string{metav1.DryRunAll}
	}
	c.Req.Body = r.IntN(100) < 70
	if c.Req.Body {
		c.Req.BodyDryRun = pick(r, []int{70, 25, 5}, [][]string{nil, {metav1.DryRunAll}, {metav1.DryRunAll, metav1.DryRunAll}})
		c.Req.UID = pick(r, []int{55, 20, 15, 10}, []precondition{precNone, precRight, precWrong, precEmpty})
		c.Req.RV = pick(r, []int{55, 20, 15, 10}, []precondition{precNone, precRight, precWrong, precEmpty})
		c.Req.EmptyPreconditions = r.IntN(100) < 20
		c.Req.Grace = pick(r, []int{70, 15, 15}, []*int64{nil, ptr.To[int64](0), ptr.To[int64](10)})
		c.Req.IgnoreStoreRead = pick(r, []int{90, 5, 5}, []*bool{nil, ptr.To(false), ptr.To(true)})
	}
	return c
}

// genPDB builds one random PDB.
func genPDB(r *rand.Rand, name string) pdbSpec {
	p := pdbSpec{Name: name}
	p.Selector = pick(r, []int{1, 3, 4, 1, 1, 1, 1}, []*metav1.LabelSelector{
		nil,
		{},
		{MatchLabels: map[string]string{"app": "web"}},
		{MatchLabels: map[string]string{"app": "db"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front"}}}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"db"}}}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpDoesNotExist}}},
	})
	p.Policy = pick(r, []int{1, 1, 1}, []*policyv1.UnhealthyPodEvictionPolicyType{nil, ptr.To(policyv1.IfHealthyBudget), ptr.To(policyv1.AlwaysAllow)})
	switch r.IntN(5) {
	case 0:
	case 1:
		p.MinAvailable = ptr.To(intstr.FromInt32(1))
	case 2:
		p.MinAvailable = ptr.To(intstr.FromString("50%"))
	case 3:
		p.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	case 4:
		p.MaxUnavailable = ptr.To(intstr.FromString("100%"))
	}
	p.SpecUpdates = pick(r, []int{6, 3, 1}, []int{0, 1, 2})
	p.ObservedGen = pick(r, []int{14, 3, 1, 2}, []string{"equal", "behind", "zero", "ahead"})
	p.DisruptionsAllowed = pick(r, []int{4, 4, 2}, []int32{0, 1, 2})
	p.CurrentHealthy = int32(r.IntN(4))
	p.DesiredHealthy = int32(r.IntN(4))
	p.ExpectedPods = int32(r.IntN(4))
	p.DisruptedPods = pick(r, []int{40, 15, 15, 8, 22}, []int{0, 1, 3, 2000, 2001})
	p.DisruptedSelf = r.IntN(100) < 15
	if r.IntN(100) < 15 {
		p.Negative = pick(r, []int{3, 1}, []int32{-1, -2})
	}
	p.InvalidSelector = r.IntN(100) < 4
	p.UnknownPolicy = r.IntN(100) < 6
	p.Condition = pick(r, []int{3, 3, 3, 2, 1, 2, 1}, []condVariant{condNone, condSufficient, condInsufficient, condSyncFailed, condSyncFailedNoMessage, condOtherFalse, condUnknown})
	return p
}

// String describes the case in one line, for failure messages.
func (c caseSpec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "case %d: pod{labels=%v node=%q phase=%s ready=%q dt=%q/%s finalizer=%t terminating=%t}",
		c.Index, c.Pod.Labels, c.Pod.NodeName, c.Pod.Phase, c.Pod.Ready, c.Pod.DisruptionTarget, c.Pod.DTReason, c.Pod.Finalizer, c.Pod.Terminating)
	for _, p := range c.PDBs {
		sel := "nil"
		if p.Selector != nil {
			sel = metav1.FormatLabelSelector(p.Selector)
			if sel == "<none>" {
				sel = "{}"
			}
		}
		if p.InvalidSelector {
			sel = "invalid"
		}
		pol := "nil"
		if p.Policy != nil {
			pol = string(*p.Policy)
		}
		if p.UnknownPolicy {
			pol = string(unknownPolicy)
		}
		allowed := p.DisruptionsAllowed
		if p.Negative != 0 {
			allowed = p.Negative
		}
		fmt.Fprintf(&b, " %s{sel=%s policy=%s updates=%d obsGen=%s allowed=%d current=%d desired=%d expected=%d disrupted=%d self=%t cond=%s}",
			p.Name, sel, pol, p.SpecUpdates, p.ObservedGen, allowed, p.CurrentHealthy, p.DesiredHealthy, p.ExpectedPods,
			p.DisruptedPods, p.DisruptedSelf, condNames[p.Condition])
	}
	fmt.Fprintf(&b, " req{otherName=%t queryDryRun=%v body=%t", c.Req.OtherName, c.Req.QueryDryRun, c.Req.Body)
	if c.Req.Body {
		fmt.Fprintf(&b, " bodyDryRun=%v uid=%q rv=%q emptyPre=%t grace=%v ignoreStoreRead=%v",
			c.Req.BodyDryRun, c.Req.UID, c.Req.RV, c.Req.EmptyPreconditions, derefString(c.Req.Grace), derefString(c.Req.IgnoreStoreRead))
	}
	b.WriteString("}")
	return b.String()
}

// derefString prints a pointer's value, or nil.
func derefString[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}
