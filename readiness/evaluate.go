package readiness

import (
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/sandbox"
)

// Evaluate computes the four kubelet-owned readiness conditions for in, exactly as the
// kubelet v1.37.0 generates them (or as the version selected by in.Features does).
//
// The error is non-nil only for malformed input (a nil Pod, or two containers of one
// name) and is then a *podstatus.InputError whose field paths start at Input.Pod. Evaluate never mutates in and, on a ready pod, does
// not allocate.
func Evaluate(in Input) (Result, error) {
	v, err := newView(&in)
	if err != nil {
		return Result{}, fmt.Errorf("readiness: Evaluate: %w", err)
	}
	return v.evaluate(), nil
}

// evaluate computes the four conditions through v.
func (v *view) evaluate() (r Result) {
	if v.in.Features.ReadyToStartContainers() {
		v.readyToStartContainers(&r.PodReadyToStartContainers)
	}
	v.initialized(&r.Initialized)
	v.containersReady(&r.ContainersReady)
	v.ready(&r.Ready, &r.ContainersReady)
	return r
}

// containersReady: every sidecar and regular container has a status and is Ready.
func (v *view) containersReady(c *v1.PodCondition) {
	c.Type, c.ObservedGeneration, c.Status = v1.ContainersReady, v.generation(v1.ContainersReady), v1.ConditionFalse
	if !v.known {
		c.Reason = ReasonUnknownContainerStatuses
		return
	}
	unknown, unready := 0, 0
	count := func(s *v1.ContainerStatus) {
		switch {
		case s == nil:
			unknown++
		case !s.Ready:
			unready++
		}
	}
	for i := range v.spec.InitContainers {
		if c := &v.spec.InitContainers[i]; v.sidecar(c) {
			count(v.status(c.Name))
		}
	}
	for i := range v.spec.Containers {
		count(v.status(v.spec.Containers[i].Name))
	}
	switch {
	case v.in.Phase == v1.PodSucceeded && unknown == 0:
		c.Reason = ReasonPodCompleted
		return
	case v.in.Phase == v1.PodFailed:
		c.Reason = ReasonPodFailed
		return
	case unknown+unready == 0:
		c.Status = v1.ConditionTrue
		return
	}
	var msg nameList
	if unknown > 0 {
		v.eachReadinessContainer(func(name string, s *v1.ContainerStatus) {
			if s == nil {
				msg.add("containers with unknown status: ", name)
			}
		})
		msg.close()
	}
	if unready > 0 {
		v.eachReadinessContainer(func(name string, s *v1.ContainerStatus) {
			if s != nil && !s.Ready {
				msg.add("containers with unready status: ", name)
			}
		})
	}
	c.Reason = ReasonContainersNotReady
	c.Message = msg.String()
}

// eachReadinessContainer calls f, in spec order, for every container whose readiness
// counts: sidecars first, then regular containers, with its status (nil if unknown).
func (v *view) eachReadinessContainer(f func(name string, s *v1.ContainerStatus)) {
	for i := range v.spec.InitContainers {
		if c := &v.spec.InitContainers[i]; v.sidecar(c) {
			f(c.Name, v.status(c.Name))
		}
	}
	for i := range v.spec.Containers {
		f(v.spec.Containers[i].Name, v.status(v.spec.Containers[i].Name))
	}
}

// ready: ContainersReady, and then every readiness gate True.
func (v *view) ready(c, cr *v1.PodCondition) {
	c.Type, c.ObservedGeneration = v1.PodReady, v.generation(v1.PodReady)
	if cr.Status != v1.ConditionTrue {
		c.Status, c.Reason, c.Message = cr.Status, cr.Reason, cr.Message
		return
	}
	c.Status = v1.ConditionTrue
	var msg nameList
	for _, g := range v.spec.ReadinessGates {
		gc := v.gate(g.ConditionType)
		switch {
		case gc == nil:
			msg.sentence("corresponding condition of pod readiness gate ", strconv.Quote(string(g.ConditionType)), " does not exist.")
		case gc.Status != v1.ConditionTrue:
			msg.sentence("the status of pod readiness gate ", strconv.Quote(string(g.ConditionType)), ` is not "True", but `, string(gc.Status))
		}
	}
	if msg.count > 0 {
		c.Status = v1.ConditionFalse
		c.Reason = ReasonReadinessGatesNotReady
		c.Message = msg.String()
	}
}

// initialized: every init container done (regular: Ready; sidecar: Started), or a regular
// container already started.
func (v *view) initialized(c *v1.PodCondition) {
	c.Type, c.ObservedGeneration, c.Status = v1.PodInitialized, v.generation(v1.PodInitialized), v1.ConditionFalse
	if !v.known && len(v.spec.InitContainers) > 0 {
		c.Reason = ReasonUnknownContainerStatuses
		return
	}
	unknown, incomplete := 0, 0
	v.eachInitContainer(func(name string, s *v1.ContainerStatus, done bool) {
		switch {
		case s == nil:
			unknown++
		case !done:
			incomplete++
		}
	})
	switch {
	case v.in.Phase == v1.PodSucceeded && unknown == 0:
		c.Status, c.Reason = v1.ConditionTrue, ReasonPodCompleted
		return
	case unknown+incomplete == 0 || v.anyRegularStarted():
		// Both give True without a reason, so the cheap test goes first: on a running pod
		// whose init containers are done, the status scan of anyRegularStarted is skipped.
		c.Status = v1.ConditionTrue
		return
	case v.in.Features.RestartAllContainers() && v.oldInitializedTrue():
		// Initialized stays True while all containers restart in place.
		c.Status = v1.ConditionTrue
		return
	}
	var msg nameList
	if unknown > 0 {
		v.eachInitContainer(func(name string, s *v1.ContainerStatus, _ bool) {
			if s == nil {
				msg.add("containers with unknown status: ", name)
			}
		})
		msg.close()
	}
	if incomplete > 0 {
		v.eachInitContainer(func(name string, s *v1.ContainerStatus, done bool) {
			if s != nil && !done {
				msg.add("containers with incomplete status: ", name)
			}
		})
	}
	c.Reason = ReasonContainersNotInitialized
	c.Message = msg.String()
}

// eachInitContainer calls f, in spec order, for every init container with its status (nil
// if unknown) and whether it counts as initialized.
func (v *view) eachInitContainer(f func(name string, s *v1.ContainerStatus, done bool)) {
	for i := range v.spec.InitContainers {
		c := &v.spec.InitContainers[i]
		s := v.status(c.Name)
		done := false
		if s != nil {
			if v.sidecar(c) {
				done = s.Started != nil && *s.Started
			} else {
				done = s.Ready
			}
		}
		f(c.Name, s, done)
	}
}

// readyToStartContainers: True exactly when no new sandbox is needed.
func (v *view) readyToStartContainers(c *v1.PodCondition) {
	c.Type, c.ObservedGeneration = v1.PodReadyToStartContainers, v.generation(v1.PodReadyToStartContainers)
	d := sandbox.NeedsNew(v.in.Pod, v.in.Sandboxes)
	if !d.Create {
		c.Status = v1.ConditionTrue
		return
	}
	c.Status = v1.ConditionFalse
	if v.in.Features.SandboxDiagnostics() {
		c.Reason, c.Message = ReasonPodSandboxNotReady, d.Message
	}
}
