package patch

import (
	v1 "k8s.io/api/core/v1"
)

// The append* functions below write whole values canonically: the bytes encoding/json writes
// after a round trip through map[string]interface{}, that is with every object's keys
// sorted. Two values get the same bytes exactly when they are equal after a JSON round trip,
// which is how the reference compares atomic values.

func appendCondition(dst []byte, c *v1.PodCondition) []byte {
	dst = append(dst, `{"lastProbeTime":`...)
	dst = appendTime(dst, c.LastProbeTime)
	dst = append(dst, `,"lastTransitionTime":`...)
	dst = appendTime(dst, c.LastTransitionTime)
	if c.Message != "" {
		dst = appendString(append(dst, `,"message":`...), c.Message)
	}
	if c.ObservedGeneration != 0 {
		dst = appendInt(append(dst, `,"observedGeneration":`...), c.ObservedGeneration)
	}
	if c.Reason != "" {
		dst = appendString(append(dst, `,"reason":`...), c.Reason)
	}
	dst = appendString(append(dst, `,"status":`...), string(c.Status))
	dst = appendString(append(dst, `,"type":`...), string(c.Type))
	return append(dst, '}')
}

func appendPodIP(dst []byte, ip *v1.PodIP) []byte {
	return append(appendString(append(dst, `{"ip":`...), ip.IP), '}')
}

func appendHostIP(dst []byte, ip *v1.HostIP) []byte {
	return append(appendString(append(dst, `{"ip":`...), ip.IP), '}')
}

func appendContainerStatus(dst []byte, s *v1.ContainerStatus) []byte {
	dst = append(dst, '{')
	if len(s.AllocatedResources) > 0 {
		dst = appendResourceList(member(dst, "allocatedResources"), s.AllocatedResources)
	}
	if len(s.AllocatedResourcesStatus) > 0 {
		dst = appendList(member(dst, "allocatedResourcesStatus"), s.AllocatedResourcesStatus, appendResourceStatus)
	}
	if s.ContainerID != "" {
		dst = appendString(member(dst, "containerID"), s.ContainerID)
	}
	dst = appendString(member(dst, "image"), s.Image)
	dst = appendString(append(dst, `,"imageID":`...), s.ImageID)
	dst = appendContainerState(append(dst, `,"lastState":`...), &s.LastTerminationState)
	dst = appendString(append(dst, `,"name":`...), s.Name)
	dst = appendBool(append(dst, `,"ready":`...), s.Ready)
	if s.Resources != nil {
		dst = appendResourceRequirements(append(dst, `,"resources":`...), s.Resources)
	}
	dst = appendInt(append(dst, `,"restartCount":`...), int64(s.RestartCount))
	if s.Started != nil {
		dst = appendBool(append(dst, `,"started":`...), *s.Started)
	}
	dst = appendContainerState(append(dst, `,"state":`...), &s.State)
	if s.StopSignal != nil {
		dst = appendString(append(dst, `,"stopSignal":`...), string(*s.StopSignal))
	}
	if s.User != nil {
		dst = appendContainerUser(append(dst, `,"user":`...), s.User)
	}
	if len(s.VolumeMounts) > 0 {
		dst = appendList(append(dst, `,"volumeMounts":`...), s.VolumeMounts, appendVolumeMountStatus)
	}
	return append(dst, '}')
}

