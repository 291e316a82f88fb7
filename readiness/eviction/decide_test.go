package eviction

import (
	"errors"
	"net/http"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestDecideEdgeCases covers rules of pkg/registry/core/pod/storage/eviction.go
// (v1.37.0) that upstream's unit tests in eviction_test.go do not reach: which
// PDBs apply, when the budget is checked at all, and the request checks.
func TestDecideEdgeCases(t *testing.T) {
	ready := status(v1.ConditionTrue)
	notReady := status(v1.ConditionFalse)
	zeroTime := metav1.Time{}
	other := testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 5})
	other.Name = "bar"
	stale := testPDB(selA(), policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 3})
	stale.Generation = 2

	cases := []struct {
		name  string
		pod   *v1.Pod
		pdbs  []policyv1.PodDisruptionBudget
		opts  Input
		check func(t *testing.T, d Decision)
	}{
		{
			// Regression: Decide used to predict status line 201 here; a live
			// v1.37.0 server answers 500 (internal/upstream/eviction).
			name: "two PDBs select the pod: 500 in the body and on the wire, nothing deleted",
			pod:  testPod("p", v1.PodRunning, ready),
			pdbs: []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 5}), other},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathMultiplePDBs, false, 500)
				if d.Status.Code != http.StatusInternalServerError || d.Status.Message != MessageMultiplePDBs || len(d.MatchedPDBs) != 2 || d.DeleteOptions != nil {
					t.Errorf("got %+v", d)
				}
				if d.Status.Reason != "" || d.Status.Status != metav1.StatusFailure {
					t.Errorf("status = %+v", d.Status)
				}
			},
		},
		{
			name: "a PDB of another namespace is ignored",
			pod:  testPod("p", v1.PodRunning, ready),
			pdbs: func() []policyv1.PodDisruptionBudget {
				p := testPDB(selA(), policyv1.PodDisruptionBudgetStatus{})
				p.Namespace = "elsewhere"
				return []policyv1.PodDisruptionBudget{p}
			}(),
			check: func(t *testing.T, d Decision) { want(t, d, PathNoPDB, true, 201) },
		},
		{
			name:  "a nil selector matches nothing",
			pod:   testPod("p", v1.PodRunning, ready),
			pdbs:  []policyv1.PodDisruptionBudget{testPDB(nil, policyv1.PodDisruptionBudgetStatus{})},
			check: func(t *testing.T, d Decision) { want(t, d, PathNoPDB, true, 201) },
		},
		{
			name: "an invalid selector silently matches nothing",
			pod:  testPod("p", v1.PodRunning, ready),
			pdbs: []policyv1.PodDisruptionBudget{testPDB(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "illegal"}}},
				policyv1.PodDisruptionBudgetStatus{})},
			check: func(t *testing.T, d Decision) { want(t, d, PathNoPDB, true, 201) },
		},
		{
			name: "an empty selector matches a pod without labels",
			pod: func() *v1.Pod {
				p := testPod("p", v1.PodRunning, ready)
				p.Labels = nil
				return p
			}(),
			pdbs:  []policyv1.PodDisruptionBudget{testPDB(&metav1.LabelSelector{}, policyv1.PodDisruptionBudgetStatus{})},
			check: func(t *testing.T, d Decision) { want(t, d, PathBudgetExhausted, false, 429) },
		},
		{
			name: "stale PDB status: 429 still being processed, Retry-After 10",
			pod:  testPod("p", v1.PodRunning, ready),
			pdbs: []policyv1.PodDisruptionBudget{stale},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathPDBStale, false, 429)
				if retryAfter(d) != 10 || d.Status.Details.Causes[0].Message != "The disruption budget foo is still being processed by the server." {
					t.Errorf("got %+v", d.Status)
				}
			},
		},
		{
			name: "IfHealthyBudget shortcut ignores a stale status",
			pod:  testPod("p", v1.PodRunning, notReady),
			pdbs: func() []policyv1.PodDisruptionBudget {
				p := *stale.DeepCopy()
				p.Status.CurrentHealthy, p.Status.DesiredHealthy = 2, 2
				return []policyv1.PodDisruptionBudget{p}
			}(),
			check: func(t *testing.T, d Decision) { want(t, d, PathUnhealthyIfHealthyBudget, true, 201) },
		},
		{
			name: "AlwaysAllow ignores stale, negative and overflowing status for an unhealthy pod",
			pod:  testPod("p", v1.PodRunning, notReady),
			pdbs: func() []policyv1.PodDisruptionBudget {
				p := *stale.DeepCopy()
				p.Spec.UnhealthyPodEvictionPolicy = policyPtr(policyv1.AlwaysAllow)
				p.Status.DisruptionsAllowed = -3
				p.Status.DisruptedPods = makeDisruptedPods(MaxDisruptedPodSize + 5)
				return []policyv1.PodDisruptionBudget{p}
			}(),
			check: func(t *testing.T, d Decision) {
				want(t, d, PathUnhealthyAlwaysAllow, true, 201)
				if d.PDBStatus != nil || !d.ResourceVersionPrecondition {
					t.Errorf("got %+v", d)
				}
			},
		},
		{
			name: "AlwaysAllow does not change how a healthy pod is treated",
			pod:  testPod("p", v1.PodRunning, ready),
			pdbs: func() []policyv1.PodDisruptionBudget {
				p := testPDB(selA(), policyv1.PodDisruptionBudgetStatus{})
				p.Spec.UnhealthyPodEvictionPolicy = policyPtr(policyv1.AlwaysAllow)
				return []policyv1.PodDisruptionBudget{p}
			}(),
			check: func(t *testing.T, d Decision) { want(t, d, PathBudgetExhausted, false, 429) },
		},
		{
			name:  "exactly MaxDisruptedPodSize entries are still accepted",
			pod:   testPod("p", v1.PodRunning, ready),
			pdbs:  []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, DisruptedPods: makeDisruptedPods(MaxDisruptedPodSize)})},
			check: func(t *testing.T, d Decision) { want(t, d, PathBudgetAllowed, true, 201) },
		},
		{
			name: "unknown policy value behaves like IfHealthyBudget (parity)",
			pod:  testPod("p", v1.PodRunning, notReady),
			pdbs: func() []policyv1.PodDisruptionBudget {
				p := testPDB(selA(), policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 2, DesiredHealthy: 2})
				p.Spec.UnhealthyPodEvictionPolicy = policyPtr("Sometimes")
				return []policyv1.PodDisruptionBudget{p}
			}(),
			check: func(t *testing.T, d Decision) { want(t, d, PathUnhealthyIfHealthyBudget, true, 201) },
		},
		{
			name: "unknown policy value disallows the shortcut with StrictUnknownPolicy",
			pod:  testPod("p", v1.PodRunning, notReady),
			pdbs: func() []policyv1.PodDisruptionBudget {
				p := testPDB(selA(), policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 2, DesiredHealthy: 2})
				p.Spec.UnhealthyPodEvictionPolicy = policyPtr("Sometimes")
				return []policyv1.PodDisruptionBudget{p}
			}(),
			opts:  Input{StrictUnknownPolicy: true},
			check: func(t *testing.T, d Decision) { want(t, d, PathBudgetExhausted, false, 429) },
		},
		{
			name: "desiredHealthy 0 never takes the IfHealthyBudget shortcut",
			pod:  testPod("p", v1.PodRunning, notReady),
			pdbs: []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 3})},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathBudgetExhausted, false, 429)
				if d.Status.Details.Causes[0].Message != "The disruption budget foo does not allow evicting pods currently" {
					t.Errorf("cause = %q", d.Status.Details.Causes[0].Message)
				}
			},
		},
		{
			name: "conflicting dry-run values: 500 Unknown",
			pod:  testPod("p", v1.PodRunning, ready),
			opts: Input{DryRun: []string{"All"}, DeleteOptions: &metav1.DeleteOptions{DryRun: []string{"All", "All"}}},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathInvalidRequest, false, 500)
				if d.Status.Reason != metav1.StatusReasonUnknown || d.Status.Message != "Non-matching dry-run options in request and content: [All] and [All All]" {
					t.Errorf("got %q %q", d.Status.Reason, d.Status.Message)
				}
			},
		},
		{
			name: "a DisruptionTarget already True keeps its lastTransitionTime",
			pod: func() *v1.Pod {
				p := testPod("p", v1.PodRunning, ready)
				p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
					LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))})
				return p
			}(),
			check: func(t *testing.T, d Decision) {
				want(t, d, PathNoPDB, true, 201)
				if d.DisruptionTarget == nil || !d.DisruptionTarget.LastTransitionTime.Equal(ptr.To(metav1.NewTime(t0.Add(-time.Hour)))) ||
					d.DisruptionTarget.Reason != ReasonEvictionByEvictionAPI || d.DisruptionTarget.Message != MessageEvicting {
					t.Errorf("DisruptionTarget = %+v", d.DisruptionTarget)
				}
			},
		},
		{
			name: "a DisruptionTarget False gets a new lastTransitionTime",
			pod: func() *v1.Pod {
				p := testPod("p", v1.PodRunning, ready)
				p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionFalse,
					LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))})
				return p
			}(),
			check: func(t *testing.T, d Decision) {
				if d.DisruptionTarget == nil || !d.DisruptionTarget.LastTransitionTime.Equal(&t0) || d.DisruptionTarget.Status != v1.ConditionTrue {
					t.Errorf("DisruptionTarget = %+v", d.DisruptionTarget)
				}
			},
		},
		{
			name: "a non-nil zero deletionTimestamp is not terminating",
			pod: func() *v1.Pod {
				p := testPod("p", v1.PodRunning, ready)
				p.DeletionTimestamp = &zeroTime
				return p
			}(),
			pdbs:  []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{})},
			check: func(t *testing.T, d Decision) { want(t, d, PathBudgetExhausted, false, 429) },
		},
		{
			name:  "phase Unknown is treated like Running",
			pod:   testPod("p", v1.PodUnknown, nil),
			pdbs:  []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{})},
			check: func(t *testing.T, d Decision) { want(t, d, PathBudgetExhausted, false, 429) },
		},
		{
			name:  "an empty phase is treated like Running",
			pod:   testPod("p", "", nil),
			pdbs:  []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{})},
			check: func(t *testing.T, d Decision) { want(t, d, PathBudgetExhausted, false, 429) },
		},
		{
			name: "after a shortcut, a caller resourceVersion keeps a delete conflict a 409",
			pod:  testPod("p", v1.PodRunning, notReady),
			pdbs: []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 1, DesiredHealthy: 1})},
			opts: Input{DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{
				UID: ptr.To[types.UID]("wrong"), ResourceVersion: ptr.To("7")}}},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathUnhealthyIfHealthyBudget, false, 409)
				if got := *d.DeleteOptions.Preconditions.ResourceVersion; got != "42" {
					t.Errorf("the snapshot's resourceVersion must replace the caller's, got %q", got)
				}
			},
		},
		{
			name: "budget decremented, then the caller's resourceVersion fails the delete",
			pod:  testPod("p", v1.PodRunning, ready),
			pdbs: []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 2})},
			opts: Input{DeleteOptions: metav1.NewRVDeletionPrecondition("7")},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathBudgetAllowed, false, 409)
				if d.PDBStatus == nil || d.PDBStatus.DisruptionsAllowed != 1 || d.DisruptionTarget != nil {
					t.Errorf("got %+v", d)
				}
			},
		},
		{
			name: "Pending pod: the snapshot's resourceVersion becomes a precondition",
			pod:  testPod("p", v1.PodPending, nil),
			check: func(t *testing.T, d Decision) {
				want(t, d, PathPodStateIgnoresPDB, true, 201)
				if !d.ResourceVersionPrecondition || *d.DeleteOptions.Preconditions.ResourceVersion != "42" {
					t.Errorf("got %+v", d.DeleteOptions)
				}
			},
		},
		{
			name: "Succeeded pod: no precondition added",
			pod:  testPod("p", v1.PodSucceeded, nil),
			check: func(t *testing.T, d Decision) {
				want(t, d, PathPodStateIgnoresPDB, true, 201)
				if d.ResourceVersionPrecondition || d.DeleteOptions.Preconditions != nil || d.DisruptionTarget == nil {
					t.Errorf("got %+v", d)
				}
			},
		},
		{
			name: "dry-run on the budget path: allowed, nothing written",
			pod:  testPod("p", v1.PodRunning, ready),
			pdbs: []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1})},
			opts: Input{DryRun: []string{metav1.DryRunAll}},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathBudgetAllowed, true, 201)
				if d.PDBStatus != nil || d.DisruptionTarget != nil || !d.DryRun {
					t.Errorf("got %+v", d)
				}
			},
		},
		{
			name: "dry-run still refuses",
			pod:  testPod("p", v1.PodRunning, ready),
			pdbs: []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: -1})},
			opts: Input{DryRun: []string{metav1.DryRunAll}},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathNegativeBudget, false, 403)
				if d.Status.Details.Group != "policy" || d.Status.Details.Kind != "poddisruptionbudget" || d.Status.Details.Name != "foo" {
					t.Errorf("details = %+v", d.Status.Details)
				}
			},
		},
		{
			// Regression: Decide used to predict a StorageError message that
			// embeds the etcd key; the store's rest.BeforeDelete answers first
			// (checked against a live v1.37.0 server).
			name: "dry-run precondition failure comes from the store's early check",
			pod:  testPod("p", v1.PodPending, nil),
			opts: Input{DryRun: []string{metav1.DryRunAll}, DeleteOptions: metav1.NewRVDeletionPrecondition("7")},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathPodStateIgnoresPDB, false, 409)
				const msg = `Operation cannot be fulfilled on Pod "p": the ResourceVersion in the precondition (7) does not match the ResourceVersion in record (42). The object might have been modified`
				if d.Status.Message != msg || d.Status.Details == nil || d.Status.Details.Kind != "Pod" || d.Status.Details.Name != "p" {
					t.Errorf("status = %+v", d.Status)
				}
			},
		},
		{
			// Regression: the handler ignores an empty UID precondition, then
			// writes DisruptionTarget; the store's rest.BeforeDelete compares
			// the empty UID and refuses (live v1.37.0 server).
			name: "empty UID precondition outside dry-run: condition written, then the store's 409",
			pod:  testPod("p", v1.PodSucceeded, nil),
			opts: Input{DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID(""))}}},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathPodStateIgnoresPDB, false, 409)
				const msg = `Operation cannot be fulfilled on Pod "p": the UID in the precondition () does not match the UID in record (pod-uid). The object might have been deleted and then recreated`
				if d.Status.Message != msg || d.Status.Details == nil || d.Status.Details.Kind != "Pod" {
					t.Errorf("status = %+v", d.Status)
				}
				if d.DisruptionTarget == nil {
					t.Errorf("DisruptionTarget not predicted")
				}
			},
		},
		{
			// Regression: client-go decodes the error Status without its
			// type information, so Err() carries none either.
			name: "Err() is client-go's error: no kind or apiVersion in ErrStatus",
			pod:  testPod("p", v1.PodRunning, ready),
			pdbs: []policyv1.PodDisruptionBudget{stale},
			check: func(t *testing.T, d Decision) {
				want(t, d, PathPDBStale, false, 429)
				var se *apierrors.StatusError
				if !errors.As(d.Err(), &se) || se.ErrStatus.TypeMeta != (metav1.TypeMeta{}) || d.Status.Kind != "Status" || d.Status.APIVersion != "v1" {
					t.Errorf("Err() = %#v, Status = %+v", d.Err(), d.Status)
				}
			},
		},
		{
			name: "success body",
			pod:  testPod("p", v1.PodRunning, ready),
			check: func(t *testing.T, d Decision) {
				wantStatus := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: 201}
				if d.Status.String() != wantStatus.String() || d.Err() != nil {
					t.Errorf("status = %v", d.Status)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts.Now.IsZero() {
				opts.Now = t0
			}
			d, err := decide(tc.pod, tc.pdbs, opts)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, d)
		})
	}
}

