package readinesstest

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

// Statuses is a pair of container-status lists as they appear in a v1.PodStatus. Either
// list may be nil, empty, or hold statuses that are missing, duplicated, misplaced (an
// init container's status in the regular list, or the reverse) or about containers that
// are not in the spec.
type Statuses struct {
	// Init is what goes into Input.InitContainerStatuses.
	Init []v1.ContainerStatus
	// Regular is what goes into Input.ContainerStatuses.
	Regular []v1.ContainerStatus
}

// Joined returns the list the kubelet hands to its condition generators:
// append(in.InitContainerStatuses, in.ContainerStatuses...). Like that append, it is nil
// exactly when the init list is nil and the regular list is empty; unlike it, it never
// writes into the init list's backing array.
func Joined(in readiness.Input) []v1.ContainerStatus {
	init := in.InitContainerStatuses
	return append(init[:len(init):len(init)], in.ContainerStatuses...)
}

// ContainerName generates container names: short fixed names that read well in failure
// messages ("a", "app", "1234", "restartable-init-1", ...) mixed with random DNS labels.
// Names drawn from it are not distinct; Pod makes them so.
func ContainerName() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{
			"a", "b", "c", "z", "app", "web", "db", "cache", "1234", "5678",
			"regular-1", "init-0", "init-1", "restartable-init-1", "restartable-init-2",
			"istio-proxy", "log-shipper", "migrate", "x0", "long-container-name-0123456789",
		}),
		rapid.StringMatching(`[a-z]([a-z0-9-]{0,10}[a-z0-9])?`),
	)
}

// GateType generates readiness-gate condition types that are valid qualified names, with
// and without a DNS-subdomain prefix: "gate1", "example.com/lb",
// "www.example.com/feature-1", and random ones of the same shape. It never generates a
// condition type the kubelet owns.
func GateType() *rapid.Generator[v1.PodConditionType] {
	return rapid.OneOf(
		rapid.SampledFrom([]v1.PodConditionType{
			"gate1", "gate2", "g3", "example.com/lb", "www.example.com/feature-1",
			"networking.example.io/ready", "cloud.example.com/load-balancer-neg-ready",
			"MyGate", "a_b.c", "x.y/Z-9",
		}),
		rapid.Map(rapid.StringMatching(
			`([a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?(\.[a-z]{2,5}){0,2}/)?[A-Za-z]([A-Za-z0-9_.-]{0,10}[A-Za-z0-9])?`),
			func(s string) v1.PodConditionType { return v1.PodConditionType(s) }),
	).Filter(func(t v1.PodConditionType) bool { return !kubeletType(t) })
}

// kubeletType reports whether t is a condition type the kubelet writes itself.
func kubeletType(t v1.PodConditionType) bool {
	switch t {
	case v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady, v1.PodReadyToStartContainers,
		v1.PodResizePending, v1.PodResizeInProgress, v1.DisruptionTarget, v1.AllContainersRestarting:
		return true
	}
	return false
}

// Pod generates pods: up to three init containers (plain ones, sidecars with
// restartPolicy Always, and now and then one with another restartPolicy, which is not a
// sidecar), usually one to four regular containers (sometimes none, sometimes with a
// container-level restartPolicy), sometimes an ephemeral container, up to three readiness
// gates with distinct valid types, hostNetwork on about one pod in five, and a
// metadata.generation between 0 and 5. Container names are distinct across all three
// kinds.
func Pod() *rapid.Generator[*v1.Pod] {
	return rapid.Custom(func(t *rapid.T) *v1.Pod {
		nInit := rapid.IntRange(0, 3).Draw(t, "initContainers")
		nRegular := rapid.IntRange(1, 4).Draw(t, "containers")
		if rapid.IntRange(0, 19).Draw(t, "noContainers") == 0 {
			nRegular = 0
		}
		nEphemeral := 0
		if rapid.IntRange(0, 9).Draw(t, "hasEphemeral") == 0 {
			nEphemeral = 1
		}
		n := nInit + nRegular + nEphemeral
		names := rapid.SliceOfNDistinct(ContainerName(), n, n, rapid.ID[string]).Draw(t, "names")

		pod := &v1.Pod{
			TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{
				Namespace:  "default",
				Name:       "pod-" + rapid.StringMatching(`[a-z0-9]{1,5}`).Draw(t, "podName"),
				UID:        types.UID("uid-" + rapid.StringMatching(`[0-9a-f]{8}`).Draw(t, "uid")),
				Generation: rapid.Int64Range(0, 5).Draw(t, "generation"),
			},
			Spec: v1.PodSpec{
				HostNetwork: rapid.IntRange(0, 4).Draw(t, "hostNetwork") == 0,
			},
		}
		for i := 0; i < nInit; i++ {
			c := v1.Container{Name: names[i], Image: "registry.example/init:1"}
			switch k := rapid.IntRange(0, 9).Draw(t, "initKind"); {
			case k >= 5 && k <= 8:
				c.RestartPolicy = ptr(v1.ContainerRestartPolicyAlways)
			case k == 9:
				c.RestartPolicy = ptr(rapid.SampledFrom([]v1.ContainerRestartPolicy{
					v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}).Draw(t, "initRestartPolicy"))
			}
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
		}
		for i := nInit; i < nInit+nRegular; i++ {
			c := v1.Container{Name: names[i], Image: "registry.example/app:1"}
			if rapid.IntRange(0, 9).Draw(t, "containerRestartPolicy") == 0 {
				c.RestartPolicy = ptr(rapid.SampledFrom([]v1.ContainerRestartPolicy{
					v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever,
				}).Draw(t, "restartPolicy"))
			}
			pod.Spec.Containers = append(pod.Spec.Containers, c)
		}
		for i := nInit + nRegular; i < n; i++ {
			pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, v1.EphemeralContainer{
				EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: names[i], Image: "busybox"},
			})
		}
		gates := rapid.SliceOfNDistinct(GateType(), 0, 3, rapid.ID[v1.PodConditionType]).Draw(t, "gates")
		for _, g := range gates {
			pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, v1.PodReadinessGate{ConditionType: g})
		}
		return pod
	})
}

