package eviction

import (
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// The builders of upstream's disruption_test.go: ready pods labelled
// foo=bar in "default", PDB "foobar" selecting foo=bar.

func dcPod(name string) v1.Pod {
	return v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Labels: map[string]string{"foo": "bar"}},
		Status:     v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}},
	}
}

func unready(p v1.Pod) v1.Pod {
	p.Status.Conditions = []v1.PodCondition{}
	return p
}

func owned(p v1.Pod, apiVersion, kind, name string, uid types.UID) v1.Pod {
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)})
	return p
}

func minAvailablePDB(v intstr.IntOrString) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "foobar", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &v, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"foo": "bar"}}},
	}
}

func maxUnavailablePDB(v intstr.IntOrString) *policyv1.PodDisruptionBudget {
	p := minAvailablePDB(v)
	p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, &v
	return p
}

func rs(name string, uid types.UID, replicas int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid}, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas)}}
}

func rc(name string, uid types.UID, replicas int32) *v1.ReplicationController {
	return &v1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid}, Spec: v1.ReplicationControllerSpec{Replicas: ptr.To(replicas)}}
}

// tuple is upstream's VerifyPdbStatus tuple (DA, currentHealthy, desiredHealthy, expectedPods).
type tuple struct{ da, ch, dh, ep int32 }

func tupleOf(s policyv1.PodDisruptionBudgetStatus) tuple {
	return tuple{s.DisruptionsAllowed, s.CurrentHealthy, s.DesiredHealthy, s.ExpectedPods}
}

// syncer runs ComputeStatus like the fake controller of upstream's tests:
// each sync's written status is stored on the PDB.
type syncer struct {
	t   *testing.T
	pdb *policyv1.PodDisruptionBudget
	w   Workloads
}

func (s *syncer) sync(pods []v1.Pod) BudgetResult {
	s.t.Helper()
	res, err := ComputeStatus(BudgetInput{PDB: s.pdb, Pods: ptrs(pods), Now: t0, Scale: s.w.Resolve})
	if err != nil {
		s.t.Fatal(err)
	}
	if res.Write {
		s.pdb.Status = *res.Status.DeepCopy()
	}
	return res
}

func (s *syncer) expect(pods []v1.Pod, want tuple) BudgetResult {
	s.t.Helper()
	res := s.sync(pods)
	if got := tupleOf(res.Status); got != want {
		s.t.Errorf("(DA, CH, DH, EP) = %v, want %v", got, want)
	}
	return res
}

