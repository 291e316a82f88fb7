package eviction

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// upstreamCase is one case of pkg/registry/core/pod/storage/eviction_test.go
// (v1.37.0), run once per unhealthyPodEvictionPolicy in policies (all three
// when nil), exactly as upstream loops.
type upstreamCase struct {
	name     string
	pdb      policyv1.PodDisruptionBudget
	policies []*policyv1.UnhealthyPodEvictionPolicyType
	pod      *v1.Pod
	opts     Input

	wantErr     string // errToString of the answer, "" for success
	wantDeleted bool   // a delete is issued and succeeds
	wantPath    Path
}

func runUpstream(t *testing.T, cases []upstreamCase) {
	t.Helper()
	for _, tc := range cases {
		policies := tc.policies
		if policies == nil {
			policies = allPolicies
		}
		for _, pol := range policies {
			t.Run(tc.name+" with "+policyName(pol)+" policy", func(t *testing.T) {
				pdb := *tc.pdb.DeepCopy()
				pdb.Spec.UnhealthyPodEvictionPolicy = pol
				opts := tc.opts
				if opts.Now.IsZero() {
					opts.Now = t0
				}
				d, err := decide(tc.pod.DeepCopy(), []policyv1.PodDisruptionBudget{pdb}, opts)
				if err != nil {
					t.Fatalf("Decide: %v", err)
				}
				if got := errToString(d.Err()); got != tc.wantErr {
					t.Errorf("error mismatch:\n got  %q\n want %q", got, tc.wantErr)
				}
				if d.Allowed != tc.wantDeleted {
					t.Errorf("Allowed = %v, want %v", d.Allowed, tc.wantDeleted)
				}
				if (d.Status.Code == http.StatusCreated) != d.Allowed {
					t.Errorf("Code %d inconsistent with Allowed %v", d.Status.Code, d.Allowed)
				}
				if tc.wantPath != "" && d.Path != tc.wantPath {
					t.Errorf("Path = %q, want %q", d.Path, tc.wantPath)
				}
			})
		}
	}
}

// TestEvictionWithETCD mirrors upstream's TestEvictionWithETCD. Pods created
// there without a phase are Pending (create resets status) and have no
// conditions.
func TestEvictionWithETCD(t *testing.T) {
	nilAndIfHealthy := []*policyv1.UnhealthyPodEvictionPolicyType{nil, policyPtr(policyv1.IfHealthyBudget)}
	const needs00 = "Cannot evict pod as it would violate the pod's disruption budget.: TooManyRequests: The disruption budget foo needs 0 healthy pods and has 0 currently"
	runUpstream(t, []upstreamCase{
		{
			name:     "matching pdbs with no disruptions allowed, pod running",
			pdb:      testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0}),
			pod:      testPod("t1", v1.PodRunning, nil),
			policies: nilAndIfHealthy,
			wantErr:  needs00,
			wantPath: PathBudgetExhausted,
		},
		{
			name:        "matching pdbs with no disruptions allowed, pod running, AlwaysAllow deletes it",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0}),
			pod:         testPod("t1", v1.PodRunning, nil),
			policies:    []*policyv1.UnhealthyPodEvictionPolicyType{policyPtr(policyv1.AlwaysAllow)},
			wantDeleted: true,
			wantPath:    PathUnhealthyAlwaysAllow,
		},
		{
			name:        "matching pdbs with no disruptions allowed, pod pending",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0}),
			pod:         testPod("t2", v1.PodPending, nil),
			wantDeleted: true,
			wantPath:    PathPodStateIgnoresPDB,
		},
		{
			name:        "matching pdbs with no disruptions allowed, pod succeeded",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0}),
			pod:         testPod("t3", v1.PodSucceeded, nil),
			wantDeleted: true,
			wantPath:    PathPodStateIgnoresPDB,
		},
		{
			name:        "matching pdbs with no disruptions allowed, pod failed",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0}),
			pod:         testPod("t4", v1.PodFailed, nil),
			wantDeleted: true,
			wantPath:    PathPodStateIgnoresPDB,
		},
		{
			name:        "matching pdbs with disruptions allowed",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}),
			pod:         testPod("t5", v1.PodPending, nil),
			wantDeleted: true,
			wantPath:    PathPodStateIgnoresPDB,
		},
		{
			name:        "non-matching pdbs",
			pdb:         testPDB(&metav1.LabelSelector{MatchLabels: map[string]string{"b": "true"}}, policyv1.PodDisruptionBudgetStatus{}),
			pod:         testPod("t6", v1.PodPending, nil),
			wantDeleted: true,
			wantPath:    PathPodStateIgnoresPDB,
		},
		{
			name:     "matching pdbs with disruptions allowed but bad name in Url",
			pdb:      testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}),
			pod:      testPod("t7bad-name", v1.PodPending, nil),
			opts:     Input{EvictionName: "t7"},
			wantErr:  "name in URL does not match name in Eviction object: BadRequest",
			wantPath: PathInvalidRequest,
		},
		{
			name:     "matching pdbs with no disruptions allowed, pod running, empty selector",
			pdb:      testPDB(&metav1.LabelSelector{}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0}),
			pod:      testPod("t8", v1.PodRunning, nil),
			policies: nilAndIfHealthy,
			wantErr:  needs00,
			wantPath: PathBudgetExhausted,
		},
	})
}

