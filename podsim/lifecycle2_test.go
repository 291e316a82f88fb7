package podsim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestCrashLoopBackOff(t *testing.T) {
	pod := mkPod("crash", ctn("app"))
	pod.Annotations = map[string]string{AnnotationRunTime: "1s", AnnotationExitCode: "1"}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	// Running at 2, exits at 3 and is restarted at once (the first restart has no
	// back-off); then each instance runs 1 s and waits 10, 20, 40 ... 300 s.
	runs := []float64{2, 3}
	for _, wait := range []float64{10, 20, 40, 80, 160, 300, 300, 300} {
		last := runs[len(runs)-1]
		runs = append(runs, last+1+wait)
	}
	for i, at := range runs {
		s := d.status(sec(at))
		cs := cstatus(s, "app")
		if stateOf(cs) != "Running" || cs.RestartCount != int32(i) {
			t.Fatalf("at %gs: %s, want run %d", at, summary(s), i)
		}
		if i >= 1 {
			if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 1 || lt.Reason != "Error" {
				t.Fatalf("at %gs: last termination %+v", at, lt)
			}
		}
		if i+1 < len(runs) && runs[i+1]-at > 1 {
			// In back-off between the exit and the next run.
			s := d.status(sec(at + 1.5))
			cs := cstatus(s, "app")
			wait := time.Duration(runs[i+1]-at-1) * time.Second
			want := fmt.Sprintf("back-off %s restarting failed container=app pod=crash_default(uid-crash)", wait)
			if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" || cs.State.Waiting.Message != want || cs.RestartCount != int32(i) {
				t.Fatalf("at %gs: %s %+v, want CrashLoopBackOff %q", at+1.5, summary(s), cs.State, want)
			}
			if s.Phase != v1.PodRunning {
				t.Fatalf("at %gs: phase %s", at+1.5, s.Phase)
			}
			if next := d.sim.Next(); !next.Equal(sec(runs[i+1])) {
				t.Fatalf("at %gs: next %v, want %v", at+1.5, next.Sub(t0), runs[i+1])
			}
		}
	}
}

func TestCrashLoopBackOffResetsAfterTenMinutes(t *testing.T) {
	pod := mkPod("crash", ctn("app"))
	pod.Annotations = map[string]string{AnnotationRunTime: "11m", AnnotationExitCode: "1"}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	// Each instance runs 11 minutes, longer than twice the maximum back-off: every
	// restart is immediate.
	for i := 0; i < 4; i++ {
		at := 2 + float64(i)*660
		s := d.status(sec(at))
		if cs := cstatus(s, "app"); stateOf(cs) != "Running" || cs.RestartCount != int32(i) {
			t.Fatalf("at %gs: %s", at, summary(s))
		}
	}
}

func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		policy v1.RestartPolicy
		exit   string
		want   string // summary at 8 s
	}{
		{v1.RestartPolicyNever, "0", "Succeeded PRSC=False Init=True CR=False Ready=False app=Terminated:Completed:0/r0/sfalse/Rfalse"},
		{v1.RestartPolicyNever, "3", "Failed PRSC=False Init=True CR=False Ready=False app=Terminated:Error:3/r0/sfalse/Rfalse"},
		{v1.RestartPolicyOnFailure, "0", "Succeeded PRSC=False Init=True CR=False Ready=False app=Terminated:Completed:0/r0/sfalse/Rfalse"},
		// OnFailure restarts a failed container: at once the first time.
		{v1.RestartPolicyOnFailure, "3", "Running PRSC=True Init=True CR=True Ready=True app=Running/r1/strue/Rtrue"},
	} {
		t.Run(string(tc.policy)+"-"+tc.exit, func(t *testing.T) {
			pod := mkPod("job", ctn("app"))
			pod.Spec.RestartPolicy = tc.policy
			pod.Annotations = map[string]string{AnnotationExitCode: tc.exit}
			d := start(t, pod, testConfig(t, fixed()), sec(0))
			// Running at 2, the job runs 5 s.
			expect(t, d, []step{{6.9, "Running PRSC=True Init=True CR=True Ready=True app=Running/r0/strue/Rtrue"}, {7, tc.want}})
			f := factsAt(d.sim, sec(7))
			if terminal := tc.want[:7] != "Running"; f.Terminal != terminal || f.Done {
				t.Errorf("Terminal %v Done %v, want Terminal %v and not Done", f.Terminal, f.Done, terminal)
			}
		})
	}
}

