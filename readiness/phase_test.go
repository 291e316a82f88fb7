package readiness_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/readiness"
)

// The getPhase tables of the kubelet v1.37.0 (pkg/kubelet/kubelet_pods_test.go), one
// named case per upstream case, with the upstream expectation. Statuses are written
// compactly as "name=state ..."; the states are the upstream test helpers:
//
//	run         runningState          Running, Started unset
//	started     startedState          Running, Started true
//	stop        stoppedState          Terminated, exit 0
//	ok          succeededState        Terminated, exit 0
//	fail        failedState           Terminated, exit -1
//	fail42      failedStateWithExitCode(42)
//	wait        waitingState          Waiting
//	waitLT0     waitingStateWithLastTermination      Waiting, last terminated exit 0
//	waitLTfail  waitingStateWithNonZeroTermination   Waiting, last terminated exit -1
//	restarting  waitingStateWithRestartingAllContainers
//
// A status goes to the init list when its name is an init container of the spec, to the
// regular list otherwise (the kubelet joins the two lists, so this does not change the
// lookup).

type phaseCase struct {
	name        string
	statuses    string
	terminal    bool
	initialized bool
	want        v1.PodPhase
}

func phaseStatus(tok string) v1.ContainerStatus {
	name, state, ok := strings.Cut(tok, "=")
	if !ok {
		panic("bad status token " + tok)
	}
	s := v1.ContainerStatus{Name: name}
	term := func(code int32, reason string) *v1.ContainerStateTerminated {
		return &v1.ContainerStateTerminated{ExitCode: code, Reason: reason}
	}
	switch state {
	case "run":
		s.State.Running = &v1.ContainerStateRunning{}
	case "started":
		t := true
		s.State.Running = &v1.ContainerStateRunning{}
		s.Started = &t
	case "stop", "ok":
		s.State.Terminated = term(0, "")
	case "fail":
		s.State.Terminated = term(-1, "")
	case "fail42":
		s.State.Terminated = term(42, "")
	case "wait":
		s.State.Waiting = &v1.ContainerStateWaiting{}
	case "waitLT0":
		s.State.Waiting = &v1.ContainerStateWaiting{}
		s.LastTerminationState.Terminated = term(0, "")
	case "waitLTfail":
		s.State.Waiting = &v1.ContainerStateWaiting{}
		s.LastTerminationState.Terminated = term(-1, "")
	case "restarting":
		s.State.Waiting = &v1.ContainerStateWaiting{Reason: readiness.ReasonRestartingAllContainers}
		s.LastTerminationState.Terminated = term(137, readiness.ReasonRestartingAllContainers)
	default:
		panic("bad state " + state)
	}
	return s
}

func phaseInput(spec v1.PodSpec, c phaseCase) readiness.PhaseInput {
	in := readiness.PhaseInput{Pod: &v1.Pod{Spec: spec}, Terminal: c.terminal, Initialized: c.initialized}
	isInit := map[string]bool{}
	for _, ic := range spec.InitContainers {
		isInit[ic.Name] = true
	}
	for _, tok := range strings.Fields(c.statuses) {
		s := phaseStatus(tok)
		if isInit[s.Name] {
			in.InitContainerStatuses = append(in.InitContainerStatuses, s)
		} else {
			in.ContainerStatuses = append(in.ContainerStatuses, s)
		}
	}
	return in
}

func phasePolicy(p v1.ContainerRestartPolicy) *v1.ContainerRestartPolicy { return &p }

func phaseContainers(ns ...string) []v1.Container {
	out := make([]v1.Container, len(ns))
	for i, n := range ns {
		out[i] = v1.Container{Name: n}
	}
	return out
}

func runPhaseTable(t *testing.T, spec v1.PodSpec, cases []phaseCase, fs ...features.Set) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := phaseInput(spec, c)
			for _, f := range fs {
				in.Features = f
			}
			got, err := readiness.Phase(in)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("statuses %q terminal=%v initialized=%v: phase %s, upstream %s", c.statuses, c.terminal, c.initialized, got, c.want)
			}
		})
	}
}

