package podstatetest

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// T0 returns the time in every generated state (startedAt, finishedAt):
// 2026-01-01T00:00:00Z. It is a function, not a variable, so no test can change it for
// another.
func T0() metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) }

// Options narrows the inputs the generators draw. The zero value draws the widest
// inputs, as a differential test against the kubelet wants them.
type Options struct {
	// Coherent gives regular containers runtime facts only once every regular init
	// container has a fact that exited 0, as a real runtime starts them.
	Coherent bool
	// NoSidecars makes no init container a sidecar (restartPolicy Always).
	NoSidecars bool
	// NoContainerPolicies gives no container a restartPolicy or restartPolicyRules of its
	// own, a sidecar's restartPolicy Always aside.
	NoContainerPolicies bool
	// AtLeastOneContainer gives every pod a regular container, as the API server
	// requires. By default some pods have none.
	AtLeastOneContainer bool
	// Resize puts a PodResizeInProgress condition into Input.Resize of about half the
	// inputs. It is off by default: the kubelet keeps resize conditions outside the
	// status its condition generators read.
	Resize bool
}

// State generates container states: running, waiting (no reason, CrashLoopBackOff or
// ImagePullBackOff), or terminated with exit code 0 (Completed), 1 or 42 (Error) or 137
// (OOMKilled or RestartingAllContainers). With unknown, the empty state (a container the
// runtime reports in an unknown state) is drawn too.
func State(unknown bool) *rapid.Generator[v1.ContainerState] {
	kinds := []string{"running", "waiting", "exit0", "exit1", "exit42", "exit137"}
	if unknown {
		kinds = append(kinds, "unknown")
	}
	return rapid.Custom(func(t *rapid.T) v1.ContainerState {
		switch rapid.SampledFrom(kinds).Draw(t, "state") {
		case "running":
			return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: T0()}}
		case "waiting":
			return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{
				Reason: rapid.SampledFrom([]string{"", "CrashLoopBackOff", "ImagePullBackOff"}).Draw(t, "reason")}}
		case "exit0":
			return Exited(0, "Completed")
		case "exit1":
			return Exited(1, "Error")
		case "exit42":
			return Exited(42, "Error")
		case "exit137":
			return Exited(137, rapid.SampledFrom([]string{"OOMKilled", readiness.ReasonRestartingAllContainers}).Draw(t, "reason137"))
		}
		return v1.ContainerState{}
	})
}

// Exited is a terminated state with exit code code and reason, started and finished at T0.
func Exited(code int32, reason string) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: T0(), FinishedAt: T0()}}
}

// Container generates a container of the spec named name, an init container when init
// is set: about half of the init containers are sidecars (unless o.NoSidecars); a
// container may have its own restartPolicy (Always, OnFailure, Never) with a restart rule
// (action Restart or RestartAllContainers, operator In or NotIn, exit codes among 0, 1,
// 42 and 137), unless o.NoContainerPolicies; resources drawn by Requirements; sidecars
// and regular containers may have a readiness probe and a startup probe.
func Container(name string, init bool, o Options) *rapid.Generator[v1.Container] {
	return rapid.Custom(func(t *rapid.T) v1.Container {
		c := v1.Container{Name: name, Image: "img-" + name}
		var policies []v1.ContainerRestartPolicy
		switch {
		case !o.NoContainerPolicies:
			policies = []v1.ContainerRestartPolicy{"", v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}
			if !init || !o.NoSidecars {
				policies = append(policies, v1.ContainerRestartPolicyAlways)
			}
			if init && !o.NoSidecars {
				policies = append(policies, v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyAlways)
			}
		case init && !o.NoSidecars:
			policies = []v1.ContainerRestartPolicy{"", v1.ContainerRestartPolicyAlways}
		default:
			policies = []v1.ContainerRestartPolicy{""}
		}
		if p := rapid.SampledFrom(policies).Draw(t, "policy"); p != "" {
			c.RestartPolicy = &p
			if !o.NoContainerPolicies && rapid.Bool().Draw(t, "rule") {
				c.RestartPolicyRules = []v1.ContainerRestartRule{{
					Action: rapid.SampledFrom([]v1.ContainerRestartRuleAction{
						v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers}).Draw(t, "action"),
					ExitCodes: &v1.ContainerRestartRuleOnExitCodes{
						Operator: rapid.SampledFrom([]v1.ContainerRestartRuleOnExitCodesOperator{
							v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn}).Draw(t, "operator"),
						Values: rapid.SliceOfDistinct(rapid.SampledFrom([]int32{0, 1, 42, 137}), rapid.ID[int32]).Draw(t, "codes"),
					},
				}}
			}
		}
		c.Resources = Requirements().Draw(t, "resources")
		if !init || isSidecar(&c) {
			if rapid.Bool().Draw(t, "readinessProbe") {
				c.ReadinessProbe = &v1.Probe{}
			}
			if rapid.Bool().Draw(t, "startupProbe") {
				c.StartupProbe = &v1.Probe{}
			}
		}
		return c
	})
}