// TestEviction mirrors upstream's TestEviction. Upstream drives a scripted
// store whose first delete conflicts and flips the pod to Running; a snapshot
// evaluator sees the pod as the retry sees it, so those cases give the
// post-conflict pod. Conflicts that the store injects on the delete itself
// are reproduced with a caller UID precondition the pod does not satisfy.
// Left out: "other error on delete" (a store-injected 400 no snapshot
// implies).
func TestEviction(t *testing.T) {
	nilAndIfHealthy := []*policyv1.UnhealthyPodEvictionPolicyType{nil, policyPtr(policyv1.IfHealthyBudget)}
	alwaysAllow := []*policyv1.UnhealthyPodEvictionPolicyType{policyPtr(policyv1.AlwaysAllow)}
	const stillProcessingErr = "Cannot evict pod as it would violate the pod's disruption budget.: TooManyRequests: The disruption budget foo is still being processed by the server."
	wrongUID := Input{DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To[types.UID]("other-uid")}}}
	terminating := testPod("t6", v1.PodRunning, nil)
	terminating.DeletionTimestamp = &t0
	runUpstream(t, []upstreamCase{
		{
			name:        "pdbs No disruptions allowed, pod pending, first delete conflict, pod still pending, pod deleted successfully",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{}),
			pod:         testPod("t1", v1.PodPending, nil),
			wantDeleted: true,
			wantPath:    PathPodStateIgnoresPDB,
		},
		{
			name:     "pdbs No disruptions allowed, pod pending, first delete conflict, pod becomes running, continueToPDBs",
			pdb:      testPDB(selA(), policyv1.PodDisruptionBudgetStatus{}),
			pod:      testPod("t2", v1.PodRunning, nil),
			policies: nilAndIfHealthy,
			wantErr:  "Cannot evict pod as it would violate the pod's disruption budget.: TooManyRequests: The disruption budget foo needs 0 healthy pods and has 0 currently",
			wantPath: PathBudgetExhausted,
		},
		{
			name:     "pdbs No disruptions allowed, pod pending, first delete conflict, pod becomes running, skip PDB check, conflict",
			pdb:      testPDB(selA(), policyv1.PodDisruptionBudgetStatus{}),
			pod:      testPod("t2", v1.PodRunning, status(v1.ConditionFalse)),
			policies: alwaysAllow,
			opts:     wrongUID,
			wantErr:  stillProcessingErr,
			wantPath: PathUnhealthyAlwaysAllow,
		},
		{
			name:        "pdbs disruptions allowed, pod pending, first delete conflict, pod becomes running, continueToPDBs",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}),
			pod:         testPod("t3", v1.PodRunning, nil),
			policies:    nilAndIfHealthy,
			wantDeleted: true,
			wantPath:    PathBudgetAllowed,
		},
		{
			name:     "pod pending, always conflict on delete",
			pdb:      testPDB(selA(), policyv1.PodDisruptionBudgetStatus{}),
			pod:      testPod("t4", v1.PodPending, nil),
			opts:     wrongUID,
			wantErr:  `Operation cannot be fulfilled on Pod "t4": the UID in the precondition (other-uid) does not match the UID in record (pod-uid). The object might have been deleted and then recreated: Conflict`,
			wantPath: PathPodStateIgnoresPDB,
		},
		{
			name:     "pod pending, always conflict on delete, user provided ResourceVersion constraint",
			pdb:      testPDB(selA(), policyv1.PodDisruptionBudgetStatus{}),
			pod:      testPod("t5", v1.PodPending, nil),
			opts:     Input{DeleteOptions: metav1.NewRVDeletionPrecondition("userProvided")},
			wantErr:  `Operation cannot be fulfilled on Pod "t5": the ResourceVersion in the precondition (userProvided) does not match the ResourceVersion in record (42). The object might have been modified: Conflict`,
			wantPath: PathPodStateIgnoresPDB,
		},
		{
			name:        "matching pdbs with no disruptions allowed, pod terminating",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{}),
			pod:         terminating,
			opts:        Input{DeleteOptions: metav1.NewDeleteOptions(300)},
			wantDeleted: true,
			wantPath:    PathPodStateIgnoresPDB,
		},
		{
			name:     "matching pdbs with no disruptions allowed, pod running, pod healthy, unhealthy pod not ours",
			pdb:      testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2}),
			pod:      testPod("t7", v1.PodRunning, status(v1.ConditionTrue)),
			wantErr:  "Cannot evict pod as it would violate the pod's disruption budget.: TooManyRequests: The disruption budget foo needs 2 healthy pods and has 2 currently",
			wantPath: PathBudgetExhausted,
		},
		{
			name:        "matching pdbs with disruptions allowed, pod running, pod healthy, healthy pod ours, deletes pod by honoring the PDB",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 3}),
			pod:         testPod("t8", v1.PodRunning, status(v1.ConditionTrue)),
			wantDeleted: true,
			wantPath:    PathBudgetAllowed,
		},
		{
			name:        "matching pdbs with no disruptions allowed, pod running, pod unhealthy, unhealthy pod ours",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2}),
			pod:         testPod("t8", v1.PodRunning, status(v1.ConditionFalse)),
			policies:    nilAndIfHealthy,
			wantDeleted: true,
			wantPath:    PathUnhealthyIfHealthyBudget,
		},
		{
			name:        "matching pdbs with no disruptions allowed, pod running, pod unhealthy, unhealthy pod ours (AlwaysAllow)",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2}),
			pod:         testPod("t8", v1.PodRunning, status(v1.ConditionFalse)),
			policies:    alwaysAllow,
			wantDeleted: true,
			wantPath:    PathUnhealthyAlwaysAllow,
		},
		{
			name:        "matching pdbs with no disruptions allowed, pod running, pod unhealthy, unhealthy pod ours, skips the PDB check and deletes",
			pdb:         testPDB(selA(), policyv1.PodDisruptionBudgetStatus{}),
			pod:         testPod("t8", v1.PodRunning, status(v1.ConditionFalse)),
			policies:    alwaysAllow,
			wantDeleted: true,
			wantPath:    PathUnhealthyAlwaysAllow,
		},
		{
			name:     "matching pdbs with no disruptions allowed, pod running, pod unhealthy, unhealthy pod ours, resource version conflict",
			pdb:      testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2}),
			pod:      testPod("t9", v1.PodRunning, status(v1.ConditionFalse)),
			opts:     wrongUID,
			wantErr:  stillProcessingErr,
			wantPath: "",
		},
		{
			name:     "matching pdbs with no disruptions allowed, pod running, pod healthy, empty selector, pod not deleted by honoring the PDB",
			pdb:      testPDB(&metav1.LabelSelector{}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 3, DesiredHealthy: 3}),
			pod:      testPod("t11", v1.PodRunning, status(v1.ConditionTrue)),
			wantErr:  "Cannot evict pod as it would violate the pod's disruption budget.: TooManyRequests: The disruption budget foo needs 3 healthy pods and has 3 currently",
			wantPath: PathBudgetExhausted,
		},
		{
			name: "the error is about sync failure when the condition reason is SyncFailedReason",
			pdb: testPDB(&metav1.LabelSelector{}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0,
				Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: policyv1.SyncFailedReason, Message: "hoge"}}}),
			pod:      testPod("t12", v1.PodRunning, status(v1.ConditionTrue)),
			wantErr:  "Cannot evict pod as it would violate the pod's disruption budget.: TooManyRequests: The disruption budget foo does not allow evicting pods currently because it failed sync: hoge",
			wantPath: PathBudgetExhausted,
		},
		{
			name:     "matching pdbs with negative disruptions allowed, pod running",
			pdb:      testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: -1}),
			pod:      testPod("t-neg", v1.PodRunning, nil),
			policies: nilAndIfHealthy,
			wantErr:  `poddisruptionbudget.policy "foo" is forbidden: pdb disruptions allowed is negative: Forbidden: The disruption budget foo does not allow evicting pods currently: pdb disruptions allowed is negative`,
			wantPath: PathNegativeBudget,
		},
		{
			name:     "matching pdbs with too many disrupted pods, pod running",
			pdb:      testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, DisruptedPods: makeDisruptedPods(MaxDisruptedPodSize + 1)}),
			pod:      testPod("t-big", v1.PodRunning, nil),
			policies: nilAndIfHealthy,
			wantErr:  `poddisruptionbudget.policy "foo" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller: Forbidden: The disruption budget foo does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller`,
			wantPath: PathDisruptedPodsOverflow,
		},
		{
			name: "the error includes the reason when the condition.Status is False",
			pdb: testPDB(&metav1.LabelSelector{}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 4, DesiredHealthy: 3,
				Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: "bar-reason", Message: "hoge"}}}),
			pod:      testPod("t12", v1.PodRunning, status(v1.ConditionTrue)),
			wantErr:  "Cannot evict pod as it would violate the pod's disruption budget.: TooManyRequests: The disruption budget foo does not allow evicting pods currently (bar-reason): hoge",
			wantPath: PathBudgetExhausted,
		},
	})
}