func TestPhaseUpstreamRestartAlways(t *testing.T) {
	spec := v1.PodSpec{Containers: phaseContainers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyAlways}
	runPhaseTable(t, spec, []phaseCase{
		{"waiting", "", false, false, v1.PodPending},
		{"all running", "containerA=run containerB=run", false, false, v1.PodRunning},
		{"all stopped with restart always", "containerA=stop containerB=stop", false, false, v1.PodRunning},
		{"all succeeded with restart always, but the pod is terminal", "containerA=ok containerB=ok", true, false, v1.PodSucceeded},
		{"all stopped with restart always, but the pod is terminal", "containerA=ok containerB=fail", true, false, v1.PodFailed},
		{"mixed state #1 with restart always", "containerA=run containerB=stop", false, false, v1.PodRunning},
		{"mixed state #2 with restart always", "containerA=run", false, false, v1.PodPending},
		{"mixed state #3 with restart always", "containerA=run containerB=wait", false, false, v1.PodPending},
		{"backoff crashloop container with restart always", "containerA=run containerB=waitLT0", false, false, v1.PodRunning},
	})
}

func TestPhaseUpstreamRestartAlwaysInitContainers(t *testing.T) {
	spec := v1.PodSpec{InitContainers: phaseContainers("containerX"), Containers: phaseContainers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyAlways}
	runPhaseTable(t, spec, []phaseCase{
		{"empty, waiting", "", false, false, v1.PodPending},
		{"init container running", "containerX=run", false, false, v1.PodPending},
		{"init container terminated non-zero", "containerX=fail", false, false, v1.PodPending},
		{"init container waiting, terminated zero", "containerX=waitLT0", false, false, v1.PodPending},
		{"init container waiting, terminated non-zero", "containerX=waitLTfail", false, false, v1.PodPending},
		{"init container waiting, not terminated", "containerX=wait", false, false, v1.PodPending},
		{"init container succeeded", "containerX=ok containerA=run containerB=run", false, false, v1.PodRunning},
	})
}

func TestPhaseUpstreamRestartAlwaysRestartableInitContainers(t *testing.T) {
	spec := v1.PodSpec{
		InitContainers: []v1.Container{{Name: "containerX", RestartPolicy: phasePolicy(v1.ContainerRestartPolicyAlways)}},
		Containers:     phaseContainers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyAlways,
	}
	runPhaseTable(t, spec, []phaseCase{
		{"empty, waiting", "", false, false, v1.PodPending},
		{"restartable init container running", "containerX=run", false, false, v1.PodPending},
		{"restartable init container stopped", "containerX=stop", false, false, v1.PodPending},
		{"restartable init container waiting, terminated zero", "containerX=waitLT0", false, false, v1.PodPending},
		{"restartable init container waiting, terminated non-zero", "containerX=waitLTfail", false, false, v1.PodPending},
		{"restartable init container waiting, not terminated", "containerX=wait", false, false, v1.PodPending},
		{"restartable init container started, 1/2 regular container running", "containerX=started containerA=run", false, true, v1.PodPending},
		{"restartable init container started, all regular containers running", "containerX=started containerA=run containerB=run", false, true, v1.PodRunning},
		{"restartable init container running, all regular containers running", "containerX=run containerA=run containerB=run", false, true, v1.PodRunning},
		{"restartable init container stopped, all regular containers running", "containerX=stop containerA=run containerB=run", false, true, v1.PodRunning},
		{"backoff crashloop restartable init container, all regular containers running", "containerX=waitLT0 containerA=run containerB=run", false, true, v1.PodRunning},
		{"all regular containers succeeded and restartable init container failed with restart always, but the pod is terminal", "containerX=fail containerA=ok containerB=ok", true, true, v1.PodSucceeded},
		{"all regular containers succeeded and restartable init container succeeded with restart always, but the pod is terminal", "containerX=ok containerA=ok containerB=ok", true, true, v1.PodSucceeded},
		{"re-initializing the pod after the sandbox is recreated", "containerX=run containerA=run containerB=run", false, false, v1.PodPending},
	})
}

