// Package podstate holds the differential test of podstatus/podstate against the kubelet
// v1.37.0: the kubelet's getPhase is unexported, so the test runs the kubelet's exported
// condition generators (pkg/kubelet/status) and restart rule (pkg/api/v1/pod) on the
// statuses podstate.Generate builds, and checks they agree with what Generate put in them.
// It has no non-test code.
package podstate