// isSidecar reports whether init container c is a sidecar under the default features.
func isSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// Fact generates the runtime's fact about the container named name: half of them are
// running and passing their probes; the others are in any state (State(true)), with a
// restart count, a container ID of one of two instances, a sandbox (the newest, "" for
// the newest, or an older one), any probe results, and now and then a terminated previous
// instance.
func Fact(name string) *rapid.Generator[podstate.Container] {
	return rapid.Custom(func(t *rapid.T) podstate.Container {
		if rapid.Bool().Draw(t, "healthy") {
			return podstate.Container{Name: name, ContainerID: "containerd://" + name,
				State:   v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: T0()}},
				Startup: podstate.ProbeSuccess, Readiness: podstate.ProbeSuccess}
		}
		f := podstate.Container{
			Name:         name,
			ContainerID:  "containerd://" + name + rapid.SampledFrom([]string{"1", "2"}).Draw(t, "id"),
			RestartCount: int32(rapid.IntRange(0, 3).Draw(t, "restarts")),
			State:        State(true).Draw(t, "state"),
			SandboxID:    rapid.SampledFrom([]string{"", "sb-new", "sb-old"}).Draw(t, "sandbox"),
			Startup:      podstate.ProbeResult(rapid.IntRange(0, 2).Draw(t, "startup")),
			Readiness:    podstate.ProbeResult(rapid.IntRange(0, 2).Draw(t, "readiness")),
		}
		if rapid.Bool().Draw(t, "hasLast") {
			if f.LastTerminationState = State(false).Draw(t, "last"); f.LastTerminationState.Terminated == nil {
				f.LastTerminationState = Exited(1, "Error")
			}
		}
		return f
	})
}

// Conditions generates up to six conditions of distinct types, foreign ones
// ("example.com/a", "example.com/b", "www.example.com/feature-1", DisruptionTarget) and
// kubelet-owned ones, with any status (True, False, Unknown, ""), a reason or none, and
// observedGeneration 0 or 1.
func Conditions() *rapid.Generator[[]v1.PodCondition] {
	pool := []v1.PodConditionType{"example.com/a", "example.com/b", "www.example.com/feature-1", v1.DisruptionTarget,
		v1.PodReady, v1.ContainersReady, v1.PodInitialized, v1.PodScheduled, v1.PodReadyToStartContainers,
		v1.PodResizePending, v1.AllContainersRestarting}
	return rapid.Custom(func(t *rapid.T) []v1.PodCondition {
		types := rapid.SliceOfNDistinct(rapid.SampledFrom(pool), 0, 6, rapid.ID[v1.PodConditionType]).Draw(t, "types")
		out := make([]v1.PodCondition, len(types))
		for i, ty := range types {
			out[i] = v1.PodCondition{
				Type:               ty,
				Status:             rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown, ""}).Draw(t, "status"),
				Reason:             rapid.SampledFrom([]string{"", "R1", "R2"}).Draw(t, "reason"),
				ObservedGeneration: int64(rapid.IntRange(0, 1).Draw(t, "generation")),
			}
		}
		return out
	})
}