func TestPhaseUpstreamRestartAlwaysAndPodHasRun(t *testing.T) {
	spec := v1.PodSpec{
		InitContainers: []v1.Container{{Name: "containerX"}, {Name: "containerY", RestartPolicy: phasePolicy(v1.ContainerRestartPolicyAlways)}},
		Containers:     phaseContainers("containerA"), RestartPolicy: v1.RestartPolicyAlways,
	}
	runPhaseTable(t, spec, []phaseCase{
		{"regular init containers, restartable init container and regular container are all running", "containerX=run containerY=run containerA=run", false, false, v1.PodPending},
		{"regular containers is stopped, restartable init container and regular int container are both running", "containerX=run containerY=run containerA=stop", false, false, v1.PodPending},
		{"re-created sandbox: regular init container is succeeded, restartable init container is running, old regular containers is stopped", "containerX=ok containerY=run containerA=stop", false, false, v1.PodPending},
		{"regular init container is succeeded, restartable init container is running, regular containers is stopped", "containerX=ok containerY=run containerA=stop", false, true, v1.PodRunning},
		{"regular init container is succeeded, restartable init container and regular containers are both running", "containerX=ok containerY=run containerA=run", false, true, v1.PodRunning},
	})
}

func TestPhaseUpstreamRestartNever(t *testing.T) {
	spec := v1.PodSpec{Containers: phaseContainers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyNever}
	runPhaseTable(t, spec, []phaseCase{
		{"waiting", "", false, false, v1.PodPending},
		{"all running with restart never", "containerA=run containerB=run", false, false, v1.PodRunning},
		{"all succeeded with restart never", "containerA=ok containerB=ok", false, false, v1.PodSucceeded},
		{"all failed with restart never", "containerA=fail containerB=fail", false, false, v1.PodFailed},
		{"mixed state #1 with restart never", "containerA=run containerB=ok", false, false, v1.PodRunning},
		{"mixed state #2 with restart never", "containerA=run", false, false, v1.PodPending},
		{"mixed state #3 with restart never", "containerA=run containerB=wait", false, false, v1.PodPending},
	})
}

func TestPhaseUpstreamRestartNeverInitContainers(t *testing.T) {
	spec := v1.PodSpec{InitContainers: phaseContainers("containerX"), Containers: phaseContainers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyNever}
	runPhaseTable(t, spec, []phaseCase{
		{"empty, waiting", "", false, false, v1.PodPending},
		{"init container running", "containerX=run", false, false, v1.PodPending},
		{"init container terminated non-zero", "containerX=fail", false, false, v1.PodFailed},
		{"init container waiting, terminated zero", "containerX=waitLT0", false, false, v1.PodPending},
		{"init container waiting, terminated non-zero", "containerX=waitLTfail", false, false, v1.PodFailed},
		{"init container waiting, not terminated", "containerX=wait", false, false, v1.PodPending},
		{"init container succeeded", "containerX=ok containerA=run containerB=run", false, false, v1.PodRunning},
	})
}

func TestPhaseUpstreamRestartNeverRestartableInitContainers(t *testing.T) {
	spec := v1.PodSpec{
		InitContainers: []v1.Container{{Name: "containerX", RestartPolicy: phasePolicy(v1.ContainerRestartPolicyAlways)}},
		Containers:     phaseContainers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyNever,
	}
	runPhaseTable(t, spec, []phaseCase{
		{"empty, waiting", "", false, false, v1.PodPending},
		{"restartable init container running", "containerX=run", false, false, v1.PodPending},
		{"restartable init container stopped", "containerX=stop", false, false, v1.PodPending},
		{"restartable init container waiting, terminated zero", "containerX=waitLT0", false, false, v1.PodPending},
		{"restartable init container waiting, terminated non-zero", "containerX=waitLTfail", false, false, v1.PodPending},
		{"restartable init container waiting, not terminated", "containerX=wait", false, false, v1.PodPending},
		{"restartable init container started, one main container running", "containerX=started containerA=run", false, true, v1.PodPending},
		{"restartable init container started, main containers succeeded", "containerX=started containerA=ok containerB=ok", false, true, v1.PodRunning},
		{"restartable init container re-running, main containers succeeded", "containerX=run containerA=ok containerB=ok", false, true, v1.PodRunning},
		{"all containers succeeded", "containerX=ok containerA=ok containerB=ok", false, true, v1.PodSucceeded},
		{"restartable init container terminated non-zero, main containers succeeded", "containerX=fail containerA=ok containerB=ok", false, true, v1.PodSucceeded},
		{"backoff crashloop restartable init container, main containers succeeded", "containerX=waitLT0 containerA=ok containerB=ok", false, true, v1.PodSucceeded},
		{"backoff crashloop with non-zero restartable init container, main containers succeeded", "containerX=waitLTfail containerA=ok containerB=ok", false, true, v1.PodSucceeded},
	})
}