func hasEvent(res BudgetResult, reason string) bool {
	for _, e := range res.Events {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

// The cases below mirror pkg/controller/disruption/disruption_test.go (v1.37.0).

func TestNoSelector(t *testing.T) {
	pdb := minAvailablePDB(intstr.FromInt32(3))
	pdb.Spec.Selector = &metav1.LabelSelector{}
	s := &syncer{t: t, pdb: pdb}
	s.expect(nil, tuple{0, 0, 3, 0})
	s.expect([]v1.Pod{dcPod("yo-yo-yo")}, tuple{0, 1, 3, 1})
}

func TestUnavailable(t *testing.T) {
	s := &syncer{t: t, pdb: minAvailablePDB(intstr.FromInt32(3))}
	var pods []v1.Pod
	for i := int32(0); i < 4; i++ {
		s.expect(pods, tuple{0, i, 3, i})
		pods = append(pods, dcPod(fmt.Sprintf("yo-yo-yo %d", i)))
	}
	s.expect(pods, tuple{1, 4, 3, 4})
	pods[0] = unready(pods[0])
	s.expect(pods, tuple{0, 3, 3, 4})
}

func TestIntegerMaxUnavailable(t *testing.T) {
	s := &syncer{t: t, pdb: maxUnavailablePDB(intstr.FromInt32(1))}
	s.expect(nil, tuple{0, 0, 0, 0})
	res := s.sync([]v1.Pod{dcPod("naked")})
	if res.Status.DisruptionsAllowed != 0 || !hasEvent(res, "UnmanagedPods") || res.SyncError != nil {
		t.Errorf("got %+v", res)
	}
}

func TestIntegerMaxUnavailableWithScaling(t *testing.T) {
	set := rs("foobar", "rs-uid", 7)
	s := &syncer{t: t, pdb: maxUnavailablePDB(intstr.FromInt32(2)), w: Workloads{ReplicaSets: []*appsv1.ReplicaSet{set}}}
	pods := []v1.Pod{owned(dcPod("pod"), "apps/v1", "ReplicaSet", "foobar", "rs-uid")}
	s.expect(pods, tuple{0, 1, 5, 7})
	s.w.ReplicaSets[0].Spec.Replicas = ptr.To[int32](5)
	s.expect(pods, tuple{0, 1, 3, 5})
}

func TestPercentageMaxUnavailableWithScaling(t *testing.T) {
	s := &syncer{t: t, pdb: maxUnavailablePDB(intstr.FromString("30%")), w: Workloads{ReplicaSets: []*appsv1.ReplicaSet{rs("foobar", "rs-uid", 7)}}}
	pods := []v1.Pod{owned(dcPod("pod"), "apps/v1", "ReplicaSet", "foobar", "rs-uid")}
	s.expect(pods, tuple{0, 1, 4, 7})
	s.w.ReplicaSets[0].Spec.Replicas = ptr.To[int32](3)
	s.expect(pods, tuple{0, 1, 2, 3})
}

func TestNakedPod(t *testing.T) {
	s := &syncer{t: t, pdb: minAvailablePDB(intstr.FromString("28%"))}
	s.expect(nil, tuple{0, 0, 0, 0})
	res := s.sync([]v1.Pod{dcPod("naked")})
	if res.Status.DisruptionsAllowed != 0 || !hasEvent(res, "UnmanagedPods") {
		t.Errorf("got %+v", res)
	}
}

func TestUnsupportedControllerPod(t *testing.T) {
	s := &syncer{t: t, pdb: minAvailablePDB(intstr.FromString("28%"))}
	s.sync(nil)
	pod := owned(dcPod("naked"), "apps.test.io/v1", "TestWorkload", "fake-controller", "b7329742-8daa-493a-8881-6ca07139172b")
	res := s.sync([]v1.Pod{pod})
	if res.Status.DisruptionsAllowed != 0 || !hasEvent(res, "CalculateExpectedPodCountFailed") || res.SyncError == nil {
		t.Errorf("got %+v", res)
	}
	c := findCondition(res.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if c == nil || c.Reason != policyv1.SyncFailedReason || c.Status != metav1.ConditionFalse || c.Message != `found no controllers for pod "naked"` {
		t.Errorf("condition = %+v", c)
	}
}

func TestStatusForUnmanagedPod(t *testing.T) {
	s := &syncer{t: t, pdb: minAvailablePDB(intstr.FromString("28%"))}
	s.sync(nil)
	res := s.sync([]v1.Pod{dcPod("unmanaged")})
	if res.SyncError != nil || !hasEvent(res, "UnmanagedPods") || len(res.UnmanagedPods) != 1 || res.UnmanagedPods[0] != "unmanaged" {
		t.Errorf("got %+v", res)
	}
	if c := findCondition(res.Status.Conditions, policyv1.DisruptionAllowedCondition); c == nil || c.Reason == policyv1.SyncFailedReason {
		t.Errorf("condition = %+v", c)
	}
}

func TestReplicaSet(t *testing.T) {
	s := &syncer{t: t, pdb: minAvailablePDB(intstr.FromString("20%")), w: Workloads{ReplicaSets: []*appsv1.ReplicaSet{rs("foobar", "rs-uid", 10)}}}
	s.expect([]v1.Pod{owned(dcPod("pod"), "apps/v1", "ReplicaSet", "foobar", "rs-uid")}, tuple{0, 1, 2, 10})
}

func TestScaleResource(t *testing.T) {
	const uid = types.UID("custom-uid")
	scale := func(ref metav1.OwnerReference, ns string) (ScaleTarget, bool, error) {
		return ScaleTarget{UID: uid, Replicas: 10}, true, nil
	}
	s := &syncer{t: t, pdb: maxUnavailablePDB(intstr.FromInt32(5)), w: Workloads{Scale: scale}}
	var pods []v1.Pod
	for i := range 4 {
		pods = append(pods, owned(dcPod(fmt.Sprintf("pod-%d", i)), "custom.k8s.io/v1", "customresource", "", uid))
	}
	s.expect(pods, tuple{0, 4, 5, 10})
}

func TestScaleFinderError(t *testing.T) {
	boom := errors.New("the server could not find the requested resource")
	w := Workloads{Scale: func(metav1.OwnerReference, string) (ScaleTarget, bool, error) { return ScaleTarget{}, false, boom }}
	res, err := ComputeStatus(BudgetInput{PDB: minAvailablePDB(intstr.FromString("50%")), Pods: ptrs([]v1.Pod{owned(dcPod("p"), "custom.k8s.io/v1", "Thing", "t", "u")}), Now: t0, Scale: w.Resolve})
	if err != nil || !errors.Is(res.SyncError, boom) || res.Status.DisruptionsAllowed != 0 {
		t.Errorf("got %+v, %v", res, err)
	}
}

func TestMultipleControllers(t *testing.T) {
	s := &syncer{t: t, pdb: minAvailablePDB(intstr.FromString("1%"))}
	pods := []v1.Pod{dcPod("pod 0"), dcPod("pod 1")}
	if got := s.sync(pods).Status.DisruptionsAllowed; got != 0 {
		t.Errorf("no controllers: DA = %d, want 0", got)
	}
	s.w.ReplicationControllers = []*v1.ReplicationController{rc("rc 1", "rc-uid", 1)}
	for i := range pods {
		pods[i] = owned(pods[i], "v1", "ReplicationController", "rc 1", "rc-uid")
	}
	if got := s.sync(pods).Status.DisruptionsAllowed; got != 1 {
		t.Errorf("one RC: DA = %d, want 1", got)
	}
}

// controllerSequence is TestReplicationController / TestStatefulSetController.
func controllerSequence(t *testing.T, w Workloads, own func(v1.Pod) v1.Pod) {
	labels := map[string]string{"foo": "bar", "baz": "quux"}
	s := &syncer{t: t, pdb: minAvailablePDB(intstr.FromString("34%")), w: w}
	s.expect(nil, tuple{0, 0, 0, 0})
	var pods []v1.Pod
	for i := int32(0); i < 3; i++ {
		p := own(dcPod(fmt.Sprintf("foobar %d", i)))
		p.Labels = labels
		pods = append(pods, p)
		if i < 2 {
			s.expect(pods, tuple{0, i + 1, 2, 3})
		} else {
			s.expect(pods, tuple{1, 3, 2, 3})
		}
	}
	pods = append(pods, dcPod("rogue"))
	if got := s.sync(pods).Status.DisruptionsAllowed; got != 2 {
		t.Errorf("with rogue pod: DA = %d, want 2", got)
	}
}

func TestReplicationController(t *testing.T) {
	controllerSequence(t, Workloads{ReplicationControllers: []*v1.ReplicationController{rc("foobar", "rc-uid", 3)}},
		func(p v1.Pod) v1.Pod { return owned(p, "v1", "ReplicationController", "foobar", "rc-uid") })
}

func TestStatefulSetController(t *testing.T) {
	ss := appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "foobar", Namespace: "default", UID: "ss-uid"}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)}}
	controllerSequence(t, Workloads{StatefulSets: []*appsv1.StatefulSet{&ss}},
		func(p v1.Pod) v1.Pod { return owned(p, "apps/v1", "StatefulSet", "foobar", "ss-uid") })
}