func appendContainerState(dst []byte, s *v1.ContainerState) []byte {
	dst = append(dst, '{')
	if r := s.Running; r != nil {
		dst = appendTime(append(dst, `"running":{"startedAt":`...), r.StartedAt)
		dst = append(dst, '}')
	}
	if t := s.Terminated; t != nil {
		dst = append(member(dst, "terminated"), '{')
		if t.ContainerID != "" {
			dst = appendString(member(dst, "containerID"), t.ContainerID)
		}
		dst = appendInt(member(dst, "exitCode"), int64(t.ExitCode))
		dst = appendTime(append(dst, `,"finishedAt":`...), t.FinishedAt)
		if t.Message != "" {
			dst = appendString(append(dst, `,"message":`...), t.Message)
		}
		if t.Reason != "" {
			dst = appendString(append(dst, `,"reason":`...), t.Reason)
		}
		if t.Signal != 0 {
			dst = appendInt(append(dst, `,"signal":`...), int64(t.Signal))
		}
		dst = appendTime(append(dst, `,"startedAt":`...), t.StartedAt)
		dst = append(dst, '}')
	}
	if w := s.Waiting; w != nil {
		dst = append(member(dst, "waiting"), '{')
		if w.Message != "" {
			dst = appendString(member(dst, "message"), w.Message)
		}
		if w.Reason != "" {
			dst = appendString(member(dst, "reason"), w.Reason)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func appendResourceStatus(dst []byte, s *v1.ResourceStatus) []byte {
	dst = appendString(append(dst, `{"name":`...), string(s.Name))
	if len(s.Resources) > 0 {
		dst = appendList(append(dst, `,"resources":`...), s.Resources, appendResourceHealth)
	}
	return append(dst, '}')
}

func appendResourceHealth(dst []byte, h *v1.ResourceHealth) []byte {
	dst = append(dst, '{')
	if h.Health != "" {
		dst = appendString(member(dst, "health"), string(h.Health))
	}
	if h.Message != nil {
		dst = appendString(member(dst, "message"), *h.Message)
	}
	dst = appendString(member(dst, "resourceID"), string(h.ResourceID))
	return append(dst, '}')
}

func appendResourceRequirements(dst []byte, r *v1.ResourceRequirements) []byte {
	dst = append(dst, '{')
	if len(r.Claims) > 0 {
		dst = appendList(member(dst, "claims"), r.Claims, appendResourceClaim)
	}
	if len(r.Limits) > 0 {
		dst = appendResourceList(member(dst, "limits"), r.Limits)
	}
	if len(r.Requests) > 0 {
		dst = appendResourceList(member(dst, "requests"), r.Requests)
	}
	return append(dst, '}')
}

func appendResourceClaim(dst []byte, c *v1.ResourceClaim) []byte {
	dst = appendString(append(dst, `{"name":`...), c.Name)
	if c.Request != "" {
		dst = appendString(append(dst, `,"request":`...), c.Request)
	}
	return append(dst, '}')
}

func appendContainerUser(dst []byte, u *v1.ContainerUser) []byte {
	l := u.Linux
	if l == nil {
		return append(dst, '{', '}')
	}
	dst = appendInt(append(dst, `{"linux":{"gid":`...), l.GID)
	if len(l.SupplementalGroups) > 0 {
		dst = append(dst, `,"supplementalGroups":[`...)
		for i, g := range l.SupplementalGroups {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendInt(dst, g)
		}
		dst = append(dst, ']')
	}
	dst = appendInt(append(dst, `,"uid":`...), l.UID)
	return append(dst, '}', '}')
}

func appendVolumeMountStatus(dst []byte, m *v1.VolumeMountStatus) []byte {
	dst = appendString(append(dst, `{"mountPath":`...), m.MountPath)
	dst = appendString(append(dst, `,"name":`...), m.Name)
	if m.ReadOnly {
		dst = append(dst, `,"readOnly":true`...)
	}
	if m.RecursiveReadOnly != nil {
		dst = appendString(append(dst, `,"recursiveReadOnly":`...), string(*m.RecursiveReadOnly))
	}
	if vs := m.VolumeStatus; vs != nil {
		dst = append(dst, `,"volumeStatus":{`...)
		if img := vs.Image; img != nil {
			dst = append(dst, `"image":{`...)
			if img.ImageRef != "" {
				dst = appendString(append(dst, `"imageRef":`...), img.ImageRef)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func appendPodResourceClaimStatus(dst []byte, s *v1.PodResourceClaimStatus) []byte {
	dst = appendString(append(dst, `{"name":`...), s.Name)
	if s.ResourceClaimName != nil {
		dst = appendString(append(dst, `,"resourceClaimName":`...), *s.ResourceClaimName)
	}
	return append(dst, '}')
}

func appendExtendedResourceClaimStatus(dst []byte, s *v1.PodExtendedResourceClaimStatus) []byte {
	dst = appendRequestMappings(append(dst, `{"requestMappings":`...), s.RequestMappings)
	dst = appendString(append(dst, `,"resourceClaimName":`...), s.ResourceClaimName)
	return append(dst, '}')
}

// appendRequestMappings writes a list marshalled without omitempty: null when nil.
func appendRequestMappings(dst []byte, l []v1.ContainerExtendedResourceRequest) []byte {
	if l == nil {
		return append(dst, "null"...)
	}
	return appendList(dst, l, appendContainerExtendedResourceRequest)
}

func appendContainerExtendedResourceRequest(dst []byte, r *v1.ContainerExtendedResourceRequest) []byte {
	dst = appendString(append(dst, `{"containerName":`...), r.ContainerName)
	dst = appendString(append(dst, `,"requestName":`...), r.RequestName)
	dst = appendString(append(dst, `,"resourceName":`...), r.ResourceName)
	return append(dst, '}')
}

func appendNodeAllocatableClaimStatus(dst []byte, s *v1.NodeAllocatableResourceClaimStatus) []byte {
	dst = append(dst, '{')
	if len(s.Containers) > 0 {
		dst = appendStrings(member(dst, "containers"), s.Containers)
	}
	if len(s.Mapping) > 0 {
		dst = appendList(member(dst, "mapping"), s.Mapping, appendMappedResources)
	}
	if len(s.Overhead) > 0 {
		dst = appendList(member(dst, "overhead"), s.Overhead, appendOverheadResources)
	}
	dst = appendString(member(dst, "resourceClaimName"), s.ResourceClaimName)
	return append(dst, '}')
}

func appendMappedResources(dst []byte, m *v1.NodeAllocatableMappedResources) []byte {
	dst = appendString(append(dst, `{"name":`...), string(m.Name))
	dst = append(dst, `,"quantity":`...)
	if m.Quantity == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendQuantity(dst, *m.Quantity)
	}
	return append(dst, '}')
}

func appendOverheadResources(dst []byte, o *v1.NodeAllocatableOverheadResources) []byte {
	dst = appendString(append(dst, `{"name":`...), string(o.Name))
	if o.PerContainer != nil {
		dst = appendQuantity(append(dst, `,"perContainer":`...), *o.PerContainer)
	}
	if o.PerPod != nil {
		dst = appendQuantity(append(dst, `,"perPod":`...), *o.PerPod)
	}
	return append(dst, '}')
}

func appendVolumeHealth(dst []byte, h *v1.PodVolumeHealth) []byte {
	dst = append(dst, '{')
	if len(h.HealthConditions) > 0 {
		dst = appendList(member(dst, "healthConditions"), h.HealthConditions, appendVolumeHealthCondition)
	}
	dst = appendTime(member(dst, "lastTransitionTime"), h.LastTransitionTime)
	dst = appendString(append(dst, `,"name":`...), h.Name)
	return append(dst, '}')
}

func appendVolumeHealthCondition(dst []byte, c *v1.VolumeHealthCondition) []byte {
	dst = append(dst, '{')
	if c.Message != "" {
		dst = appendString(member(dst, "message"), c.Message)
	}
	dst = appendString(member(dst, "reason"), c.Reason)
	dst = appendString(append(dst, `,"status":`...), string(c.Status))
	return append(dst, '}')
}

func appendStrings(dst []byte, l []string) []byte {
	dst = append(dst, '[')
	for i := range l {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, l[i])
	}
	return append(dst, ']')
}

// appendList writes l as a JSON array of elements encoded by enc.
func appendList[T any](dst []byte, l []T, enc func([]byte, *T) []byte) []byte {
	dst = append(dst, '[')
	for i := range l {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = enc(dst, &l[i])
	}
	return append(dst, ']')
}