// phases weighs the common phases up; "" is a pod the server has not given one.
var phases = []v1.PodPhase{"", v1.PodPending, v1.PodRunning, v1.PodRunning, v1.PodSucceeded, v1.PodFailed}

// Pod generates the pod as the API server has it: ns/p with metadata.generation 0 to 3,
// up to three init containers (i0, ...) and up to three regular containers (c0, ...;
// at least one with o.AtLeastOneContainer), drawn by Container; any pod restartPolicy;
// hostNetwork on about one pod in five; up to three readiness gates, never naming a
// condition type the kubelet owns (three of them name Conditions' foreign types); pod-level resources (Requirements) on about one pod in
// three and overhead on one in four; and a server status with any phase and Conditions.
func Pod(o Options) *rapid.Generator[*v1.Pod] {
	return rapid.Custom(func(t *rapid.T) *v1.Pod {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1",
			Generation: int64(rapid.IntRange(0, 3).Draw(t, "generation"))}}
		for i, n := 0, rapid.IntRange(0, 3).Draw(t, "initContainers"); i < n; i++ {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, Container(fmt.Sprintf("i%d", i), true, o).Draw(t, "initContainer"))
		}
		least := 0
		if o.AtLeastOneContainer {
			least = 1
		}
		for i, n := 0, rapid.IntRange(least, 3).Draw(t, "containers"); i < n; i++ {
			pod.Spec.Containers = append(pod.Spec.Containers, Container(fmt.Sprintf("c%d", i), false, o).Draw(t, "container"))
		}
		pod.Spec.RestartPolicy = rapid.SampledFrom([]v1.RestartPolicy{"", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}).Draw(t, "restartPolicy")
		pod.Spec.HostNetwork = rapid.IntRange(0, 4).Draw(t, "hostNetwork") == 0
		// Gates name only condition types another controller writes, the rule readinesstest's
		// GateType follows: the API server accepts a gate named like a condition the kubelet
		// owns, but the kubelet writes that condition itself, so such a gate tests the
		// kubelet's condition code, not a readiness gate.
		gates := []v1.PodConditionType{"example.com/a", "example.com/b", "www.example.com/feature-1", "gate1"}
		for _, g := range rapid.SliceOfNDistinct(rapid.SampledFrom(gates), 0, 3, rapid.ID[v1.PodConditionType]).Draw(t, "gates") {
			pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, v1.PodReadinessGate{ConditionType: g})
		}
		if rapid.IntRange(0, 2).Draw(t, "podLevelResources") == 0 {
			r := Requirements().Draw(t, "podResources")
			pod.Spec.Resources = &r
		}
		if rapid.IntRange(0, 3).Draw(t, "overhead") == 0 {
			pod.Spec.Overhead = ResourceList().Draw(t, "overheadList")
		}
		pod.Status.Phase = rapid.SampledFrom(phases).Draw(t, "phase")
		pod.Status.Conditions = Conditions().Draw(t, "conditions")
		return pod
	})
}