func TestTwoControllers(t *testing.T) {
	const size, minOne, minTwo int32 = 11, 4, 7
	w := Workloads{
		ReplicationControllers: []*v1.ReplicationController{rc("foobar", "rc-uid", size)},
		ReplicaSets:            []*appsv1.ReplicaSet{rs("foobar", "rs-uid", size)},
	}
	s := &syncer{t: t, pdb: minAvailablePDB(intstr.FromString("28%")), w: w}
	s.expect(nil, tuple{0, 0, 0, 0})
	var pods []v1.Pod
	unavailable := size - minOne - 1
	for i := int32(1); i <= size; i++ {
		p := owned(dcPod(fmt.Sprintf("quux %d", i)), "v1", "ReplicationController", "foobar", "rc-uid")
		if i <= unavailable {
			p = unready(p)
		}
		pods = append(pods, p)
		switch {
		case i <= unavailable:
			s.expect(pods, tuple{0, 0, minOne, size})
		case i-unavailable <= minOne:
			s.expect(pods, tuple{0, i - unavailable, minOne, size})
		default:
			s.expect(pods, tuple{1, i - unavailable, minOne, size})
		}
	}
	unavailable = 2*size - (minTwo + 2) - unavailable
	for i := int32(1); i <= size; i++ {
		p := owned(dcPod(fmt.Sprintf("quuux %d", i)), "apps/v1", "ReplicaSet", "foobar", "rs-uid")
		if i <= unavailable {
			p = unready(p)
		}
		pods = append(pods, p)
		switch {
		case i <= unavailable:
			s.expect(pods, tuple{0, minOne + 1, minTwo, 2 * size})
		case i-unavailable <= minTwo-(minOne+1):
			s.expect(pods, tuple{0, (minOne + 1) + (i - unavailable), minTwo, 2 * size})
		default:
			s.expect(pods, tuple{i - unavailable - (minTwo - (minOne + 1)), (minOne + 1) + (i - unavailable), minTwo, 2 * size})
		}
	}
	s.expect(pods, tuple{2, 2 + minTwo, minTwo, 2 * size})
	pods[size-1] = unready(pods[size-1])
	s.expect(pods, tuple{1, 1 + minTwo, minTwo, 2 * size})
	pods[size-2] = unready(pods[size-2])
	s.expect(pods, tuple{0, minTwo, minTwo, 2 * size})
	pods[size-1].Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
	s.expect(pods, tuple{1, 1 + minTwo, minTwo, 2 * size})
}

