package statustest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/statustest"
)

var _ status.Client = (*statustest.Server)(nil)

var t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

func testPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1", Labels: map[string]string{"app": "a"}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "img"}}},
		Status: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: t0},
		}},
	}
}

// patchTo builds the kubelet's patch from the pod's stored status to next.
func patchTo(t *testing.T, pod *v1.Pod, next v1.PodStatus) []byte {
	t.Helper()
	p, _ := status.PatchBytes(pod.UID, pod.Status, next)
	return p
}

func TestGetPodNotFound(t *testing.T) {
	s := statustest.NewServer()
	_, err := s.GetPod(context.Background(), "ns", "missing")
	if !apierrors.IsNotFound(err) {
		t.Fatalf("GetPod of a missing pod = %v, want 404 NotFound", err)
	}
	_, err = s.PatchPodStatus(context.Background(), "ns", "missing", []byte(`{}`))
	if !apierrors.IsNotFound(err) {
		t.Fatalf("PatchPodStatus of a missing pod = %v, want 404 NotFound", err)
	}
	if g, p := s.Requests(statustest.VerbGet), s.Requests(statustest.VerbPatch); g != 1 || p != 1 {
		t.Fatalf("requests = GET %d, PATCH %d; want 1 and 1", g, p)
	}
}

func TestPatchChangesOnlyStatusAndBumpsResourceVersion(t *testing.T) {
	s := statustest.NewServer(testPod())
	ctx := context.Background()
	before, err := s.GetPod(ctx, "ns", "p")
	if err != nil {
		t.Fatal(err)
	}
	next := *before.Status.DeepCopy()
	next.Phase = v1.PodRunning
	next.Conditions = append(next.Conditions, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse})
	p := patchTo(t, before, next)
	// A status patch cannot change labels or the spec, whatever it says.
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		t.Fatal(err)
	}
	m["metadata"].(map[string]any)["labels"] = map[string]any{"app": "b"}
	m["spec"] = map[string]any{"nodeName": "elsewhere"}
	p, _ = json.Marshal(m)

	got, err := s.PatchPodStatus(ctx, "ns", "p", p)
	if err != nil {
		t.Fatalf("PatchPodStatus: %v", err)
	}
	if got.Status.Phase != v1.PodRunning || len(got.Status.Conditions) != 2 || got.Status.Conditions[1].Type != v1.PodReady {
		t.Fatalf("status after patch = %+v", got.Status)
	}
	if got.Labels["app"] != "a" || got.Spec.NodeName != "" {
		t.Fatalf("a status patch changed metadata or spec: labels %v, nodeName %q", got.Labels, got.Spec.NodeName)
	}
	if got.ResourceVersion == before.ResourceVersion {
		t.Fatalf("resourceVersion not bumped: %s", got.ResourceVersion)
	}
	stored, _ := s.Peek("ns", "p")
	if stored.ResourceVersion != got.ResourceVersion || stored.Status.Phase != v1.PodRunning {
		t.Fatalf("stored pod differs from the returned one")
	}
	recs := s.Patches()
	if len(recs) != 1 || string(recs[0].Patch) != string(p) || recs[0].Err != nil || recs[0].ResourceVersion != got.ResourceVersion {
		t.Fatalf("recorded patches = %+v", recs)
	}
}