// OldStatus generates the status a node agent last reported for pod: any phase, reason
// "" or "Evicted", Conditions, pod-level resources in half of them, and for some containers of the spec a status in any known
// state, restart count 1, container ID "containerd://<name>1", and Started now and then
// when running.
func OldStatus(pod *v1.Pod) *rapid.Generator[*v1.PodStatus] {
	return rapid.Custom(func(t *rapid.T) *v1.PodStatus {
		s := &v1.PodStatus{
			Phase:      rapid.SampledFrom(phases).Draw(t, "phase"),
			Reason:     rapid.SampledFrom([]string{"", "Evicted"}).Draw(t, "reason"),
			Conditions: Conditions().Draw(t, "conditions"),
		}
		if rapid.Bool().Draw(t, "hasResources") {
			r := Requirements().Draw(t, "resources")
			s.Resources = &r
		}
		status := func(c *v1.Container) *v1.ContainerStatus {
			if !rapid.Bool().Draw(t, "has-"+c.Name) {
				return nil
			}
			st := &v1.ContainerStatus{Name: c.Name, State: State(false).Draw(t, "state-"+c.Name), RestartCount: 1, ContainerID: "containerd://" + c.Name + "1"}
			if st.State.Running != nil && rapid.Bool().Draw(t, "started-"+c.Name) {
				started := true
				st.Started = &started
			}
			return st
		}
		for i := range pod.Spec.InitContainers {
			if st := status(&pod.Spec.InitContainers[i]); st != nil {
				s.InitContainerStatuses = append(s.InitContainerStatuses, *st)
			}
		}
		for i := range pod.Spec.Containers {
			if st := status(&pod.Spec.Containers[i]); st != nil {
				s.ContainerStatuses = append(s.ContainerStatuses, *st)
			}
		}
		return s
	})
}

// Sandboxes generates up to two sandboxes, newest first (sb-new, sb-old, with attempts
// counting down): most are ready; either may be in the node's network namespace, have an
// IP (10.1.0.5) or not, and now and then no network status at all.
func Sandboxes() *rapid.Generator[[]sandbox.Status] {
	return rapid.Custom(func(t *rapid.T) []sandbox.Status {
		var out []sandbox.Status
		for i, n := 0, rapid.IntRange(0, 2).Draw(t, "sandboxes"); i < n; i++ {
			id := "sb-new"
			if i > 0 {
				id = "sb-old"
			}
			out = append(out, sandbox.Status{
				ID: id, Attempt: uint32(n - i),
				Ready:           rapid.IntRange(0, 3).Draw(t, id+"-ready") > 0,
				HostNetwork:     rapid.Bool().Draw(t, id+"-hostNetwork"),
				IP:              rapid.SampledFrom([]string{"", "10.1.0.5"}).Draw(t, id+"-ip"),
				NoNetworkStatus: rapid.IntRange(0, 4).Draw(t, id+"-noNetwork") == 0,
			})
		}
		return out
	})
}

// Input generates a whole podstate.Input: a Pod; Terminal in about one input in four;
// an OldStatus in half of them; Sandboxes; a PodCgroup in half of them; the node's IP
// (10.0.0.1) in half of them; an
// Eviction (DeadlineExceeded) in about one in eight; with o.Resize, a resize condition in
// about half; and, for about three containers in four, a Fact (with o.Coherent, regular
// containers only once every regular init container exited 0). Features and Now are zero.
func Input(o Options) *rapid.Generator[podstate.Input] {
	return rapid.Custom(func(t *rapid.T) podstate.Input {
		pod := Pod(o).Draw(t, "pod")
		in := podstate.Input{Pod: pod, Runtime: podstate.Runtime{Terminal: rapid.IntRange(0, 3).Draw(t, "terminal") == 0}}
		if rapid.Bool().Draw(t, "hasOldStatus") {
			in.OldStatus = OldStatus(pod).Draw(t, "oldStatus")
		}
		in.Sandboxes = Sandboxes().Draw(t, "sandboxes")
		if rapid.Bool().Draw(t, "hasHostIP") {
			in.HostIPs = []string{"10.0.0.1"}
		}
		if rapid.IntRange(0, 7).Draw(t, "evicted") == 0 {
			in.Eviction = &podstate.Eviction{Reason: "DeadlineExceeded", Message: "m"}
		}
		if rapid.Bool().Draw(t, "hasPodCgroup") {
			in.PodCgroup = PodCgroup().Draw(t, "podCgroup")
		}
		if o.Resize && rapid.Bool().Draw(t, "resize") {
			in.Resize = []v1.PodCondition{{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue}}
		}
		initDone := true
		for i := range pod.Spec.InitContainers {
			c := &pod.Spec.InitContainers[i]
			if rapid.IntRange(0, 3).Draw(t, "fact-"+c.Name) == 0 {
				initDone = initDone && isSidecar(c)
				continue
			}
			f := Fact(c.Name).Draw(t, "fact")
			if !isSidecar(c) && (f.State.Terminated == nil || f.State.Terminated.ExitCode != 0) {
				initDone = false
			}
			in.Containers = append(in.Containers, f)
		}
		if !o.Coherent || initDone {
			for i := range pod.Spec.Containers {
				c := &pod.Spec.Containers[i]
				if rapid.IntRange(0, 3).Draw(t, "fact-"+c.Name) > 0 {
					in.Containers = append(in.Containers, Fact(c.Name).Draw(t, "fact"))
				}
			}
		}
		return in
	})
}