func TestUpdateDisruptedPods(t *testing.T) {
	pdb := minAvailablePDB(intstr.FromInt32(1))
	pdb.Status.DisruptedPods = map[string]metav1.Time{
		"p1":       t0,                                       // removed: deletion started
		"p2":       metav1.NewTime(t0.Add(-3 * time.Minute)), // removed: expired
		"p3":       metav1.NewTime(t0.Add(-time.Minute)),     // kept
		"notthere": t0,                                       // removed: pod gone
	}
	p1 := dcPod("p1")
	p1.DeletionTimestamp = &t0
	s := &syncer{t: t, pdb: pdb}
	res := s.expect([]v1.Pod{p1, dcPod("p2"), dcPod("p3")}, tuple{0, 1, 1, 3})
	if len(res.Status.DisruptedPods) != 1 || !res.Status.DisruptedPods["p3"].Time.Equal(t0.Add(-time.Minute)) {
		t.Errorf("disruptedPods = %v, want only p3", res.Status.DisruptedPods)
	}
	if res.RecheckAt == nil || !res.RecheckAt.Equal(ptr.To(metav1.NewTime(t0.Add(time.Minute)))) {
		t.Errorf("RecheckAt = %v, want now+1m", res.RecheckAt)
	}
	if !hasEvent(res, "NotDeleted") {
		t.Errorf("events = %v, want NotDeleted for p2", res.Events)
	}
}