// want checks the path, the outcome and the code, and that Err agrees.
func want(t *testing.T, d Decision, path Path, allowed bool, code int32) {
	t.Helper()
	if d.Path != path || d.Allowed != allowed || d.Status.Code != code {
		t.Errorf("got path=%s allowed=%v code=%d (%s), want %s %v %d", d.Path, d.Allowed, d.Status.Code, d.Status.Message, path, allowed, code)
	}
	if allowed != (d.Err() == nil) {
		t.Errorf("Err() = %v with Allowed %v", d.Err(), d.Allowed)
	}
	if !allowed && apierrors.ReasonForError(d.Err()) != d.Status.Reason {
		t.Errorf("Err() reason %q != %q", apierrors.ReasonForError(d.Err()), d.Status.Reason)
	}
}

func TestDecideInvalidInput(t *testing.T) {
	good := testPod("p", v1.PodRunning, nil)
	cases := map[string]struct {
		in     Input
		fields []string
	}{
		"nil pod":             {in: Input{Now: t0}, fields: []string{"Input.Pod"}},
		"pod without name":    {in: Input{Pod: &v1.Pod{}, Now: t0}, fields: []string{"Input.Pod.Name"}},
		"nil PDB":             {in: Input{Pod: good, PDBs: []*policyv1.PodDisruptionBudget{ptr.To(testPDB(selA(), policyv1.PodDisruptionBudgetStatus{})), nil}, Now: t0}, fields: []string{"Input.PDBs[1]"}},
		"PDB without name":    {in: Input{Pod: good, PDBs: []*policyv1.PodDisruptionBudget{{}}, Now: t0}, fields: []string{"Input.PDBs[0].Name"}},
		"zero Now":            {in: Input{Pod: good}, fields: []string{"Input.Now"}},
		"query dry-run value": {in: Input{Pod: good, Now: t0, DryRun: []string{"All", "Yes"}}, fields: []string{"Input.DryRun[1]"}},
		"body dry-run value":  {in: Input{Pod: good, Now: t0, DeleteOptions: &metav1.DeleteOptions{DryRun: []string{""}}}, fields: []string{"Input.DeleteOptions.DryRun[0]"}},
		"every problem at once": {in: Input{Pod: &v1.Pod{}, PDBs: []*policyv1.PodDisruptionBudget{nil}, DryRun: []string{"Yes"}},
			fields: []string{"Input.Pod.Name", "Input.PDBs[0]", "Input.Now", "Input.DryRun[0]"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d, err := Decide(tc.in)
			checkInputError(t, err, tc.fields...)
			if d.Path != "" || d.Allowed {
				t.Errorf("got %+v with an error", d)
			}
		})
	}
	_, err := Decide(Input{Pod: good})
	if want := "eviction: Decide: pod default/p: Input.Now: Required value: the time of the request is required"; err == nil || err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
}
