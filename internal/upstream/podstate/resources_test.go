package podstate_test

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	resourcehelper "k8s.io/component-helpers/resource"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/internal/resources"
	"github.com/podstatus/podstatus/podstate/podstatetest"
)

// kubeletOpts are the options the kubelet v1.37.0 passes to PodRequests and PodLimits for
// the pod-level status with default gates (convertStatusToAPIStatus in
// pkg/kubelet/kubelet_pods.go): PodLevelResources on, DRANodeAllocatableResources off.
var kubeletOpts = resourcehelper.PodResourcesOptions{}

// sameList reports whether a and b hold the same quantities by value and by their
// serialized form, as the status carries them.
func sameList(a, b v1.ResourceList) bool {
	return apiequality.Semantic.DeepEqual(a, b) && jsonOf(a) == jsonOf(b)
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestDifferentialPodRequests compares internal/resources' PodRequests and PodLimits with
// k8s.io/component-helpers/resource v0.37.0's on generated pods (containers, sidecars
// and init containers with requests and limits in several spellings, pod-level
// resources, overhead).
func TestDifferentialPodRequests(t *testing.T) {
	var cases, podLevel, sidecars atomic.Int64
	rapid.Check(t, func(t *rapid.T) {
		pod := drawInput(t).Pod
		if got, want := resources.PodRequests(pod, resources.Options{}), resourcehelper.PodRequests(pod, kubeletOpts); !sameList(got, want) {
			t.Fatalf("PodRequests = %s, component-helpers %s", jsonOf(got), jsonOf(want))
		}
		if got, want := resources.PodLimits(pod, resources.Options{}), resourcehelper.PodLimits(pod, kubeletOpts); !sameList(got, want) {
			t.Fatalf("PodLimits = %s, component-helpers %s", jsonOf(got), jsonOf(want))
		}
		// Without the PodLevelResources gate.
		skip := resourcehelper.PodResourcesOptions{SkipPodLevelResources: true}
		if got, want := resources.PodRequests(pod, resources.Options{NoPodLevelResources: true}), resourcehelper.PodRequests(pod, skip); !sameList(got, want) {
			t.Fatalf("PodRequests without pod-level resources = %s, component-helpers %s", jsonOf(got), jsonOf(want))
		}
		if got, want := resources.PodLimits(pod, resources.Options{NoPodLevelResources: true}), resourcehelper.PodLimits(pod, skip); !sameList(got, want) {
			t.Fatalf("PodLimits without pod-level resources = %s, component-helpers %s", jsonOf(got), jsonOf(want))
		}
		cases.Add(1)
		if resourcehelper.IsPodLevelResourcesSet(pod) {
			podLevel.Add(1)
		}
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
				sidecars.Add(1)
				break
			}
		}
	})
	msg := fmt.Sprintf("differential: %d pods' requests and limits agree with component-helpers v0.37.0 (pod-level resources in %d, sidecars in %d)",
		cases.Load(), podLevel.Load(), sidecars.Load())
	t.Log(msg)
	fmt.Println(msg)
}

// TestDifferentialPodLevelStatus compares the pod-level allocatedResources and resources
// podstate.Generate writes with the kubelet v1.37.0's (convertStatusToAPIStatus,
// getEffectiveAllocatedResources and convertToAPIPodLevelResourcesStatus in
// pkg/kubelet/kubelet_pods.go). convertToAPIPodLevelResourcesStatus is a method of the
// Kubelet that reads its containerManager, which a test outside the package cannot set,
// and the cgroup conversions it calls (pkg/kubelet/cm) pull in cadvisor; so the kubelet's
// result is composed here from component-helpers' PodRequests and PodLimits, which it
// calls, following its steps for the two cases that need no cgroup: a pod the server
// does not show Running (the effective allocated resources) and a Running pod whose
// cgroup was not read (kubemark's stub container manager answers "not implemented").
// The conversions of read cgroup values are covered by podstate's table tests.
func TestDifferentialPodLevelStatus(t *testing.T) {
	var cases, running, kept atomic.Int64
	rapid.Check(t, func(t *rapid.T) {
		in := drawInput(t)
		in.PodCgroup = nil
		if in.OldStatus != nil && rapid.Bool().Draw(t, "oldRunning") {
			// Bias towards the case whose values come from the previous status.
			in.OldStatus.Phase = v1.PodRunning
			r := podstatetest.Requirements().Draw(t, "oldResources")
			in.OldStatus.Resources = &r
		}
		s, old := generate(t, in)
		pod := in.Pod
		if want := resourcehelper.PodRequests(pod, kubeletOpts); !sameList(s.AllocatedResources, want) {
			t.Fatalf("allocatedResources = %s, kubelet %s", jsonOf(s.AllocatedResources), jsonOf(want))
		}
		want := &v1.ResourceRequirements{}
		if pod.Spec.Resources != nil {
			want = pod.Spec.Resources.DeepCopy()
		}
		if pod.Status.Phase != v1.PodRunning {
			want.Requests = resourcehelper.PodRequests(pod, kubeletOpts)
			want.Limits = resourcehelper.PodLimits(pod, kubeletOpts)
		} else {
			running.Add(1)
			if want.Requests == nil {
				want.Requests = v1.ResourceList{}
			}
			if want.Limits == nil {
				want.Limits = v1.ResourceList{}
			}
			// No cgroup values: CPU request, CPU limit and memory limit come from the
			// previous status when it was Running.
			if old.Phase == v1.PodRunning && old.Resources != nil {
				for _, k := range []struct {
					name     v1.ResourceName
					from, to v1.ResourceList
				}{
					{v1.ResourceCPU, old.Resources.Requests, want.Requests},
					{v1.ResourceCPU, old.Resources.Limits, want.Limits},
					{v1.ResourceMemory, old.Resources.Limits, want.Limits},
				} {
					if q, ok := k.from[k.name]; ok {
						k.to[k.name] = q.DeepCopy()
						kept.Add(1)
					}
				}
			}
			if _, ok := want.Requests[v1.ResourceMemory]; !ok {
				if q, ok := resourcehelper.PodRequests(pod, kubeletOpts)[v1.ResourceMemory]; ok {
					want.Requests[v1.ResourceMemory] = q
				}
			}
		}
		if !apiequality.Semantic.DeepEqual(s.Resources, want) || jsonOf(s.Resources) != jsonOf(want) {
			t.Fatalf("resources = %s, kubelet %s", jsonOf(s.Resources), jsonOf(want))
		}
		if (s.Resources.Requests == nil) != (want.Requests == nil) || (s.Resources.Limits == nil) != (want.Limits == nil) {
			t.Fatalf("resources lists nil-ness differs: %#v, kubelet %#v", s.Resources, want)
		}
		cases.Add(1)
	})
	msg := fmt.Sprintf("differential: %d pod-level statuses agree with the kubelet v1.37.0 (server phase Running in %d, previous values kept %d times)",
		cases.Load(), running.Load(), kept.Load())
	t.Log(msg)
	fmt.Println(msg)
	if !t.Failed() && cases.Load() < minChecks && !flagSet("rapid.checks") {
		t.Errorf("only %d cases ran, want at least %d", cases.Load(), minChecks)
	}
}