func TestDisruptedPodBoundary(t *testing.T) {
	// At exactly t + DeletionTimeout the entry is kept but the pod is healthy again.
	pdb := minAvailablePDB(intstr.FromInt32(0))
	pdb.Status.DisruptedPods = map[string]metav1.Time{"p": metav1.NewTime(t0.Add(-DeletionTimeout))}
	res, err := ComputeStatus(BudgetInput{PDB: pdb, Pods: ptrs([]v1.Pod{dcPod("p")}), Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, kept := res.Status.DisruptedPods["p"]; !kept || res.Status.CurrentHealthy != 1 {
		t.Errorf("got %+v", res.Status)
	}
}

func TestInvalidSelectors(t *testing.T) {
	cases := map[string]*metav1.LabelSelector{
		"illegal value key": {MatchLabels: map[string]string{"k8s.io/too/many/slashes": "value"}},
		"illegal operator":  {MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: "illegal", Values: []string{"bar"}}}},
	}
	for name, sel := range cases {
		t.Run(name, func(t *testing.T) {
			pdb := minAvailablePDB(intstr.FromInt32(3))
			pdb.Spec.Selector = sel
			s := &syncer{t: t, pdb: pdb}
			res := s.expect([]v1.Pod{dcPod("p")}, tuple{0, 0, 0, 0})
			c := findCondition(res.Status.Conditions, policyv1.DisruptionAllowedCondition)
			if res.SyncError == nil || c == nil || c.Reason != policyv1.SyncFailedReason || c.Message != res.SyncError.Error() {
				t.Errorf("got %+v", res)
			}
		})
	}
}

func TestKeepExistingPDBConditionDuringSync(t *testing.T) {
	pdb := minAvailablePDB(intstr.FromInt32(3))
	pdb.Spec.Selector = &metav1.LabelSelector{}
	pdb.Status.Conditions = []metav1.Condition{{Type: "ExistingTestCondition", Status: metav1.ConditionTrue, Message: "This is a test condition", Reason: "Test", LastTransitionTime: t0}}
	s := &syncer{t: t, pdb: pdb}
	res := s.expect(nil, tuple{0, 0, 3, 0})
	if len(res.Status.Conditions) != 2 || findCondition(res.Status.Conditions, "ExistingTestCondition") == nil {
		t.Errorf("conditions = %+v", res.Status.Conditions)
	}
}

func TestSyncIsAFixedPoint(t *testing.T) {
	// A second sync with nothing changed does not write (the controller's
	// write-skip), and keeps the condition's lastTransitionTime.
	s := &syncer{t: t, pdb: minAvailablePDB(intstr.FromInt32(1))}
	pods := []v1.Pod{dcPod("a"), dcPod("b")}
	if !s.sync(pods).Write {
		t.Fatal("first sync must write")
	}
	if res := s.sync(pods); res.Write {
		t.Errorf("second sync wrote %+v", res.Status)
	}
}

