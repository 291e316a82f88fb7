package podsim

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestLivenessFailureRestarts(t *testing.T) {
	pod := mkPod("live", ctn("app"))
	pod.Spec.Containers[0].LivenessProbe = probe(0, 5, 1, 3)
	pod.Annotations = map[string]string{AnnotationLivenessFailAfter: "10s"}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	// Running at 2; liveness runs at 2, 7, 12 ...; failing from 12, the third failure (22)
	// kills it, restarted at once; the next instance is killed at 42 and waits 10 s.
	expect(t, d, []step{
		{21.9, "Running PRSC=True Init=True CR=True Ready=True app=Running/r0/strue/Rtrue"},
		{22, "Running PRSC=True Init=True CR=True Ready=True app=Running/r1/strue/Rtrue"},
		{42, "Running PRSC=True Init=True CR=False Ready=False app=Waiting:CrashLoopBackOff/r1/sfalse/Rfalse"},
		{52, "Running PRSC=True Init=True CR=True Ready=True app=Running/r2/strue/Rtrue"},
	})
	if lt := cstatus(*d.prev, "app").LastTerminationState.Terminated; lt == nil || lt.ExitCode != 137 || lt.Reason != "Error" {
		t.Errorf("last termination %+v", lt)
	}
}

func TestReadinessFlap(t *testing.T) {
	pod := mkPod("flap", ctn("app"))
	pod.Spec.Containers[0].ReadinessProbe = probe(0, 5, 1, 3)
	pod.Annotations = map[string]string{AnnotationReadinessFlap: "7s"}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	expect(t, d, []step{
		{2, "Running PRSC=True Init=True CR=True Ready=True app=Running/r0/strue/Rtrue"},
		{9, "Running PRSC=True Init=True CR=False Ready=False app=Running/r0/strue/Rfalse"},
		{16, "Running PRSC=True Init=True CR=True Ready=True app=Running/r0/strue/Rtrue"},
	})
	if n := d.sim.Next(); !n.Equal(sec(23)) {
		t.Errorf("next %v, want 23s", n.Sub(t0))
	}
}

func TestDeletionBeforeStart(t *testing.T) {
	pod := mkPod("early", ctn("app"))
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	del := pod.DeepCopy()
	del.DeletionTimestamp = &metav1.Time{Time: sec(0.5)}
	updateAt(d.sim, del, sec(0.5))
	f := factsAt(d.sim, sec(0.5))
	if !f.Terminal || !f.Stopped || !f.Done || len(f.Sandboxes) != 0 || len(f.Containers) != 0 || !d.sim.Next().IsZero() {
		t.Errorf("facts %+v next %v", f, d.sim.Next())
	}
}

func TestDeletionGraceShortened(t *testing.T) {
	pod := mkPod("short", ctn("app"))
	pod.Annotations = map[string]string{AnnotationStopDelay: "20s"}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	del := pod.DeepCopy()
	del.DeletionTimestamp = &metav1.Time{Time: sec(10)}
	del.DeletionGracePeriodSeconds = ptr.To(int64(30))
	updateAt(d.sim, del, sec(10))
	if n := d.sim.Next(); !n.Equal(sec(30)) {
		t.Fatalf("next %v, want 30s (the stop delay)", n.Sub(t0))
	}
	del2 := del.DeepCopy()
	del2.DeletionGracePeriodSeconds = ptr.To(int64(0))
	updateAt(d.sim, del2, sec(12))
	d.pod = del2
	s := d.status(sec(12))
	if f := factsAt(d.sim, sec(12)); !f.Done || stateOf(cstatus(s, "app")) != "Terminated:Error:137" {
		t.Errorf("Done %v %s", f.Done, summary(s))
	}
}

func TestAdoptCrashLoopingPod(t *testing.T) {
	pod := mkPod("crash", ctn("app"))
	pod.Annotations = map[string]string{AnnotationRunTime: "1s", AnnotationExitCode: "1"}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	before := d.status(sec(20)) // run 2 from 14 to 15, then back-off 20 s until 35
	if cs := cstatus(before, "app"); stateOf(cs) != "Waiting:CrashLoopBackOff" || cs.RestartCount != 2 {
		t.Fatalf("%s", summary(before))
	}
	adopted, errs := newAt(d.pod.DeepCopy(), testConfig(t, fixed()), sec(21))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	d2 := &driver{t: t, pod: d.pod, sim: adopted, prev: d.prev}
	after := d2.status(sec(21))
	if cs := cstatus(after, "app"); stateOf(cs) != "Waiting:CrashLoopBackOff" || cs.RestartCount != 2 || after.Phase != v1.PodRunning {
		t.Errorf("after adoption %s", summary(after))
	}
	// The back-off estimated from two restarts is 20 s from the exit at 15.
	if n := adopted.Next(); !n.Equal(sec(35)) {
		t.Errorf("next %v, want 35s", n.Sub(t0))
	}
	s := d2.status(sec(35))
	if cs := cstatus(s, "app"); stateOf(cs) != "Running" || cs.RestartCount != 3 {
		t.Errorf("at 35s %s", summary(s))
	}
}

// Two failed attempts at creating the sandbox take three sandbox delays; the sandbox that
// is finally created is attempt 0, as no failed one is left behind.
func TestSandboxCreateFailures(t *testing.T) {
	pod := mkPod("retry", ctn("app"))
	pod.Annotations = map[string]string{AnnotationSandboxFailures: "2"}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	expect(t, d, []step{
		{2.9, "Pending PRSC=False Init=True CR=False Ready=False app=Waiting:ContainerCreating/r0/sfalse/Rfalse"},
		{4, "Running PRSC=True Init=True CR=True Ready=True app=Running/r0/strue/Rtrue"},
	})
	f := factsAt(d.sim, sec(4))
	if len(f.Sandboxes) != 1 || f.Sandboxes[0].Attempt != 0 || !f.Sandboxes[0].Ready {
		t.Errorf("sandboxes %+v, want attempt 0 ready", f.Sandboxes)
	}
}

// New of a pod that already has a deletionTimestamp terminates it at once.
func TestNewOfADeletedPod(t *testing.T) {
	pod := mkPod("gone", ctn("app"))
	pod.DeletionTimestamp = &metav1.Time{Time: sec(0)}
	pod.DeletionGracePeriodSeconds = ptr.To[int64](30)
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	if f := factsAt(d.sim, sec(0)); !f.Terminal || !f.Done {
		t.Errorf("facts %+v, want Terminal and Done", f)
	}
}