func TestPhaseUpstreamRestartOnFailure(t *testing.T) {
	spec := v1.PodSpec{Containers: phaseContainers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyOnFailure}
	runPhaseTable(t, spec, []phaseCase{
		{"waiting", "", false, false, v1.PodPending},
		{"all running with restart onfailure", "containerA=run containerB=run", false, false, v1.PodRunning},
		{"all succeeded with restart onfailure", "containerA=ok containerB=ok", false, false, v1.PodSucceeded},
		{"all failed with restart never", "containerA=fail containerB=fail", false, false, v1.PodRunning},
		{"mixed state #1 with restart onfailure", "containerA=run containerB=ok", false, false, v1.PodRunning},
		{"mixed state #2 with restart onfailure", "containerA=run", false, false, v1.PodPending},
		{"mixed state #3 with restart onfailure", "containerA=run containerB=wait", false, false, v1.PodPending},
		{"backoff crashloop container with restart onfailure", "containerA=run containerB=waitLT0", false, false, v1.PodRunning},
	})
}

// The container-restart-policy tables: each upstream case has its own spec.
type specPhaseCase struct {
	name     string
	spec     v1.PodSpec
	statuses string
	want     v1.PodPhase
}

func runSpecPhaseTable(t *testing.T, cases []specPhaseCase, fs ...features.Set) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Upstream calls getPhase(pod, statuses, false, true) in these tables.
			in := phaseInput(c.spec, phaseCase{statuses: c.statuses, initialized: true})
			for _, f := range fs {
				in.Features = f
			}
			got, err := readiness.Phase(in)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("statuses %q: phase %s, upstream %s", c.statuses, got, c.want)
			}
		})
	}
}

func TestPhaseUpstreamContainerRestartPolicy(t *testing.T) {
	always, onFailure, never := phasePolicy(v1.ContainerRestartPolicyAlways), phasePolicy(v1.ContainerRestartPolicyOnFailure), phasePolicy(v1.ContainerRestartPolicyNever)
	runSpecPhaseTable(t, []specPhaseCase{
		{"container with restart policy Never failed",
			v1.PodSpec{Containers: []v1.Container{{Name: "failed-container", RestartPolicy: never}}, RestartPolicy: v1.RestartPolicyAlways},
			"failed-container=fail", v1.PodFailed},
		{"container with restart policy OnFailure failed",
			v1.PodSpec{Containers: []v1.Container{{Name: "failed-container", RestartPolicy: onFailure}}, RestartPolicy: v1.RestartPolicyAlways},
			"failed-container=fail", v1.PodRunning},
		{"container with restart policy Always failed",
			v1.PodSpec{Containers: []v1.Container{{Name: "failed-container", RestartPolicy: always}}, RestartPolicy: v1.RestartPolicyAlways},
			"failed-container=fail", v1.PodRunning},
		{"At least one container with restartable container-level restart policy failed",
			v1.PodSpec{Containers: []v1.Container{{Name: "containerA", RestartPolicy: always}, {Name: "containerB"}}, RestartPolicy: v1.RestartPolicyNever},
			"containerA=ok containerB=fail", v1.PodRunning},
		{"All containers without restartable container-level restart policy failed",
			v1.PodSpec{Containers: []v1.Container{{Name: "containerA", RestartPolicy: never}, {Name: "containerB", RestartPolicy: onFailure}}, RestartPolicy: v1.RestartPolicyAlways},
			"containerA=fail containerB=ok", v1.PodFailed},
		{"All containers succeeded",
			v1.PodSpec{Containers: []v1.Container{{Name: "containerA", RestartPolicy: never}, {Name: "containerB", RestartPolicy: onFailure}}, RestartPolicy: v1.RestartPolicyAlways},
			"containerA=ok containerB=ok", v1.PodSucceeded},
	})
}