// TestEvictionWithDeleteOptions mirrors upstream's test of the same name: the
// dry-run variants evict (a created pod is Pending) without writing
// anything, and ignoreStoreReadErrorWithClusterBreakingPotential is refused
// with exactly upstream's 422.
func TestEvictionWithDeleteOptions(t *testing.T) {
	pdbDA1 := []policyv1.PodDisruptionBudget{testPDB(selA(), policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1})}
	cases := []struct {
		name    string
		query   []string
		body    *metav1.DeleteOptions
		pdbs    []policyv1.PodDisruptionBudget
		wantErr error
	}{
		{name: "dry run - just request-options", query: []string{"All"}, body: &metav1.DeleteOptions{}},
		{name: "dry run - just eviction-options", body: &metav1.DeleteOptions{DryRun: []string{"All"}}},
		{name: "dry run - both options", query: []string{"All"}, body: &metav1.DeleteOptions{DryRun: []string{"All"}}},
		{name: "dry run - with pdbs", query: []string{"All"}, body: &metav1.DeleteOptions{DryRun: []string{"All"}}, pdbs: pdbDA1},
		{
			name: "ignoreStoreReadErrorWithClusterBreakingPotential is set, invalid error expected",
			body: &metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: ptr.To(true)},
			wantErr: apierrors.NewInvalid(evictionKind, "foo", field.ErrorList{
				field.Invalid(field.NewPath("deleteOptions").Child("ignoreStoreReadErrorWithClusterBreakingPotential"),
					true, "can not be set for pod eviction, try after removing the option"),
			}),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := decide(testPod("foo", v1.PodPending, nil), tc.pdbs, Input{Now: t0, DryRun: tc.query, DeleteOptions: tc.body})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != nil {
				got, ok := d.Err().(*apierrors.StatusError)
				if !ok {
					t.Fatalf("Err() = %v, want %v", d.Err(), tc.wantErr)
				}
				got.ErrStatus.TypeMeta = metav1.TypeMeta{}
				if diff := cmp.Diff(tc.wantErr, error(got)); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if d.Status.Code != http.StatusUnprocessableEntity {
					t.Errorf("Code = %d, want 422", d.Status.Code)
				}
				return
			}
			if !d.Allowed || !d.DryRun {
				t.Errorf("Allowed=%v DryRun=%v, want both true", d.Allowed, d.DryRun)
			}
			if d.DisruptionTarget != nil || d.PDBStatus != nil {
				t.Errorf("dry-run wrote something: %+v", d)
			}
		})
	}
}