func TestSidecarStoppedWhenJobCompletes(t *testing.T) {
	pod := mkPod("job", ctn("app"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	proxy := ctn("proxy")
	proxy.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
	pod.Spec.InitContainers = []v1.Container{proxy}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	// proxy runs from 2, app from 3 to 8; then proxy is stopped: exits 0 after 1 s.
	expect(t, d, []step{
		{8, "Running PRSC=True Init=True CR=False Ready=False proxy=Running/r0/strue/Rtrue app=Terminated:Completed:0/r0/sfalse/Rfalse"},
		{9, "Succeeded PRSC=False Init=True CR=False Ready=False proxy=Terminated:Completed:0/r0/sfalse/Rfalse app=Terminated:Completed:0/r0/sfalse/Rfalse"},
	})
}

func TestInitFailureNeverFailsPod(t *testing.T) {
	// An init container whose only startup probe fails is killed (exit 137); under
	// restartPolicy Never it is not restarted and the pod fails.
	pod2 := mkPod("job2", ctn("app"))
	pod2.Spec.RestartPolicy = v1.RestartPolicyNever
	setup := ctn("setup")
	pod2.Spec.InitContainers = []v1.Container{setup}
	pod2.Spec.InitContainers[0].StartupProbe = probe(0, 1, 1, 1)
	pod2.Annotations = map[string]string{AnnotationStartupFailures: "1", AnnotationInitRunTime: "10s"}
	d2 := start(t, pod2, testConfig(t, fixed()), sec(0))
	// setup runs from 2; its one startup probe at 2 fails: killed (137) and not restarted.
	expect(t, d2, []step{{2, "Failed PRSC=False Init=False CR=False Ready=False setup=Terminated:Error:137/r0/sfalse/Rfalse app=Waiting:PodInitializing/r0/sfalse/Rfalse"}})
	if f := factsAt(d2.sim, sec(3)); !f.Terminal {
		t.Errorf("not terminal")
	}
}

func TestRestartPolicyRules(t *testing.T) {
	pod := mkPod("rules", ctn("app"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.Containers[0].RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
	pod.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{
		Action:    v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
	}}
	pod.Annotations = map[string]string{AnnotationRunTime: "1s", AnnotationExitCode: "42"}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	expect(t, d, []step{
		{3, "Running PRSC=True Init=True CR=True Ready=True app=Running/r1/strue/Rtrue"},
		{5, "Running PRSC=True Init=True CR=False Ready=False app=Waiting:CrashLoopBackOff/r1/sfalse/Rfalse"},
		{14, "Running PRSC=True Init=True CR=True Ready=True app=Running/r2/strue/Rtrue"},
	})
	// Exit code 1 is not covered by a rule: the container's restartPolicy Never holds.
	pod2 := mkPod("rules2", ctn("app"))
	pod2.Spec = *pod.Spec.DeepCopy()
	pod2.Annotations = map[string]string{AnnotationRunTime: "1s", AnnotationExitCode: "1"}
	d2 := start(t, pod2, testConfig(t, fixed()), sec(0))
	expect(t, d2, []step{{3, "Failed PRSC=False Init=True CR=False Ready=False app=Terminated:Error:1/r0/sfalse/Rfalse"}})
}

func TestSandboxCrash(t *testing.T) {
	pod := mkPod("sb", ctn("app"))
	pod.Spec.InitContainers = []v1.Container{ctn("setup")}
	pod.Annotations = map[string]string{AnnotationSandboxCrashAfter: "10s"}
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	// Sandbox at 1; setup 2–4; app from 5. The sandbox dies at 11; a new one is ready at
	// 12; setup runs again 12–14 (no pull); app runs again from 14. (While setup runs
	// again the kubelet reports the pod Pending but keeps Initialized True.)
	expect(t, d, []step{
		{10, "Running PRSC=True Init=True CR=True Ready=True setup=Terminated:Completed:0/r0/sfalse/Rtrue app=Running/r0/strue/Rtrue"},
		{11, "Running PRSC=False Init=True CR=False Ready=False setup=Terminated:Completed:0/r0/sfalse/Rtrue app=Terminated:Error:137/r0/sfalse/Rfalse"},
		{12, "Pending PRSC=True Init=True CR=False Ready=False setup=Running/r1/strue/Rfalse app=Terminated:Error:137/r0/sfalse/Rfalse"},
		{14, "Running PRSC=True Init=True CR=True Ready=True setup=Terminated:Completed:0/r1/sfalse/Rtrue app=Running/r1/strue/Rtrue"},
	})
	f := factsAt(d.sim, sec(15))
	if len(f.Sandboxes) != 2 || f.Sandboxes[0].Attempt != 1 || !f.Sandboxes[0].Ready || f.Sandboxes[1].Ready || f.Sandboxes[0].ID == f.Sandboxes[1].ID {
		t.Errorf("sandboxes %+v", f.Sandboxes)
	}
	for _, c := range f.Containers {
		if c.SandboxID != f.Sandboxes[0].ID {
			t.Errorf("container %s in sandbox %s, want the new one", c.Name, c.SandboxID)
		}
	}
}

func TestActiveDeadline(t *testing.T) {
	pod := mkPod("dl", ctn("app"))
	pod.Spec.ActiveDeadlineSeconds = ptr.To(int64(10))
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	expect(t, d, []step{
		{9.9, "Running PRSC=True Init=True CR=True Ready=True app=Running/r0/strue/Rtrue"},
		{11, "Failed PRSC=False Init=True CR=False Ready=False app=Terminated:Completed:0/r0/sfalse/Rfalse"},
	})
	if d.prev.Reason != "DeadlineExceeded" || d.prev.Message != MessageDeadlineExceeded {
		t.Errorf("reason %q message %q", d.prev.Reason, d.prev.Message)
	}
	if f := factsAt(d.sim, sec(12)); !f.Terminal || f.Eviction == nil || f.Done {
		t.Errorf("facts %+v", f)
	}
}

func TestGracefulDeletion(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stop      string
		grace     int64
		doneAt    float64
		wantState string
	}{
		{"exits in time", "3s", 30, 13, "Terminated:Completed:0"},
		{"killed at grace period", "60s", 5, 15, "Terminated:Error:137"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := mkPod("del", ctn("app"))
			pod.Annotations = map[string]string{AnnotationStopDelay: tc.stop}
			d := start(t, pod, testConfig(t, fixed()), sec(0))
			d.status(sec(5))
			del := pod.DeepCopy()
			del.DeletionTimestamp = &metav1.Time{Time: sec(10)}
			del.DeletionGracePeriodSeconds = ptr.To(tc.grace)
			d.pod = del
			updateAt(d.sim, del, sec(10))
			if f := factsAt(d.sim, sec(10)); !f.Terminal || f.Done {
				t.Fatalf("at 10s: Terminal %v Done %v", f.Terminal, f.Done)
			}
			if f := factsAt(d.sim, sec(tc.doneAt-0.1)); f.Done {
				t.Fatalf("done before %gs", tc.doneAt)
			}
			if next := d.sim.Next(); !next.Equal(sec(tc.doneAt)) {
				t.Errorf("next %v, want %gs", next.Sub(t0), tc.doneAt)
			}
			f := factsAt(d.sim, sec(tc.doneAt))
			s := d.status(sec(tc.doneAt))
			if !f.Done || stateOf(cstatus(s, "app")) != tc.wantState {
				t.Errorf("at %gs: Done %v, %s", tc.doneAt, f.Done, summary(s))
			}
			if s.Phase != v1.PodSucceeded && s.Phase != v1.PodFailed {
				t.Errorf("phase %s, want terminal", s.Phase)
			}
		})
	}
}

func TestHostNetwork(t *testing.T) {
	pod := mkPod("hn", ctn("app"))
	pod.Spec.HostNetwork = true
	cfg := testConfig(t, fixed())
	d := start(t, pod, cfg, sec(0))
	s := d.status(sec(3))
	if s.PodIP != "192.168.0.10" || cond(s, v1.PodReady) != "True" {
		t.Errorf("%s podIP %q", summary(s), s.PodIP)
	}
	if cfg.ipam.InUse() != 0 {
		t.Errorf("a host-network pod took a pod IP")
	}
}

func TestFastProfileReadyInFirstWrite(t *testing.T) {
	pod := mkPod("fast", ctn("app"))
	pod.Spec.Containers[0].ReadinessProbe = probe(30, 10, 3, 3)
	pod.Spec.Containers[0].StartupProbe = probe(30, 10, 1, 3)
	proxy := ctn("proxy")
	proxy.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
	proxy.StartupProbe = probe(5, 5, 1, 3)
	pod.Spec.InitContainers = []v1.Container{ctn("setup"), proxy}
	d := start(t, pod, testConfig(t, Fast()), sec(0))
	expect(t, d, []step{{0, "Running PRSC=True Init=True CR=True Ready=True setup=Terminated:Completed:0/r0/sfalse/Rtrue proxy=Running/r0/strue/Rtrue app=Running/r0/strue/Rtrue"}})
	if n := d.sim.Next(); !n.IsZero() {
		t.Errorf("next %v", n)
	}
	// The annotation selects it per pod, too.
	pod2 := mkPod("fast2", ctn("app"))
	pod2.Annotations = map[string]string{AnnotationProfile: "fast"}
	d2 := start(t, pod2, testConfig(t, Default()), sec(0))
	expect(t, d2, []step{{0, "Running PRSC=True Init=True CR=True Ready=True app=Running/r0/strue/Rtrue"}})
}

func TestAdoptRunningPod(t *testing.T) {
	pod := mkPod("web", ctn("app"), ctn("crash"))
	pod.Spec.Containers[0].ReadinessProbe = probe(0, 5, 1, 3)
	pod.Annotations = map[string]string{AnnotationReadinessFlap: "7s"}
	proxy := ctn("proxy")
	proxy.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
	pod.Spec.InitContainers = []v1.Container{ctn("setup"), proxy}
	cfg := testConfig(t, Default())
	d := start(t, pod, cfg, sec(0))
	var before v1.PodStatus
	for at := 0.0; at <= 30; at++ {
		before = d.status(sec(at))
	}
	if before.Phase != v1.PodRunning {
		t.Fatalf("not running: %s", summary(before))
	}
	// A new agent process: a new IPAM, the same seed, the server's copy of the pod.
	d.sim.Release()
	cfg2 := testConfig(t, Default())
	server := d.pod.DeepCopy()
	adopted, errs := newAt(server, cfg2, sec(31))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	d2 := &driver{t: t, pod: server, sim: adopted}
	after := d2.status(sec(31))
	if after.Phase != before.Phase || after.PodIP != before.PodIP || cond(after, v1.PodReady) != cond(before, v1.PodReady) {
		t.Errorf("before %s %s\nafter  %s %s", summary(before), before.PodIP, summary(after), after.PodIP)
	}
	for _, l := range [][]v1.ContainerStatus{before.InitContainerStatuses, before.ContainerStatuses} {
		for _, b := range l {
			a := cstatus(after, b.Name)
			if a.ContainerID != b.ContainerID || a.RestartCount != b.RestartCount || a.Ready != b.Ready || stateOf(a) != stateOf(&b) {
				t.Errorf("%s: before %s %s r%d ready %v, after %s %s r%d ready %v", b.Name,
					stateOf(&b), b.ContainerID, b.RestartCount, b.Ready, stateOf(a), a.ContainerID, a.RestartCount, a.Ready)
			}
		}
	}
	if !cfg2.ipam.Contains(after.PodIP) || cfg2.ipam.InUse() != 1 {
		t.Errorf("IP %s not reserved", after.PodIP)
	}
	// A second pod on the new IPAM does not get the adopted pod's IP.
	other, _ := newAt(mkPod("other", ctn("app")), cfg2, sec(31))
	if ip := factsAt(other, sec(40)).PodIPs; len(ip) == 0 || ip[0] == after.PodIP {
		t.Errorf("other pod IP %v", ip)
	}
}

func TestAdoptTerminalPod(t *testing.T) {
	pod := mkPod("job", ctn("app"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	d := start(t, pod, testConfig(t, fixed()), sec(0))
	before := d.status(sec(20))
	if before.Phase != v1.PodSucceeded {
		t.Fatalf("%s", summary(before))
	}
	adopted, _ := newAt(d.pod.DeepCopy(), testConfig(t, fixed()), sec(30))
	d2 := &driver{t: t, pod: d.pod, sim: adopted}
	after := d2.status(sec(30))
	if after.Phase != v1.PodSucceeded || !factsAt(adopted, sec(30)).Terminal || !adopted.Next().IsZero() {
		t.Errorf("after adoption: %s", summary(after))
	}
	if a, b := cstatus(after, "app"), cstatus(before, "app"); a.ContainerID != b.ContainerID || !strings.HasPrefix(stateOf(a), "Terminated") {
		t.Errorf("app before %+v after %+v", b, a)
	}
}

// A finished pod's sandbox is gone, so adopting it must not take its old IP back: another
// pod may hold it by now.
func TestAdoptTerminalPodReservesNoIP(t *testing.T) {
	pod := mkPod("job", ctn("app"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	cfg := testConfig(t, fixed())
	d := start(t, pod, cfg, sec(0))
	ip := d.status(sec(3)).PodIP
	if s := d.status(sec(20)); s.Phase != v1.PodSucceeded || ip == "" {
		t.Fatalf("ip %q, %s", ip, summary(s))
	}
	// The server's copy still names the IP the pod had while it ran.
	d.pod.Status.PodIP, d.pod.Status.PodIPs = ip, []v1.PodIP{{IP: ip}}
	cfg2 := testConfig(t, fixed()) // a restarted agent: a fresh IPAM
	if err := cfg2.ipam.Reserve("default/other", ip); err != nil {
		t.Fatalf("reserving %s for another pod: %v", ip, err)
	}
	if _, errs := newAt(d.pod.DeepCopy(), cfg2, sec(30)); len(errs) != 0 {
		t.Errorf("adopting the finished pod: %v", errs)
	}
	if got := cfg2.ipam.InUse(); got != 1 {
		t.Errorf("IPs in use after adopting a finished pod: %d, want 1 (the other pod's)", got)
	}
}
