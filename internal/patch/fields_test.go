package patch

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// knownFields is every JSON field reachable from v1.PodStatus (k8s.io/api v0.37.0) with its
// tags, as the encoders in this package were written for. When k8s.io/api changes, this test
// fails: teach the encoders (canonical.go, elements.go, status.go) the new field or
// strategy, run the property tests in package status, then update this list.
const knownFields = `
ContainerExtendedResourceRequest.ContainerName json:"containerName"
ContainerExtendedResourceRequest.RequestName json:"requestName"
ContainerExtendedResourceRequest.ResourceName json:"resourceName"
ContainerState.Running json:"running,omitempty"
ContainerState.Terminated json:"terminated,omitempty"
ContainerState.Waiting json:"waiting,omitempty"
ContainerStateRunning.StartedAt json:"startedAt,omitempty"
ContainerStateTerminated.ContainerID json:"containerID,omitempty"
ContainerStateTerminated.ExitCode json:"exitCode"
ContainerStateTerminated.FinishedAt json:"finishedAt,omitempty"
ContainerStateTerminated.Message json:"message,omitempty"
ContainerStateTerminated.Reason json:"reason,omitempty"
ContainerStateTerminated.Signal json:"signal,omitempty"
ContainerStateTerminated.StartedAt json:"startedAt,omitempty"
ContainerStateWaiting.Message json:"message,omitempty"
ContainerStateWaiting.Reason json:"reason,omitempty"
ContainerStatus.AllocatedResources json:"allocatedResources,omitempty"
ContainerStatus.AllocatedResourcesStatus json:"allocatedResourcesStatus,omitempty" patchStrategy:"merge" patchMergeKey:"name"
ContainerStatus.ContainerID json:"containerID,omitempty"
ContainerStatus.Image json:"image"
ContainerStatus.ImageID json:"imageID"
ContainerStatus.LastTerminationState json:"lastState,omitempty"
ContainerStatus.Name json:"name"
ContainerStatus.Ready json:"ready"
ContainerStatus.Resources json:"resources,omitempty"
ContainerStatus.RestartCount json:"restartCount"
ContainerStatus.Started json:"started,omitempty"
ContainerStatus.State json:"state,omitempty"
ContainerStatus.StopSignal json:"stopSignal,omitempty"
ContainerStatus.User json:"user,omitempty"
ContainerStatus.VolumeMounts json:"volumeMounts,omitempty" patchStrategy:"merge" patchMergeKey:"mountPath"
ContainerUser.Linux json:"linux,omitempty"
HostIP.IP json:"ip"
ImageVolumeStatus.ImageRef json:"imageRef,omitempty"
LinuxContainerUser.GID json:"gid"
LinuxContainerUser.SupplementalGroups json:"supplementalGroups,omitempty"
LinuxContainerUser.UID json:"uid"
NodeAllocatableMappedResources.Name json:"name"
NodeAllocatableMappedResources.Quantity json:"quantity"
NodeAllocatableOverheadResources.Name json:"name"
NodeAllocatableOverheadResources.PerContainer json:"perContainer,omitempty"
NodeAllocatableOverheadResources.PerPod json:"perPod,omitempty"
NodeAllocatableResourceClaimStatus.Containers json:"containers,omitempty"
NodeAllocatableResourceClaimStatus.Mapping json:"mapping,omitempty" patchStrategy:"merge" patchMergeKey:"name"
NodeAllocatableResourceClaimStatus.Overhead json:"overhead,omitempty" patchStrategy:"merge" patchMergeKey:"name"
NodeAllocatableResourceClaimStatus.ResourceClaimName json:"resourceClaimName"
PodCondition.LastProbeTime json:"lastProbeTime,omitempty"
PodCondition.LastTransitionTime json:"lastTransitionTime,omitempty"
PodCondition.Message json:"message,omitempty"
PodCondition.ObservedGeneration json:"observedGeneration,omitempty"
PodCondition.Reason json:"reason,omitempty"
PodCondition.Status json:"status"
PodCondition.Type json:"type"
PodExtendedResourceClaimStatus.RequestMappings json:"requestMappings"
PodExtendedResourceClaimStatus.ResourceClaimName json:"resourceClaimName"
PodIP.IP json:"ip"
PodResourceClaimStatus.Name json:"name"
PodResourceClaimStatus.ResourceClaimName json:"resourceClaimName,omitempty"
PodStatus.AllocatedResources json:"allocatedResources,omitempty"
PodStatus.Conditions json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"
PodStatus.ContainerStatuses json:"containerStatuses,omitempty"
PodStatus.EphemeralContainerStatuses json:"ephemeralContainerStatuses,omitempty"
PodStatus.ExtendedResourceClaimStatus json:"extendedResourceClaimStatus,omitempty"
PodStatus.HostIP json:"hostIP,omitempty"
PodStatus.HostIPs json:"hostIPs,omitempty" patchStrategy:"merge" patchMergeKey:"ip"
PodStatus.InitContainerStatuses json:"initContainerStatuses,omitempty"
PodStatus.Message json:"message,omitempty"
PodStatus.NodeAllocatableResourceClaimStatuses json:"nodeAllocatableResourceClaimStatuses,omitempty" patchStrategy:"merge" patchMergeKey:"resourceClaimName"
PodStatus.NominatedNodeName json:"nominatedNodeName,omitempty"
PodStatus.ObservedGeneration json:"observedGeneration,omitempty"
PodStatus.Phase json:"phase,omitempty"
PodStatus.PodIP json:"podIP,omitempty"
PodStatus.PodIPs json:"podIPs,omitempty" patchStrategy:"merge" patchMergeKey:"ip"
PodStatus.QOSClass json:"qosClass,omitempty"
PodStatus.Reason json:"reason,omitempty"
PodStatus.Resize json:"resize,omitempty"
PodStatus.ResourceClaimStatuses json:"resourceClaimStatuses,omitempty" patchStrategy:"merge,retainKeys" patchMergeKey:"name"
PodStatus.Resources json:"resources,omitempty"
PodStatus.StartTime json:"startTime,omitempty"
PodStatus.VolumeHealth json:"volumeHealth,omitempty"
PodVolumeHealth.HealthConditions json:"healthConditions,omitempty" patchStrategy:"merge" patchMergeKey:"status"
PodVolumeHealth.LastTransitionTime json:"lastTransitionTime,omitempty"
PodVolumeHealth.Name json:"name"
ResourceClaim.Name json:"name"
ResourceClaim.Request json:"request,omitempty"
ResourceHealth.Health json:"health,omitempty"
ResourceHealth.Message json:"message,omitempty"
ResourceHealth.ResourceID json:"resourceID"
ResourceRequirements.Claims json:"claims,omitempty"
ResourceRequirements.Limits json:"limits,omitempty"
ResourceRequirements.Requests json:"requests,omitempty"
ResourceStatus.Name json:"name"
ResourceStatus.Resources json:"resources,omitempty"
VolumeHealthCondition.Message json:"message,omitempty"
VolumeHealthCondition.Reason json:"reason"
VolumeHealthCondition.Status json:"status"
VolumeMountStatus.MountPath json:"mountPath"
VolumeMountStatus.Name json:"name"
VolumeMountStatus.ReadOnly json:"readOnly,omitempty"
VolumeMountStatus.RecursiveReadOnly json:"recursiveReadOnly,omitempty"
VolumeMountStatus.VolumeStatus json:"volumeStatus,omitempty"
VolumeStatus.Image json:"image,omitempty"
`

// podStatusFields lists every field reachable from v1.PodStatus, leaves (times, quantities,
// scalars) not descended into.
func podStatusFields() []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t == reflect.TypeFor[metav1.Time]() || t == reflect.TypeFor[resource.Quantity]() {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			line := t.Name() + "." + f.Name + ` json:"` + f.Tag.Get("json") + `"`
			if s := f.Tag.Get("patchStrategy"); s != "" {
				line += ` patchStrategy:"` + s + `" patchMergeKey:"` + f.Tag.Get("patchMergeKey") + `"`
			}
			out = append(out, line)
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[v1.PodStatus]())
	slices.Sort(out)
	return out
}

func TestPodStatusFieldsAreKnown(t *testing.T) {
	got := podStatusFields()
	want := strings.Split(strings.TrimSpace(knownFields), "\n")
	for _, f := range got {
		if !slices.Contains(want, f) {
			t.Errorf("new or changed field, unknown to the encoders: %s", f)
		}
	}
	for _, f := range want {
		if !slices.Contains(got, f) {
			t.Errorf("field gone or changed: %s", f)
		}
	}
}