// TestEvictionPDBStatus mirrors upstream's test: two Running pods without a
// Ready condition are unhealthy with desiredHealthy 0, so the budget is
// decremented; the condition flips to InsufficientPods only at 0.
func TestEvictionPDBStatus(t *testing.T) {
	cases := []struct {
		name       string
		allowed    int32
		wantDA     int32
		wantReason string
	}{
		{"pdb status is updated after eviction", 1, 0, policyv1.InsufficientPodsReason},
		{"condition reason is only updated if AllowedDisruptions becomes 0", 3, 2, policyv1.SufficientPodsReason},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pdb := testPDB(selA(), policyv1.PodDisruptionBudgetStatus{
				DisruptionsAllowed: tc.allowed,
				Conditions:         []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Reason: policyv1.SufficientPodsReason, Status: metav1.ConditionTrue}},
			})
			d, err := decide(testPod("foo-1", v1.PodRunning, nil), []policyv1.PodDisruptionBudget{pdb}, Input{Now: t0, DeleteOptions: &metav1.DeleteOptions{}})
			if err != nil {
				t.Fatal(err)
			}
			if !d.Allowed || d.PDBStatus == nil {
				t.Fatalf("want an allowed eviction with a PDB write, got %+v", d)
			}
			if d.PDBStatus.DisruptionsAllowed != tc.wantDA {
				t.Errorf("DisruptionsAllowed = %d, want %d", d.PDBStatus.DisruptionsAllowed, tc.wantDA)
			}
			c := findCondition(d.PDBStatus.Conditions, policyv1.DisruptionAllowedCondition)
			if c == nil || c.Reason != tc.wantReason {
				t.Errorf("condition = %+v, want reason %s", c, tc.wantReason)
			}
			if got, ok := d.PDBStatus.DisruptedPods["foo-1"]; !ok || !got.Equal(&t0) {
				t.Errorf("disruptedPods = %v, want foo-1 at %v", d.PDBStatus.DisruptedPods, t0)
			}
			if pdb.Status.DisruptionsAllowed != tc.allowed || pdb.Status.DisruptedPods != nil {
				t.Errorf("Decide modified its input PDB: %+v", pdb.Status)
			}
		})
	}
}