// ContainerStatuses generates container statuses for pod: each list nil, empty or
// populated; each spec container's status present (in its own list, or now and then in
// the other one) or missing; Ready true or false; Started nil, false or true; state
// empty, Waiting, Running or Terminated with exit code 0 or not; now and then a
// duplicate status for one name (the first one counts), a status for a container not in
// the spec, and a shuffled order.
func ContainerStatuses(pod *v1.Pod) *rapid.Generator[Statuses] {
	return rapid.Custom(func(t *rapid.T) Statuses {
		var s Statuses
		// 0: nil, 1: empty, 2..: populated.
		initMode := rapid.IntRange(0, 5).Draw(t, "initListMode")
		regularMode := rapid.IntRange(0, 5).Draw(t, "regularListMode")
		if initMode == 1 {
			s.Init = []v1.ContainerStatus{}
		}
		if regularMode == 1 {
			s.Regular = []v1.ContainerStatus{}
		}
		put := func(init bool, st v1.ContainerStatus) {
			if rapid.IntRange(0, 11).Draw(t, "misplaced") == 0 {
				init = !init
			}
			if init && initMode >= 2 {
				s.Init = append(s.Init, st)
			} else if !init && regularMode >= 2 {
				s.Regular = append(s.Regular, st)
			}
		}
		for _, c := range pod.Spec.InitContainers {
			if rapid.IntRange(0, 3).Draw(t, "missing") != 0 {
				put(true, randomStatus(t, c.Name))
			}
		}
		for _, c := range pod.Spec.Containers {
			if rapid.IntRange(0, 3).Draw(t, "missing") != 0 {
				put(false, randomStatus(t, c.Name))
			}
		}
		all := specNames(pod)
		if len(all) > 0 && rapid.IntRange(0, 5).Draw(t, "duplicate") == 0 {
			put(rapid.Bool().Draw(t, "duplicateInInit"), randomStatus(t, rapid.SampledFrom(all).Draw(t, "duplicateName")))
		}
		if rapid.IntRange(0, 7).Draw(t, "stranger") == 0 {
			put(rapid.Bool().Draw(t, "strangerInInit"), randomStatus(t, "not-in-spec"))
		}
		if len(s.Init) > 1 && rapid.IntRange(0, 3).Draw(t, "shuffleInit") == 0 {
			s.Init = rapid.Permutation(s.Init).Draw(t, "initOrder")
		}
		if len(s.Regular) > 1 && rapid.IntRange(0, 3).Draw(t, "shuffleRegular") == 0 {
			s.Regular = rapid.Permutation(s.Regular).Draw(t, "regularOrder")
		}
		return s
	})
}

// specNames returns the names of the init, regular and ephemeral containers of pod.
func specNames(pod *v1.Pod) []string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	return names
}