func TestPatchUIDMismatchIsInvalid(t *testing.T) {
	s := statustest.NewServer(testPod())
	_, err := s.PatchPodStatus(context.Background(), "ns", "p", []byte(`{"metadata":{"uid":"other"},"status":{"phase":"Running"}}`))
	if !apierrors.IsInvalid(err) {
		t.Fatalf("PATCH with another UID = %v, want 422 Invalid", err)
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != 422 || se.ErrStatus.Details == nil ||
		len(se.ErrStatus.Details.Causes) != 1 || se.ErrStatus.Details.Causes[0].Field != "metadata.uid" ||
		!strings.Contains(se.ErrStatus.Details.Causes[0].Message, "field is immutable") {
		t.Fatalf("error details = %#v", se)
	}
	got, _ := s.Peek("ns", "p")
	if got.Status.Phase != v1.PodPending {
		t.Fatalf("a rejected patch was applied: phase %s", got.Status.Phase)
	}
}

func TestPatchResourceVersionPrecondition(t *testing.T) {
	s := statustest.NewServer(testPod())
	pod, _ := s.Peek("ns", "p")
	stale := fmt.Sprintf(`{"metadata":{"resourceVersion":"%s0"},"status":{"phase":"Running"}}`, pod.ResourceVersion)
	if _, err := s.PatchPodStatus(context.Background(), "ns", "p", []byte(stale)); !apierrors.IsConflict(err) {
		t.Fatalf("PATCH with a stale resourceVersion = %v, want 409 Conflict", err)
	}
	if _, err := s.PatchPodStatus(context.Background(), "ns", "p", []byte(`{"metadata":{"resourceVersion":null},"status":{"message":"m"}}`)); err != nil {
		t.Fatalf("PATCH clearing the resourceVersion must be unconditional: %v", err)
	}
	pod, _ = s.Peek("ns", "p")
	fresh := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"status":{"phase":"Running"}}`, pod.ResourceVersion)
	if _, err := s.PatchPodStatus(context.Background(), "ns", "p", []byte(fresh)); err != nil {
		t.Fatalf("PATCH with the current resourceVersion: %v", err)
	}
}

func TestPatchMalformedIsBadRequest(t *testing.T) {
	s := statustest.NewServer(testPod())
	if _, err := s.PatchPodStatus(context.Background(), "ns", "p", []byte(`{"status":`)); !apierrors.IsBadRequest(err) {
		t.Fatalf("malformed PATCH = %v, want 400 BadRequest", err)
	}
}

func TestNoopPatchDoesNotWrite(t *testing.T) {
	s := statustest.NewServer(testPod())
	var events int
	s.OnWrite(func(statustest.Event) { events++ })
	pod, _ := s.Peek("ns", "p")
	got, err := s.PatchPodStatus(context.Background(), "ns", "p", patchTo(t, pod, pod.Status))
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != pod.ResourceVersion || events != 0 {
		t.Fatalf("no-op patch wrote: resourceVersion %s -> %s, %d events", pod.ResourceVersion, got.ResourceVersion, events)
	}
}

func TestReturnsCopies(t *testing.T) {
	in := testPod()
	s := statustest.NewServer(in)
	in.Status.Phase = v1.PodFailed // the caller's pod is not the stored one
	a, _ := s.GetPod(context.Background(), "ns", "p")
	a.Status.Conditions[0].Status = v1.ConditionFalse
	a.Labels["app"] = "changed"
	b, _ := s.Peek("ns", "p")
	if b.Status.Phase != v1.PodPending || b.Status.Conditions[0].Status != v1.ConditionTrue || b.Labels["app"] != "a" {
		t.Fatalf("the store was changed through a returned or passed pod: %+v", b)
	}
	next := *b.Status.DeepCopy()
	next.Phase = v1.PodRunning
	c, err := s.PatchPodStatus(context.Background(), "ns", "p", patchTo(t, b, next))
	if err != nil {
		t.Fatal(err)
	}
	c.Status.Phase = v1.PodSucceeded
	if d, _ := s.Peek("ns", "p"); d.Status.Phase != v1.PodRunning {
		t.Fatalf("the store was changed through a patched pod: %s", d.Status.Phase)
	}
}

func TestContextDone(t *testing.T) {
	s := statustest.NewServer(testPod())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.GetPod(ctx, "ns", "p"); !errors.Is(err, context.Canceled) {
		t.Fatalf("GetPod with a done context = %v", err)
	}
	if _, err := s.PatchPodStatus(ctx, "ns", "p", []byte(`{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("PatchPodStatus with a done context = %v", err)
	}
	if s.Requests(statustest.VerbGet)+s.Requests(statustest.VerbPatch) != 0 {
		t.Fatalf("requests that never left the client were counted")
	}
}

func TestCreateDeleteRecreate(t *testing.T) {
	s := statustest.NewServer()
	p := testPod()
	p.UID = ""
	created, err := s.Create(p)
	if err != nil || created.UID == "" || created.ResourceVersion == "" {
		t.Fatalf("Create = %+v, %v; want a UID and a resourceVersion", created.ObjectMeta, err)
	}
	if _, err := s.Create(p); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second Create = %v, want 409 AlreadyExists", err)
	}
	re, err := s.Recreate("ns", "p")
	if err != nil {
		t.Fatal(err)
	}
	if re.UID == created.UID || re.Labels["app"] != "a" || re.Spec.Containers[0].Name != "c" || re.Status.Phase != v1.PodPending || len(re.Status.Conditions) != 0 {
		t.Fatalf("Recreate = %+v", re)
	}
	// The kubelet's patch for the old pod carries the old UID and is refused.
	next := *created.Status.DeepCopy()
	next.Phase = v1.PodRunning
	if _, err := s.PatchPodStatus(context.Background(), "ns", "p", patchTo(t, created, next)); !apierrors.IsInvalid(err) {
		t.Fatalf("patch for the old UID = %v, want 422 Invalid", err)
	}
	if err := s.Delete("ns", "p"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("ns", "p"); !apierrors.IsNotFound(err) {
		t.Fatalf("second Delete = %v, want 404", err)
	}
	if _, err := s.Recreate("ns", "p"); !apierrors.IsNotFound(err) {
		t.Fatalf("Recreate of a missing pod = %v, want 404", err)
	}
}

func TestSetConditionActsAsAnotherController(t *testing.T) {
	s := statustest.NewServer(testPod())
	before, _ := s.Peek("ns", "p")
	gate := v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionFalse, LastTransitionTime: t0, Reason: "Waiting"}
	got, err := s.SetCondition("ns", "p", gate)
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion == before.ResourceVersion || len(got.Status.Conditions) != 2 || got.Status.Conditions[1].Reason != "Waiting" {
		t.Fatalf("SetCondition (new) = rv %s, %+v", got.ResourceVersion, got.Status.Conditions)
	}
	gate.Status, gate.Reason = v1.ConditionTrue, ""
	got, err = s.SetCondition("ns", "p", gate)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Status.Conditions[1]; c.Status != v1.ConditionTrue || c.Reason != "" || got.Status.Conditions[0].Type != v1.PodScheduled {
		t.Fatalf("SetCondition (replace) = %+v", got.Status.Conditions)
	}
	got, err = s.RemoveCondition("ns", "p", v1.PodScheduled)
	if err != nil || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != "example.com/gate" {
		t.Fatalf("RemoveCondition = %+v, %v", got.Status.Conditions, err)
	}
	if s.Requests(statustest.VerbPatch) != 0 || len(s.Patches()) != 0 {
		t.Fatalf("another controller's writes were counted as the client's")
	}
	if _, err := s.SetCondition("ns", "missing", gate); !apierrors.IsNotFound(err) {
		t.Fatalf("SetCondition on a missing pod = %v, want 404", err)
	}
}

