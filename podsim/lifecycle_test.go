package podsim

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// step is one expectation: at second At, the status summary line is Want.
type step struct {
	At   float64
	Want string
}

func expect(t *testing.T, d *driver, steps []step) {
	t.Helper()
	for _, s := range steps {
		got := summary(d.status(sec(s.At)))
		if got != s.Want {
			t.Errorf("at %gs:\n got %s\nwant %s", s.At, got, s.Want)
		}
	}
}

func probe(initial, period, success, failure int32) *v1.Probe {
	return &v1.Probe{InitialDelaySeconds: initial, PeriodSeconds: period, SuccessThreshold: success, FailureThreshold: failure}
}

func TestPlainPod(t *testing.T) {
	d := start(t, mkPod("web", ctn("app")), testConfig(t, fixed()), sec(0))
	expect(t, d, []step{
		{0, "Pending PRSC=False Init=True CR=False Ready=False app=Waiting:ContainerCreating/r0/sfalse/Rfalse"},
		{1, "Pending PRSC=True Init=True CR=False Ready=False app=Waiting:ContainerCreating/r0/sfalse/Rfalse"},
		{2, "Running PRSC=True Init=True CR=True Ready=True app=Running/r0/strue/Rtrue"},
	})
	if n := d.sim.Next(); !n.IsZero() {
		t.Errorf("a steady running pod has a next change at %v", n)
	}
	f := factsAt(d.sim, sec(3))
	c := f.Containers[0]
	if !strings.HasPrefix(c.ContainerID, "containerd://") || len(c.ContainerID) != len("containerd://")+64 {
		t.Errorf("container ID %q", c.ContainerID)
	}
	if c.Image != "docker.io/library/nginx:1.27" || !strings.HasPrefix(c.ImageID, "docker.io/library/nginx@sha256:") || len(c.ImageID) != len("docker.io/library/nginx@sha256:")+64 {
		t.Errorf("image %q, image ID %q", c.Image, c.ImageID)
	}
	if f.Sandboxes[0].IP != "10.244.3.2" || !f.Sandboxes[0].Ready || f.PodIPs[0] != "10.244.3.2" {
		t.Errorf("sandbox %+v, pod IPs %v", f.Sandboxes[0], f.PodIPs)
	}
	s := d.status(sec(3))
	if s.PodIP != "10.244.3.2" || s.HostIP != "192.168.0.10" {
		t.Errorf("podIP %q hostIP %q", s.PodIP, s.HostIP)
	}
}

func TestInitAndSidecar(t *testing.T) {
	pod := mkPod("web", ctn("app"))
	pod.Spec.Containers[0].ReadinessProbe = probe(2, 5, 1, 3)
	proxy := ctn("proxy")
	proxy.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
	proxy.StartupProbe = probe(1, 1, 1, 3)
	pod.Spec.InitContainers = []v1.Container{ctn("setup"), proxy}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	// sandbox 1 s; setup pulls 1 s, runs 2 s; proxy pulls 1 s, starts at 5, its startup
	// probe passes at 6; app pulls 1 s, runs from 7, ready at its first probe at 9.
	expect(t, d, []step{
		{0, "Pending PRSC=False Init=False CR=False Ready=False setup=Waiting:PodInitializing/r0/sfalse/Rfalse proxy=Waiting:PodInitializing/r0/sfalse/Rfalse app=Waiting:PodInitializing/r0/sfalse/Rfalse"},
		{2, "Pending PRSC=True Init=False CR=False Ready=False setup=Running/r0/strue/Rfalse proxy=Waiting:PodInitializing/r0/sfalse/Rfalse app=Waiting:PodInitializing/r0/sfalse/Rfalse"},
		{4, "Pending PRSC=True Init=False CR=False Ready=False setup=Terminated:Completed:0/r0/sfalse/Rtrue proxy=Waiting:PodInitializing/r0/sfalse/Rfalse app=Waiting:PodInitializing/r0/sfalse/Rfalse"},
		{5, "Pending PRSC=True Init=False CR=False Ready=False setup=Terminated:Completed:0/r0/sfalse/Rtrue proxy=Running/r0/sfalse/Rfalse app=Waiting:PodInitializing/r0/sfalse/Rfalse"},
		{6, "Pending PRSC=True Init=True CR=False Ready=False setup=Terminated:Completed:0/r0/sfalse/Rtrue proxy=Running/r0/strue/Rtrue app=Waiting:PodInitializing/r0/sfalse/Rfalse"},
		{7, "Running PRSC=True Init=True CR=False Ready=False setup=Terminated:Completed:0/r0/sfalse/Rtrue proxy=Running/r0/strue/Rtrue app=Running/r0/strue/Rfalse"},
		{8.9, "Running PRSC=True Init=True CR=False Ready=False setup=Terminated:Completed:0/r0/sfalse/Rtrue proxy=Running/r0/strue/Rtrue app=Running/r0/strue/Rfalse"},
		{9, "Running PRSC=True Init=True CR=True Ready=True setup=Terminated:Completed:0/r0/sfalse/Rtrue proxy=Running/r0/strue/Rtrue app=Running/r0/strue/Rtrue"},
	})
}

func TestProbeDelaysAndThresholds(t *testing.T) {
	pod := mkPod("web", ctn("app"))
	pod.Annotations = map[string]string{AnnotationStartupFailures: "2", AnnotationReadinessFailures: "1"}
	pod.Spec.Containers[0].StartupProbe = probe(0, 2, 1, 3)
	pod.Spec.Containers[0].ReadinessProbe = probe(3, 3, 2, 3)
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	// Running at 2. Startup probes at 2, 4 fail, 6 succeeds. Readiness probes at 5, 8, 11,
	// 14: the first counted one is at 8 (after startup); it fails, 11 and 14 succeed, and
	// the success threshold of 2 is met at 14.
	expect(t, d, []step{
		{2, "Running PRSC=True Init=True CR=False Ready=False app=Running/r0/sfalse/Rfalse"},
		{5.9, "Running PRSC=True Init=True CR=False Ready=False app=Running/r0/sfalse/Rfalse"},
		{6, "Running PRSC=True Init=True CR=False Ready=False app=Running/r0/strue/Rfalse"},
		{13.9, "Running PRSC=True Init=True CR=False Ready=False app=Running/r0/strue/Rfalse"},
		{14, "Running PRSC=True Init=True CR=True Ready=True app=Running/r0/strue/Rtrue"},
	})
}

func TestStartupProbeFailureKills(t *testing.T) {
	pod := mkPod("web", ctn("app"))
	pod.Annotations = map[string]string{AnnotationStartupFailures: "3"}
	pod.Spec.Containers[0].StartupProbe = probe(1, 2, 1, 3)
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	// Running at 2; startup probes at 3, 5, 7 fail: killed at 7, restarted at once.
	expect(t, d, []step{
		{6.9, "Running PRSC=True Init=True CR=False Ready=False app=Running/r0/sfalse/Rfalse"},
		{7, "Running PRSC=True Init=True CR=False Ready=False app=Running/r1/sfalse/Rfalse"},
	})
	cs := cstatus(*d.prev, "app")
	lt := cs.LastTerminationState.Terminated
	if lt == nil || lt.ExitCode != 137 || lt.Reason != "Error" {
		t.Errorf("last termination %+v, want exit 137 Error", lt)
	}
}
