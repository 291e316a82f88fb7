// Package podstate holds the differential tests of podstatus/podstate against the kubelet
// v1.37.0: the kubelet's getPhase is unexported, so the test runs the kubelet's exported
// condition generators (pkg/kubelet/status) and restart rule (pkg/api/v1/pod) on the
// statuses podstate.Generate builds, and checks they agree with what Generate put in them;
// and it compares the pod-level requests and limits (internal/resources) and the
// pod-level status.allocatedResources and status.resources with component-helpers'
// PodRequests and PodLimits, which the kubelet calls to write them. It has no non-test
// code.
package podstate