// resourceNames are the resources the generators draw: the two pod-level ones with
// hugepages, and two that pod-level resources do not cover.
var resourceNames = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, "hugepages-2Mi",
	v1.ResourceEphemeralStorage, "example.com/gpu"}

// quantities are the values drawn, in the API's several spellings (milli, whole,
// decimal fraction, binary and decimal suffixes, exponent), zero included.
var quantities = []string{"0", "1m", "2m", "100m", "250m", "500m", "1", "0.5", "2", "1500m",
	"64Mi", "100Mi", "1Gi", "1G", "128974848", "1e3", "4Mi"}

// ResourceList generates up to four resources of resourceNames, each with a quantity
// drawn from a fixed pool of spellings.
func ResourceList() *rapid.Generator[v1.ResourceList] {
	return rapid.Custom(func(t *rapid.T) v1.ResourceList {
		l := v1.ResourceList{}
		for _, n := range rapid.SliceOfNDistinct(rapid.SampledFrom(resourceNames), 0, 4, rapid.ID[v1.ResourceName]).Draw(t, "names") {
			l[n] = resource.MustParse(rapid.SampledFrom(quantities).Draw(t, string(n)))
		}
		return l
	})
}

// Requirements generates resource requirements: requests and limits drawn by
// ResourceList, each nil now and then.
func Requirements() *rapid.Generator[v1.ResourceRequirements] {
	return rapid.Custom(func(t *rapid.T) v1.ResourceRequirements {
		var r v1.ResourceRequirements
		if rapid.Bool().Draw(t, "hasRequests") {
			r.Requests = ResourceList().Draw(t, "requests")
		}
		if rapid.Bool().Draw(t, "hasLimits") {
			r.Limits = ResourceList().Draw(t, "limits")
		}
		return r
	})
}

// PodCgroup generates what a node reads back from a pod cgroup: the CPU controller
// (or nil) with shares at, below and above the floor of 2 and around the cgroup v2
// round trip of 500m (512 shares read back as 500), a quota of -1 (no limit), below
// and above the 10m floor, and a period of 0 or 100ms; and a memory limit of nil, 0 or
// 256Mi.
func PodCgroup() *rapid.Generator[*podstate.PodCgroup] {
	return rapid.Custom(func(t *rapid.T) *podstate.PodCgroup {
		cg := &podstate.PodCgroup{}
		if rapid.IntRange(0, 3).Draw(t, "hasCPU") > 0 {
			cg.CPU = &podstate.CPUCgroup{
				Shares: rapid.SampledFrom([]uint64{0, 1, 2, 3, 500, 510, 512, 1024, 2048, 262144}).Draw(t, "shares"),
				Quota:  rapid.SampledFrom([]int64{-1, 0, 500, 1000, 1100, 50000, 150000}).Draw(t, "quota"),
				Period: rapid.SampledFrom([]uint64{0, 100000, 100000}).Draw(t, "period"),
			}
		}
		if mem := rapid.SampledFrom([]int64{-1, 0, 256 << 20, 256 << 20}).Draw(t, "memory"); mem >= 0 {
			cg.MemoryLimit = &mem
		}
		return cg
	})
}
