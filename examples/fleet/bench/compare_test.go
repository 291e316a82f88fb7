package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func readStatus(t *testing.T, agent string) *v1.PodStatus {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "statuses", agent+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s v1.PodStatus
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// The statuses in testdata/statuses are the first pod of the last run of each agent
// (fleet-bench --compare fleet,kwok,kubemark --pods 1000 --nodes 10 --runs 3 --delete,
// samplePodStatus of its --json report). The differences wanted here were read off those files by hand.
func TestCompareStatusesOfARealRun(t *testing.T) {
	got, err := CompareStatuses(map[string]*v1.PodStatus{
		AgentFleet: readStatus(t, AgentFleet), AgentKWOK: readStatus(t, AgentKWOK), AgentKubemark: readStatus(t, AgentKubemark),
	})
	if err != nil {
		t.Fatal(err)
	}
	all := func(fleet, kwok, kubemark string) map[string]string {
		return map[string]string{AgentFleet: fleet, AgentKWOK: kwok, AgentKubemark: kubemark}
	}
	want := map[string]map[string]string{
		"conditions[ContainersReady].observedGeneration": all("1", "", "1"),
		"conditions[Initialized].observedGeneration":     all("1", "", "1"),
		"conditions[PodReadyToStartContainers]":          all("present", "", "present"),
		"conditions[PodScheduled]":                       all("present", "", "present"),
		"conditions[Ready].observedGeneration":           all("1", "", "1"),
		"containerStatuses[pause].containerID":           all("containerd://<id>", "", "fakeRuntime://<id>"),
		"containerStatuses[pause].imageID":               all("registry.k8s.io/pause@sha256:95707326d9982f5d8e1a19c0498aecff17a37a85f03c710eec6175fd097f2392", `""`, "registry.k8s.io/pause:3.10"),
		"containerStatuses[pause].resources":             all("{}", "", "{}"),
		"containerStatuses[pause].started":               all("true", "", ""),
		"observedGeneration":                             all("1", "", "1"),
		"resources":                                      all("{}", "", "{}"),
	}
	gotMap := map[string]map[string]string{}
	for i, d := range got {
		gotMap[d.Field] = d.Values
		if d.Reason == "" {
			t.Errorf("%s: no reason for the difference %v", d.Field, d.Values)
		}
		if i > 0 && got[i-1].Field >= d.Field {
			t.Errorf("fields not sorted: %s before %s", got[i-1].Field, d.Field)
		}
	}
	if diff := cmp.Diff(want, gotMap); diff != "" {
		t.Errorf("differences (-want +got):\n%s", diff)
	}
}

// Two pods of one agent differ only in what CompareStatuses normalises.
func TestCompareStatusesNormalisesWhatDiffersBetweenPods(t *testing.T) {
	pod := func(sec int64, ip, id string) *v1.PodStatus {
		ts := metav1.Unix(sec, 0)
		return &v1.PodStatus{
			Phase:      v1.PodRunning,
			HostIP:     ip,
			HostIPs:    []v1.HostIP{{IP: ip}},
			PodIP:      ip,
			PodIPs:     []v1.PodIP{{IP: ip}},
			StartTime:  &ts,
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: ts}},
			ContainerStatuses: []v1.ContainerStatus{{
				Name: "c", ContainerID: "containerd://" + id,
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: ts}},
			}},
		}
	}
	got, err := CompareStatuses(map[string]*v1.PodStatus{"a": pod(1, "10.0.0.1", "abc"), "b": pod(2, "10.0.0.2", "def")})
	if err != nil || len(got) != 0 {
		t.Fatalf("CompareStatuses = %v, %v; want no difference", got, err)
	}

	// What is not normalised shows, with the reason of the table for a field it lists and
	// none for the others.
	b := pod(2, "10.0.0.2", "def")
	b.ContainerStatuses[0].ContainerID = "cri-o://def"
	b.Conditions[0].Status = v1.ConditionFalse
	b.Conditions[0].Reason = "Why"
	b.Message = "m"
	got, err = CompareStatuses(map[string]*v1.PodStatus{"a": pod(1, "10.0.0.1", "abc"), "b": b, "none": nil})
	if err != nil {
		t.Fatal(err)
	}
	want := []FieldDiff{
		{Field: "conditions[Ready].reason", Values: map[string]string{"a": "", "b": "Why"}},
		{Field: "conditions[Ready].status", Values: map[string]string{"a": "True", "b": "False"}},
		{Field: "containerStatuses[c].containerID", Values: map[string]string{"a": "containerd://<id>", "b": "cri-o://<id>"}, Reason: knownDifferences["containerStatuses[*].containerID"]},
		{Field: "message", Values: map[string]string{"a": "", "b": "m"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("differences (-want +got):\n%s", diff)
	}
}

// The reasons apply to any element of a list.
func TestReasonFor(t *testing.T) {
	if reasonFor("containerStatuses[sidecar].started") != knownDifferences["containerStatuses[*].started"] {
		t.Error("containerStatuses[sidecar].started does not find the reason of containerStatuses[*].started")
	}
	if reasonFor("conditions[Ready].status") != "" {
		t.Error("conditions[Ready].status has a reason, want none")
	}
}