func TestPhaseUpstreamContainerRestartPolicyInitContainers(t *testing.T) {
	always, onFailure, never := phasePolicy(v1.ContainerRestartPolicyAlways), phasePolicy(v1.ContainerRestartPolicyOnFailure), phasePolicy(v1.ContainerRestartPolicyNever)
	runSpecPhaseTable(t, []specPhaseCase{
		{"init container with restart policy Never failed",
			v1.PodSpec{InitContainers: []v1.Container{{Name: "failed-container", RestartPolicy: never}}, Containers: phaseContainers("container"), RestartPolicy: v1.RestartPolicyAlways},
			"failed-container=fail", v1.PodFailed},
		{"init container with restart policy OnFailure failed",
			v1.PodSpec{InitContainers: []v1.Container{{Name: "failed-container", RestartPolicy: onFailure}}, Containers: phaseContainers("container"), RestartPolicy: v1.RestartPolicyNever},
			"failed-container=fail", v1.PodPending},
		{"container with restart policy Always failed",
			v1.PodSpec{InitContainers: []v1.Container{{Name: "failed-container", RestartPolicy: always}}, Containers: phaseContainers("container"), RestartPolicy: v1.RestartPolicyNever},
			"failed-container=fail", v1.PodPending},
	})
}

func TestPhaseUpstreamRestartAllContainers(t *testing.T) {
	rule := []v1.ContainerRestartRule{{
		Action:    v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
	}}
	withRule := v1.Container{Name: "container", RestartPolicy: phasePolicy(v1.ContainerRestartPolicyNever), RestartPolicyRules: rule}
	sidecarWithRule := v1.Container{Name: "container", RestartPolicy: phasePolicy(v1.ContainerRestartPolicyAlways), RestartPolicyRules: rule}
	never := v1.RestartPolicyNever
	runSpecPhaseTable(t, []specPhaseCase{
		// Trigger RestartAllContainers
		{"regular container triggers RestartAllContainers",
			v1.PodSpec{Containers: []v1.Container{withRule}, RestartPolicy: never},
			"container=fail42", v1.PodRunning},
		{"init container triggers RestartAllContainers",
			v1.PodSpec{InitContainers: []v1.Container{withRule}, RestartPolicy: never},
			"container=fail42 regular=wait", v1.PodPending},
		{"sidecar container triggers RestartAllContainers",
			v1.PodSpec{InitContainers: []v1.Container{sidecarWithRule}, Containers: phaseContainers("regular"), RestartPolicy: never},
			"container=fail42 regular=wait", v1.PodPending},
		{"sidecar container triggers RestartAllContainers, kills another init container",
			v1.PodSpec{InitContainers: []v1.Container{sidecarWithRule, {Name: "init"}}, Containers: phaseContainers("regular"), RestartPolicy: never},
			"container=fail42 init=wait regular=wait", v1.PodPending},
		// Cleanup phase
		{"regular container triggers RestartAllContainers, cleaned up",
			v1.PodSpec{Containers: []v1.Container{withRule}, RestartPolicy: never},
			"container=restarting", v1.PodRunning},
		{"init container triggers RestartAllContainers, cleaned up",
			v1.PodSpec{InitContainers: []v1.Container{withRule}, RestartPolicy: never},
			"container=restarting regular=wait", v1.PodPending},
		{"sidecar container triggers RestartAllContainers, cleaned up",
			v1.PodSpec{InitContainers: []v1.Container{sidecarWithRule}, Containers: phaseContainers("regular"), RestartPolicy: never},
			"container=restarting regular=wait", v1.PodPending},
		{"sidecar container triggers RestartAllContainers, kills another init container, cleaned up",
			v1.PodSpec{InitContainers: []v1.Container{sidecarWithRule, {Name: "init"}}, Containers: phaseContainers("regular"), RestartPolicy: never},
			"container=restarting container=restarting regular=wait", v1.PodPending},
		// Startup phase
		{"regular container triggered RestartAllContainers; init container succeeded",
			v1.PodSpec{InitContainers: phaseContainers("init"), Containers: []v1.Container{withRule}, RestartPolicy: never},
			"init=ok container=restarting", v1.PodRunning},
		{"regular container triggered RestartAllContainers; init container failed",
			v1.PodSpec{InitContainers: phaseContainers("init"), Containers: []v1.Container{withRule}, RestartPolicy: never},
			"init=fail container=restarting", v1.PodFailed},
		{"init container triggered RestartAllContainers",
			v1.PodSpec{InitContainers: []v1.Container{withRule}, Containers: phaseContainers("regular"), RestartPolicy: never},
			"container=fail42 regular=wait", v1.PodPending},
		{"init container triggered RestartAllContainers; init container succeeds",
			v1.PodSpec{InitContainers: []v1.Container{withRule}, Containers: phaseContainers("regular"), RestartPolicy: never},
			"container=ok regular=wait", v1.PodPending},
		{"sidecar container triggered RestartAllContainers kills regular container",
			v1.PodSpec{InitContainers: []v1.Container{sidecarWithRule}, Containers: phaseContainers("regular"), RestartPolicy: never},
			"container=restarting regular=restarting", v1.PodRunning},
		{"sidecar container triggered RestartAllContainers kills regular container; sidecar running",
			v1.PodSpec{InitContainers: []v1.Container{sidecarWithRule}, Containers: phaseContainers("regular"), RestartPolicy: never},
			"container=run regular=restarting", v1.PodRunning},
		{"sidecar container triggered RestartAllContainers; kills init container; sidecar running",
			v1.PodSpec{InitContainers: []v1.Container{sidecarWithRule, {Name: "init"}}, Containers: phaseContainers("regular"), RestartPolicy: never},
			"container=run container=restarting regular=wait", v1.PodPending},
	})
}