func TestFinders(t *testing.T) {
	dep := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "dep", Namespace: "default", UID: "dep-uid"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](10)}}
	ss := appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "foobar", Namespace: "default", UID: "ss-uid"}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](14)}}
	base := Workloads{
		ReplicaSets:            []*appsv1.ReplicaSet{rs("foobar", "rs-uid", 10)},
		ReplicationControllers: []*v1.ReplicationController{rc("foobar", "rc-uid", 12)},
		StatefulSets:           []*appsv1.StatefulSet{&ss},
	}
	withDep := func(depAPIVersion, depKind string) Workloads {
		w := base
		r := rs("foobar", "rs-uid", 5)
		r.OwnerReferences = []metav1.OwnerReference{{APIVersion: depAPIVersion, Kind: depKind, Name: "dep", UID: "dep-uid", Controller: ptr.To(true)}}
		w.ReplicaSets = []*appsv1.ReplicaSet{r}
		w.Deployments = []*appsv1.Deployment{&dep}
		return w
	}
	cases := map[string]struct {
		w          Workloads
		apiVersion string
		kind       string
		uid        types.UID
		want       *ScaleTarget
	}{
		// TestBasicFinderFunctions
		"replicaset controller with apps group":    {base, "apps/v1", "ReplicaSet", "rs-uid", &ScaleTarget{"rs-uid", 10}},
		"replicaset controller with invalid group": {base, "invalid/v1", "ReplicaSet", "rs-uid", nil},
		"replicationcontroller with empty group":   {base, "/v1", "ReplicationController", "rc-uid", &ScaleTarget{"rc-uid", 12}},
		"replicationcontroller with invalid group": {base, "apps/v1", "ReplicationController", "rc-uid", nil},
		"statefulset controller with apps group":   {base, "apps/v1", "StatefulSet", "ss-uid", &ScaleTarget{"ss-uid", 14}},
		"statefulset controller with invalid kind": {base, "apps/v1", "ReplicaSet", "ss-uid", nil},
		"uid mismatch": {base, "apps/v1", "StatefulSet", "other", nil},
		// TestDeploymentFinderFunction: only the happy path counts the Deployment.
		"deployment happy path":                           {withDep("extensions/v1", "Deployment"), "apps/v1", "ReplicaSet", "rs-uid", &ScaleTarget{"dep-uid", 10}},
		"deployment: invalid rs apiVersion":               {withDep("apps/v1", "Deployment"), "invalid/v1", "ReplicaSet", "rs-uid", nil},
		"deployment: invalid rs kind":                     {withDep("apps/v1", "Deployment"), "apps/v1", "InvalidKind", "rs-uid", nil},
		"deployment: invalid deployment apiVersion":       {withDep("deployment/v1", "Deployment"), "extensions/v1", "ReplicaSet", "rs-uid", nil},
		"deployment: invalid deployment kind (RS counts)": {withDep("extensions/v1", "InvalidKind"), "apps/v1", "ReplicaSet", "rs-uid", &ScaleTarget{"rs-uid", 5}},
		"deployment missing: the RS's /scale counts":      {func() Workloads { w := withDep("apps/v1", "Deployment"); w.Deployments = nil; return w }(), "apps/v1", "ReplicaSet", "rs-uid", &ScaleTarget{"rs-uid", 5}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			name := "foobar"
			got, found, err := tc.w.Resolve(metav1.OwnerReference{APIVersion: tc.apiVersion, Kind: tc.kind, Name: name, UID: tc.uid}, "default")
			if err != nil {
				t.Fatal(err)
			}
			if (tc.want != nil) != found || (found && got != *tc.want) {
				t.Errorf("got %+v found=%v, want %+v", got, found, tc.want)
			}
		})
	}
}

