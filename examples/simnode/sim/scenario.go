package sim

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/podstatus/podstatus/podsim"
)

// Kind is one of the pod lifecycles the simulation knows. Each is a pod spec with podsim
// annotations (sim.podstatus.io/): the simulated runtime is podsim, the one the fleet
// agent serves, on its default profile.
type Kind string

// The pod lifecycles, cycled through in this order as pods are added.
const (
	// KindWeb: an init container, a sidecar proxy with a startup probe, an app with a
	// readiness probe, and a readiness gate the load balancer sets once it registered the pod.
	KindWeb Kind = "web"
	// KindSlowSandbox: the sandbox takes 12–20 s to come up (slow CNI).
	KindSlowSandbox Kind = "slow-sandbox"
	// KindCrashLoop: the container exits 1 after 3–6 s and is restarted with the kubelet's
	// doubling back-off (CrashLoopBackOff).
	KindCrashLoop Kind = "crashloop"
	// KindSandboxRetry: creating the sandbox fails twice (3–4 s each) before the third
	// attempt succeeds.
	KindSandboxRetry Kind = "sandbox-retry"
	// KindSandboxCrash: runs ready behind the load balancer until its sandbox dies, 30–40 s
	// after it came up; a new sandbox is created and the containers restart in it.
	KindSandboxCrash Kind = "sandbox-crash"
	// KindBatch: restartPolicy Never; the container completes after 6–10 s and the pod
	// Succeeds.
	KindBatch Kind = "batch"
	// KindTerminating: runs ready until it is deleted (35–45 s after its creation), then
	// terminates gracefully, its container taking 2–5 s to stop; the node agent then
	// deletes the pod object.
	KindTerminating Kind = "terminating"
)

// Kinds lists every Kind in the order pods are given them.
func Kinds() []Kind {
	return []Kind{KindWeb, KindSlowSandbox, KindCrashLoop, KindSandboxRetry, KindSandboxCrash, KindBatch, KindTerminating}
}

// GateType is the readiness gate the simulated load-balancer controller owns.
const GateType v1.PodConditionType = "lb.example.com/registered"

// A KindTerminating pod is deleted from deleteMin to deleteMax seconds after its creation,
// drawn from the run's seed.
const deleteMin, deleteMax = 35, 45

// podSpec returns the pod a kind runs: its spec, and the podsim annotations that script
// its runtime.
func podSpec(k Kind, namespace, name, node string) *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	readiness := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1}
	app := v1.Container{Name: "app", Image: "registry.example.com/app:1.0", ReadinessProbe: readiness}
	ann := map[string]string{
		// The app's readiness probe fails 1–3 times (once a second) before it succeeds.
		podsim.AnnotationReadinessFailures: "1..3",
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Generation: 1,
			Labels: map[string]string{"app": string(k)}, Annotations: ann},
		Spec: v1.PodSpec{NodeName: node, RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{app}},
	}
	switch k {
	case KindWeb:
		p.Spec.InitContainers = []v1.Container{
			{Name: "setup", Image: "registry.example.com/setup:1.0"},
			{Name: "proxy", Image: "registry.example.com/proxy:1.0", RestartPolicy: &always,
				StartupProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(15000)}},
					PeriodSeconds: 1}},
		}
		p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: GateType}}
		ann[podsim.AnnotationInitRunTime] = "1s..3s"
		ann[podsim.AnnotationStartupFailures] = "0..1"
	case KindSlowSandbox:
		ann[podsim.AnnotationSandboxDelay] = "12s..20s"
	case KindSandboxRetry:
		ann[podsim.AnnotationSandboxFailures] = "2"
		ann[podsim.AnnotationSandboxDelay] = "3s..4s"
	case KindSandboxCrash:
		p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: GateType}}
		ann[podsim.AnnotationSandboxCrashAfter] = "30s..40s"
	case KindCrashLoop:
		p.Spec.Containers = []v1.Container{{Name: "worker", Image: "registry.example.com/worker:1.0"}}
		ann = map[string]string{podsim.AnnotationRunTime: "3s..6s", podsim.AnnotationExitCode: "1"}
	case KindBatch:
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		p.Spec.Containers = []v1.Container{{Name: "job", Image: "registry.example.com/job:1.0"}}
		ann = map[string]string{podsim.AnnotationRunTime: "6s..10s"}
	case KindTerminating:
		ann[podsim.AnnotationStopDelay] = "2s..5s"
	}
	p.Annotations = ann
	return p
}