// With the v1.34 feature set (no container restart rules, no restart-all), the pod
// restartPolicy alone decides: the v1.34 expectations for the rule-dependent cases.
func TestPhaseWithoutContainerRestartRules(t *testing.T) {
	old := features.V1_34()
	never := phasePolicy(v1.ContainerRestartPolicyNever)
	runSpecPhaseTable(t, []specPhaseCase{
		{"container policy Never ignored under pod policy Always",
			v1.PodSpec{Containers: []v1.Container{{Name: "a", RestartPolicy: never}}, RestartPolicy: v1.RestartPolicyAlways},
			"a=fail", v1.PodRunning},
		{"init container policy Never ignored under pod policy Always",
			v1.PodSpec{InitContainers: []v1.Container{{Name: "i", RestartPolicy: never}}, Containers: phaseContainers("a"), RestartPolicy: v1.RestartPolicyAlways},
			"i=fail", v1.PodPending},
		{"failed init container under pod policy Never",
			v1.PodSpec{InitContainers: phaseContainers("i"), Containers: phaseContainers("a"), RestartPolicy: v1.RestartPolicyNever},
			"i=fail", v1.PodFailed},
		{"restarting reason is an ordinary failure without restart-all",
			v1.PodSpec{Containers: phaseContainers("a"), RestartPolicy: v1.RestartPolicyNever},
			"a=restarting", v1.PodFailed},
	}, old)
}

func TestPhaseMalformedInput(t *testing.T) {
	if _, err := readiness.Phase(readiness.PhaseInput{}); err == nil {
		t.Error("nil pod: no error")
	}
	dup := &v1.Pod{Spec: v1.PodSpec{InitContainers: phaseContainers("a"), Containers: phaseContainers("a")}}
	_, err := readiness.Phase(readiness.PhaseInput{Pod: dup})
	if err == nil || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("duplicate names: error %v", err)
	}
}
