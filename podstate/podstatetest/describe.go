package podstatetest

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/podstate"
)

// Logger is the part of testing.TB (and of *rapid.T) Log uses: *testing.T, *testing.B,
// *testing.F and *rapid.T all satisfy it. readinesstest.Logger is the same interface.
type Logger interface {
	Helper()
	Logf(format string, args ...any)
}

// Log logs Describe(in) through t. Called right after an input is drawn inside
// rapid.Check, it makes a failing property print its input readably: rapid shows a
// failing case's log, and its own dump of a drawn value prints pointers as addresses.
// readinesstest.Log does the same for readiness inputs.
func Log(t Logger, in podstate.Input) {
	t.Helper()
	t.Logf("input: %s", Describe(in))
}

// Describe renders in compactly for failure messages: the spec's containers by kind
// (a sidecar's restartPolicy in parentheses), gates, hostNetwork, the server's phase and
// conditions, the old status's phase and conditions, and the runtime facts: sandboxes,
// host IPs, each container's state, restart count, sandbox and probe results, Terminal
// and the eviction.
func Describe(in podstate.Input) string {
	if in.Pod == nil {
		return "{Pod: nil}"
	}
	var b strings.Builder
	spec := &in.Pod.Spec
	fmt.Fprintf(&b, "{gen=%d restartPolicy=%q hostNetwork=%v init=", in.Pod.Generation, spec.RestartPolicy, spec.HostNetwork)
	describeContainers(&b, spec.InitContainers)
	b.WriteString(" containers=")
	describeContainers(&b, spec.Containers)
	b.WriteString(" gates=[")
	for i, g := range spec.ReadinessGates {
		sep(&b, i)
		b.WriteString(string(g.ConditionType))
	}
	fmt.Fprintf(&b, "] server=%s", describeStatus(&in.Pod.Status))
	b.WriteString(" old=")
	if in.OldStatus == nil {
		b.WriteString("nil")
	} else {
		b.WriteString(describeStatus(in.OldStatus))
	}
	b.WriteString(" sandboxes=[")
	for i, s := range in.Sandboxes {
		sep(&b, i)
		fmt.Fprintf(&b, "{%s a%d ready=%v host=%v ip=%q nonet=%v}", s.ID, s.Attempt, s.Ready, s.HostNetwork, s.IP, s.NoNetworkStatus)
	}
	fmt.Fprintf(&b, "] hostIPs=%v facts=[", in.HostIPs)
	for i, c := range in.Containers {
		sep(&b, i)
		fmt.Fprintf(&b, "{%s %s restarts=%d", c.Name, describeState(c.State), c.RestartCount)
		if c.SandboxID != "" {
			fmt.Fprintf(&b, " sandbox=%s", c.SandboxID)
		}
		fmt.Fprintf(&b, " startup=%s readiness=%s}", c.Startup, c.Readiness)
	}
	fmt.Fprintf(&b, "] terminal=%v", in.Terminal)
	if in.Eviction != nil {
		fmt.Fprintf(&b, " eviction=%q", in.Eviction.Reason)
	}
	b.WriteByte('}')
	return b.String()
}

// describeContainers renders the names of cs, each with its own restartPolicy if any.
func describeContainers(b *strings.Builder, cs []v1.Container) {
	b.WriteByte('[')
	for i, c := range cs {
		sep(b, i)
		b.WriteString(c.Name)
		if c.RestartPolicy != nil {
			fmt.Fprintf(b, "(%s)", *c.RestartPolicy)
		}
	}
	b.WriteByte(']')
}

func sep(b *strings.Builder, i int) {
	if i > 0 {
		b.WriteByte(' ')
	}
}

// describeStatus renders a status's phase and conditions.
func describeStatus(s *v1.PodStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{phase=%q conditions=[", s.Phase)
	for i, c := range s.Conditions {
		sep(&b, i)
		fmt.Fprintf(&b, "%s=%s", c.Type, c.Status)
	}
	b.WriteString("]}")
	return b.String()
}

// describeState renders a container state as its kind and the detail that matters.
func describeState(s v1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("exited(%d,%s)", s.Terminated.ExitCode, s.Terminated.Reason)
	case s.Waiting != nil:
		return fmt.Sprintf("waiting(%s)", s.Waiting.Reason)
	}
	return "unknown"
}