// randomStatus draws a status for name with independent Ready, Started and State.
func randomStatus(t *rapid.T, name string) v1.ContainerStatus {
	s := v1.ContainerStatus{
		Name:         name,
		Image:        "registry.example/" + name + ":1",
		ContainerID:  "containerd://" + name,
		Ready:        rapid.Bool().Draw(t, "ready"),
		Started:      rapid.SampledFrom([]*bool{nil, ptr(false), ptr(true)}).Draw(t, "started"),
		RestartCount: rapid.Int32Range(0, 3).Draw(t, "restarts"),
	}
	switch rapid.IntRange(0, 4).Draw(t, "state") {
	case 1:
		s.State.Waiting = &v1.ContainerStateWaiting{Reason: rapid.SampledFrom([]string{"ContainerCreating", "PodInitializing", "CrashLoopBackOff"}).Draw(t, "waitingReason")}
	case 2:
		s.State.Running = &v1.ContainerStateRunning{StartedAt: baseTime()}
	case 3:
		s.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}
	case 4:
		s.State.Terminated = &v1.ContainerStateTerminated{ExitCode: rapid.Int32Range(1, 137).Draw(t, "exitCode"), Reason: "Error"}
	}
	if rapid.IntRange(0, 4).Draw(t, "lastState") == 0 {
		s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: rapid.Int32Range(0, 2).Draw(t, "lastExitCode")}
	}
	return s
}

// Sandboxes generates the runtime's sandboxes for pod, newest first: none to three, each
// ready or not, usually in the network namespace mode the pod asks for (sometimes the
// other one), with an IP, with a network status but no IP, or with no network status.
// Attempt numbers decrease from the newest, and IDs are distinct.
func Sandboxes(pod *v1.Pod) *rapid.Generator[[]sandbox.Status] {
	return rapid.Custom(func(t *rapid.T) []sandbox.Status {
		n := rapid.IntRange(0, 3).Draw(t, "sandboxes")
		if n == 0 {
			if rapid.Bool().Draw(t, "emptyNotNil") {
				return []sandbox.Status{}
			}
			return nil
		}
		top := uint32(n-1) + rapid.Uint32Range(0, 4).Draw(t, "attemptBase")
		out := make([]sandbox.Status, n)
		for i := range out {
			s := sandbox.Status{
				Attempt:     top - uint32(i),
				Ready:       rapid.Bool().Draw(t, "sandboxReady"),
				HostNetwork: pod.Spec.HostNetwork != (rapid.IntRange(0, 5).Draw(t, "netnsMismatch") == 0),
				CreatedAt:   baseTime().Add(-time.Duration(i) * time.Minute),
			}
			s.ID = fmt.Sprintf("sandbox-%d", s.Attempt)
			switch rapid.IntRange(0, 5).Draw(t, "network") {
			case 0:
				s.NoNetworkStatus = true
			case 1:
				// a network status without an IP
			default:
				s.IP = fmt.Sprintf("10.0.%d.%d", i, s.Attempt+1)
			}
			out[i] = s
		}
		return out
	})
}

// GateConditions generates the conditions readiness gates are read from: for each of
// pod's gates, its condition missing or with status True, False, Unknown or "" (empty);
// now and then a second condition of the same type later in the list (the first one
// counts), unrelated conditions (PodScheduled, another custom type), and a shuffled
// order.
func GateConditions(pod *v1.Pod) *rapid.Generator[[]v1.PodCondition] {
	return rapid.Custom(func(t *rapid.T) []v1.PodCondition {
		var out []v1.PodCondition
		if rapid.IntRange(0, 3).Draw(t, "scheduled") == 0 {
			out = append(out, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
		}
		for _, g := range pod.Spec.ReadinessGates {
			st := gateStatus().Draw(t, "gateStatus")
			if st == nil {
				continue
			}
			out = append(out, v1.PodCondition{Type: g.ConditionType, Status: *st, Reason: "SetByController"})
		}
		if len(pod.Spec.ReadinessGates) > 0 && rapid.IntRange(0, 5).Draw(t, "duplicateGate") == 0 {
			g := rapid.SampledFrom(pod.Spec.ReadinessGates).Draw(t, "duplicateGateType")
			out = append(out, v1.PodCondition{Type: g.ConditionType, Status: rapid.SampledFrom(conditionStatuses()).Draw(t, "duplicateStatus")})
		}
		if rapid.IntRange(0, 4).Draw(t, "unrelated") == 0 {
			out = append(out, v1.PodCondition{Type: "example.com/unrelated", Status: v1.ConditionFalse})
		}
		if len(out) > 1 && rapid.IntRange(0, 3).Draw(t, "shuffle") == 0 {
			out = rapid.Permutation(out).Draw(t, "conditionOrder")
		}
		return out
	})
}

// conditionStatuses returns the statuses a gate condition is drawn from.
func conditionStatuses() []v1.ConditionStatus {
	return []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown, ""}
}