func TestUpdateKeepsIdentity(t *testing.T) {
	s := statustest.NewServer(testPod())
	got, err := s.Update("ns", "p", func(p *v1.Pod) {
		p.UID, p.Name = "stolen", "renamed"
		p.Spec.NodeName = "node-1"
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != "uid-1" || got.Name != "p" || got.Spec.NodeName != "node-1" {
		t.Fatalf("Update = %+v", got.ObjectMeta)
	}
}

func TestOnWriteDeliversEveryWriteInOrder(t *testing.T) {
	s := statustest.NewServer()
	var got []string
	s.OnWrite(func(ev statustest.Event) {
		got = append(got, fmt.Sprintf("%s %s %s", ev.Type, ev.Pod.Name, ev.Pod.ResourceVersion))
		ev.Pod.Labels = map[string]string{"mutated": "yes"} // must not reach the store
	})
	if _, err := s.Create(testPod()); err != nil {
		t.Fatal(err)
	}
	pod, _ := s.Peek("ns", "p")
	next := *pod.Status.DeepCopy()
	next.Phase = v1.PodRunning
	if _, err := s.PatchPodStatus(context.Background(), "ns", "p", patchTo(t, pod, next)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetCondition("ns", "p", v1.PodCondition{Type: "x", Status: v1.ConditionTrue}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("ns", "p"); err != nil {
		t.Fatal(err)
	}
	want := []string{"ADDED p 1", "MODIFIED p 2", "MODIFIED p 3", "DELETED p 4"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
}

func TestOnWriteCallbackMayWrite(t *testing.T) {
	s := statustest.NewServer(testPod())
	var seen []watch.EventType
	s.OnWrite(func(ev statustest.Event) {
		seen = append(seen, ev.Type)
		if ev.Type == watch.Modified && len(ev.Pod.Status.Conditions) == 1 {
			// React to the write by writing again, as a controller would.
			if _, err := s.SetCondition("ns", "p", v1.PodCondition{Type: "reaction", Status: v1.ConditionTrue}); err != nil {
				t.Error(err)
			}
		}
	})
	if _, err := s.Update("ns", "p", func(p *v1.Pod) { p.Labels["x"] = "y" }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Fatalf("events = %v, want the update and the reaction", seen)
	}
}

func TestStoresWhatReadsBackFromJSON(t *testing.T) {
	p := testPod()
	p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(t0.Add(700 * time.Millisecond))
	s := statustest.NewServer(p)
	got, _ := s.Peek("ns", "p")
	if !got.Status.Conditions[0].LastTransitionTime.Time.Equal(t0.Time) {
		t.Fatalf("stored LTT %v, want it truncated to the second like a real server", got.Status.Conditions[0].LastTransitionTime)
	}
	created, err := s.Create(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q"}})
	if err != nil || created.ResourceVersion == "" || created.UID == "" {
		t.Fatalf("Create = %+v, %v", created.ObjectMeta, err)
	}
}