// TestAddConditionAndDelete mirrors upstream's test of the handler's
// precondition check before the DisruptionTarget update (the "missing pod"
// case is a nil pod here, an input error).
func TestAddConditionAndDelete(t *testing.T) {
	pod := testPod("foo", v1.PodRunning, nil)
	uid, rv := pod.UID, pod.ResourceVersion
	badUID, badRV := uid+"1", rv+"1"
	cases := []struct {
		name    string
		pre     *metav1.Preconditions
		wantErr string
	}{
		{name: "simple"},
		{name: "valid uid", pre: &metav1.Preconditions{UID: &uid}},
		{name: "invalid uid", pre: &metav1.Preconditions{UID: &badUID}, wantErr: "The object might have been deleted and then recreated"},
		{name: "valid resourceVersion", pre: &metav1.Preconditions{ResourceVersion: &rv}},
		{name: "invalid resourceVersion", pre: &metav1.Preconditions{ResourceVersion: &badRV}, wantErr: "The object might have been modified"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := decide(pod, nil, Input{Now: t0, DeleteOptions: &metav1.DeleteOptions{Preconditions: tc.pre}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr == "" {
				if !d.Allowed || d.DisruptionTarget == nil {
					t.Fatalf("want eviction with DisruptionTarget, got %+v", d)
				}
				return
			}
			if d.Allowed || d.Status.Code != http.StatusConflict || !strings.Contains(d.Status.Message, tc.wantErr) {
				t.Fatalf("want 409 containing %q, got %d %q", tc.wantErr, d.Status.Code, d.Status.Message)
			}
			if d.DisruptionTarget != nil {
				t.Errorf("a failed precondition must not write DisruptionTarget")
			}
		})
	}
	if _, err := decide(nil, nil, Input{}); err == nil {
		t.Error("nil pod: want error")
	}
}