// gateStatus draws a gate condition's status, nil meaning the condition is missing; True
// is the most common.
func gateStatus() *rapid.Generator[*v1.ConditionStatus] {
	return rapid.OneOf(
		rapid.Just(ptr(v1.ConditionTrue)),
		rapid.SampledFrom([]*v1.ConditionStatus{nil, ptr(v1.ConditionTrue), ptr(v1.ConditionFalse), ptr(v1.ConditionUnknown), ptr(v1.ConditionStatus(""))}),
	)
}

// Phase generates pod phases: Running most often, then Pending, Succeeded, Failed, the
// empty phase and Unknown.
func Phase() *rapid.Generator[v1.PodPhase] {
	return rapid.OneOf(
		rapid.Just(v1.PodRunning),
		rapid.SampledFrom([]v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, "", v1.PodUnknown}),
	)
}

// OldStatus generates the previous status of pod: nil, an empty status, one with
// Initialized True (which keeps Initialized True under the restart-all-containers rule),
// one with Initialized False, or one with kubelet conditions whose observedGeneration is
// set or not (which matters when observedGeneration tracking is off).
func OldStatus(pod *v1.Pod) *rapid.Generator[*v1.PodStatus] {
	return rapid.Custom(func(t *rapid.T) *v1.PodStatus {
		switch rapid.IntRange(0, 4).Draw(t, "oldStatusKind") {
		case 0:
			return nil
		case 1:
			return &v1.PodStatus{}
		case 2:
			return &v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue},
				{Type: v1.PodInitialized, Status: v1.ConditionTrue},
			}}
		case 3:
			return &v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{
				{Type: v1.PodInitialized, Status: v1.ConditionFalse, Reason: readiness.ReasonContainersNotInitialized},
			}}
		}
		s := &v1.PodStatus{Phase: Phase().Draw(t, "oldPhase")}
		for _, ct := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady} {
			if rapid.IntRange(0, 3).Draw(t, "oldConditionMissing") == 0 {
				continue
			}
			c := v1.PodCondition{Type: ct, Status: rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}).Draw(t, "oldConditionStatus")}
			if rapid.Bool().Draw(t, "oldObservedGeneration") {
				c.ObservedGeneration = rapid.Int64Range(1, pod.Generation+1).Draw(t, "oldGeneration")
			}
			s.Conditions = append(s.Conditions, c)
		}
		s.ObservedGeneration = rapid.Int64Range(0, pod.Generation).Draw(t, "oldPodGeneration")
		return s
	})
}

// Features generates feature sets: v1.37.0 (the zero set) most often, v1.34, and sets
// with each behaviour switched independently.
func Features() *rapid.Generator[features.Set] {
	return rapid.OneOf(
		rapid.Just(features.V1_37()),
		rapid.Just(features.V1_34()),
		rapid.Custom(func(t *rapid.T) features.Set {
			return features.Set{
				NoReadyToStartContainers:     rapid.Bool().Draw(t, "noReadyToStartContainers"),
				NoSandboxDiagnostics:         rapid.Bool().Draw(t, "noSandboxDiagnostics"),
				NoObservedGenerationTracking: rapid.Bool().Draw(t, "noObservedGenerationTracking"),
				NoSidecars:                   rapid.Bool().Draw(t, "noSidecars"),
				NoRestartAllContainers:       rapid.Bool().Draw(t, "noRestartAllContainers"),
				NoContainerRestartRules:      rapid.Bool().Draw(t, "noContainerRestartRules"),
				NoPodLevelResourcesStatus:    rapid.Bool().Draw(t, "noPodLevelResourcesStatus"),
			}
		}),
	)
}

// RandomInput generates inputs whose parts are drawn independently: Pod, then
// ContainerStatuses, GateConditions, Sandboxes, Phase and OldStatus for that pod. Most
// of these are not ready for several reasons at once.
func RandomInput() *rapid.Generator[readiness.Input] {
	return rapid.Custom(func(t *rapid.T) readiness.Input {
		pod := Pod().Draw(t, "pod")
		s := ContainerStatuses(pod).Draw(t, "statuses")
		return readiness.Input{
			Pod:                   pod,
			Phase:                 Phase().Draw(t, "phase"),
			InitContainerStatuses: s.Init,
			ContainerStatuses:     s.Regular,
			Conditions:            GateConditions(pod).Draw(t, "conditions"),
			Sandboxes:             Sandboxes(pod).Draw(t, "sandboxes"),
			OldStatus:             OldStatus(pod).Draw(t, "oldStatus"),
		}
	})
}