func TestStalePodDisruption(t *testing.T) {
	dt := func(s v1.ConditionStatus) []v1.PodCondition {
		return []v1.PodCondition{{Type: v1.DisruptionTarget, Status: s, LastTransitionTime: t0}}
	}
	cases := map[string]struct {
		conds       []v1.PodCondition
		deleting    bool
		phase       v1.PodPhase
		passed      time.Duration
		wantTracked bool
		wantAfter   time.Duration
	}{
		"stale pod disruption":       {conds: dt(v1.ConditionTrue), passed: 2*time.Minute + time.Second, wantTracked: true, wantAfter: 0},
		"pod disruption in progress": {conds: dt(v1.ConditionTrue), passed: 2*time.Minute - time.Second, wantTracked: true, wantAfter: time.Second},
		"pod disruption actuated":    {conds: dt(v1.ConditionTrue), deleting: true, passed: 3 * time.Minute},
		"no pod disruption":          {deleting: true, passed: 3 * time.Minute},
		"pod disruption cleared":     {conds: dt(v1.ConditionFalse), passed: 3 * time.Minute},
		"terminal pod":               {conds: dt(v1.ConditionTrue), phase: v1.PodFailed, passed: 3 * time.Minute},
		"added by the kubelet": {conds: []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonTerminationByKubelet, LastTransitionTime: t0}},
			passed: 3 * time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &v1.Pod{Status: v1.PodStatus{Conditions: tc.conds, Phase: tc.phase}}
			if tc.deleting {
				p.DeletionTimestamp = &t0
			}
			tracked, after, err := StaleDisruptionTarget(StaleInput{Pod: p, Now: metav1.NewTime(t0.Add(tc.passed))})
			if err != nil {
				t.Fatal(err)
			}
			if tracked != tc.wantTracked || after != tc.wantAfter {
				t.Errorf("got (%v, %v), want (%v, %v)", tracked, after, tc.wantTracked, tc.wantAfter)
			}
		})
	}
}

func TestStaleDisruptionTargetInvalidInput(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	cases := map[string]struct {
		in     StaleInput
		fields []string
		text   string
	}{
		"nil pod": {in: StaleInput{Now: t0}, fields: []string{"StaleInput.Pod"},
			text: "eviction: StaleDisruptionTarget: StaleInput.Pod: Required value"},
		"zero Now": {in: StaleInput{Pod: pod}, fields: []string{"StaleInput.Now"},
			text: "eviction: StaleDisruptionTarget: pod ns/p: StaleInput.Now: Required value: the time of the request is required"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tracked, after, err := StaleDisruptionTarget(tc.in)
			checkInputError(t, err, tc.fields...)
			if tracked || after != 0 {
				t.Errorf("got (%v, %v) with an error", tracked, after)
			}
			if err != nil && err.Error() != tc.text {
				t.Errorf("error text %q, want %q", err, tc.text)
			}
		})
	}
}

func TestComputeStatusInvalidInput(t *testing.T) {
	pods := []*v1.Pod{ptr.To(dcPod("a")), nil}
	cases := map[string]struct {
		in     BudgetInput
		fields []string
	}{
		"nil PDB":  {in: BudgetInput{Now: t0}, fields: []string{"BudgetInput.PDB"}},
		"nil pod":  {in: BudgetInput{PDB: minAvailablePDB(intstr.FromInt32(1)), Pods: pods, Now: t0}, fields: []string{"BudgetInput.Pods[1]"}},
		"zero Now": {in: BudgetInput{PDB: minAvailablePDB(intstr.FromInt32(1))}, fields: []string{"BudgetInput.Now"}},
		"all":      {in: BudgetInput{Pods: pods}, fields: []string{"BudgetInput.PDB", "BudgetInput.Pods[1]", "BudgetInput.Now"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := ComputeStatus(tc.in)
			checkInputError(t, err, tc.fields...)
			if res.Write || res.SyncError != nil {
				t.Errorf("got %+v with an error", res)
			}
		})
	}
	_, err := ComputeStatus(BudgetInput{PDB: minAvailablePDB(intstr.FromInt32(1))})
	if want := "eviction: ComputeStatus: pdb default/foobar: BudgetInput.Now: Required value: the time of the request is required"; err == nil || err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
}

func TestNoScaleResolver(t *testing.T) {
	res, err := ComputeStatus(BudgetInput{PDB: maxUnavailablePDB(intstr.FromInt32(1)), Pods: ptrs([]v1.Pod{owned(dcPod("p"), "apps/v1", "ReplicaSet", "x", "x")}), Now: t0})
	if err != nil || !errors.Is(res.SyncError, ErrNoScaleResolver) || res.SyncError.Error() != `found no controllers for pod "p"` {
		t.Errorf("got %+v, %v", res, err)
	}
}