// Input generates whole engine inputs, biased towards the interesting cases: about 40%
// come from ReadyInput (everything ready), 30% from FaultyInput (exactly one thing not
// ready) and 30% from RandomInput (independent noise).
func Input() *rapid.Generator[readiness.Input] {
	return rapid.Custom(func(t *rapid.T) readiness.Input {
		switch k := rapid.IntRange(0, 9).Draw(t, "shape"); {
		case k < 4:
			return ReadyInput().Draw(t, "ready")
		case k < 7:
			return FaultyInput().Draw(t, "faulty").Input
		default:
			return RandomInput().Draw(t, "random")
		}
	})
}

// ReadyInput generates inputs of fully ready pods, for which Evaluate with the default
// features returns all four conditions True: phase Running; a ready newest sandbox in the
// right network namespace with an IP (older sandboxes not ready); every regular init
// container terminated with exit code 0 and Ready; every sidecar and regular container
// running, Started and Ready; every readiness gate's condition True. Harmless noise is
// mixed in: statuses of containers not in the spec, unrelated conditions, any old status.
func ReadyInput() *rapid.Generator[readiness.Input] {
	return rapid.Custom(func(t *rapid.T) readiness.Input {
		pod := Pod().Draw(t, "pod")
		return readyInput(t, pod)
	})
}

func readyInput(t *rapid.T, pod *v1.Pod) readiness.Input {
	in := readiness.Input{Pod: pod, Phase: v1.PodRunning, OldStatus: OldStatus(pod).Draw(t, "oldStatus")}
	in.InitContainerStatuses = []v1.ContainerStatus{}
	for _, c := range pod.Spec.InitContainers {
		in.InitContainerStatuses = append(in.InitContainerStatuses, readyStatus(c.Name, isSidecar(&c)))
	}
	for _, c := range pod.Spec.Containers {
		in.ContainerStatuses = append(in.ContainerStatuses, readyStatus(c.Name, true))
	}
	if rapid.IntRange(0, 5).Draw(t, "stranger") == 0 {
		in.ContainerStatuses = append(in.ContainerStatuses, randomStatus(t, "not-in-spec"))
	}
	if rapid.IntRange(0, 3).Draw(t, "scheduled") == 0 {
		in.Conditions = append(in.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
	}
	for _, g := range pod.Spec.ReadinessGates {
		in.Conditions = append(in.Conditions, v1.PodCondition{Type: g.ConditionType, Status: v1.ConditionTrue})
	}
	if rapid.IntRange(0, 4).Draw(t, "unrelated") == 0 {
		in.Conditions = append(in.Conditions, v1.PodCondition{Type: "example.com/unrelated", Status: v1.ConditionFalse})
	}
	in.Sandboxes = readySandboxes(t, pod)
	return in
}

// readyStatus is the status of a container that is done with its part: a running,
// started and ready container or sidecar (running true), or an init container that
// terminated successfully (running false).
func readyStatus(name string, running bool) v1.ContainerStatus {
	s := v1.ContainerStatus{Name: name, Image: "registry.example/" + name + ":1", ContainerID: "containerd://" + name, Ready: true}
	if running {
		s.Started = ptr(true)
		s.State.Running = &v1.ContainerStateRunning{StartedAt: baseTime()}
	} else {
		s.Started = ptr(false)
		s.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}
	}
	return s
}

// readySandboxes returns a ready newest sandbox for pod, followed by up to two older
// ones that are not ready.
func readySandboxes(t *rapid.T, pod *v1.Pod) []sandbox.Status {
	n := rapid.IntRange(1, 3).Draw(t, "sandboxes")
	out := make([]sandbox.Status, n)
	for i := range out {
		attempt := uint32(n - 1 - i)
		out[i] = sandbox.Status{
			ID: fmt.Sprintf("sandbox-%d", attempt), Attempt: attempt, Ready: i == 0,
			HostNetwork: pod.Spec.HostNetwork, CreatedAt: baseTime().Add(-time.Duration(i) * time.Minute),
			IP: fmt.Sprintf("10.1.0.%d", attempt+1),
		}
	}
	if pod.Spec.HostNetwork && rapid.Bool().Draw(t, "hostNetworkNoStatus") {
		out[0].IP, out[0].NoNetworkStatus = "", true
	}
	return out
}

// isSidecar reports whether c is a restartable init container.
func isSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// baseTime is the fixed instant generated times are derived from, so that generated
// values do not depend on the clock.
func baseTime() metav1.Time {
	return metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func ptr[T any](v T) *T { return &v }
