package podsim

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/podstate"
)

// genProbe draws a probe or none.
func genProbe(t *rapid.T, label string) *v1.Probe {
	if !rapid.Bool().Draw(t, label) {
		return nil
	}
	return probe(rapid.Int32Range(0, 20).Draw(t, label+"Delay"), rapid.Int32Range(0, 15).Draw(t, label+"Period"),
		rapid.Int32Range(0, 3).Draw(t, label+"Success"), rapid.Int32Range(0, 4).Draw(t, label+"Failure"))
}

func genContainer(t *rapid.T, name string) v1.Container {
	c := v1.Container{Name: name, Image: rapid.SampledFrom([]string{"nginx", "busybox:1.36", "registry.k8s.io/pause:3.10", "ghcr.io/a/b@sha256:abc"}).Draw(t, name+"Image")}
	c.StartupProbe = genProbe(t, name+"Startup")
	c.ReadinessProbe = genProbe(t, name+"Readiness")
	c.LivenessProbe = genProbe(t, name+"Liveness")
	return c
}

// genPod draws a pod: init containers (some sidecars), regular containers, probes, a
// restart policy, annotations and maybe an active deadline.
func genPod(t *rapid.T, name string) *v1.Pod {
	pod := mkPod(name)
	for i := range rapid.IntRange(0, 2).Draw(t, "inits") {
		c := genContainer(t, fmt.Sprintf("init%d", i))
		if rapid.Bool().Draw(t, "sidecar") {
			c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	for i := range rapid.IntRange(1, 3).Draw(t, "containers") {
		c := genContainer(t, fmt.Sprintf("c%d", i))
		if rapid.Bool().Draw(t, "containerPolicy") {
			c.RestartPolicy = ptr.To(rapid.SampledFrom([]v1.ContainerRestartPolicy{v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}).Draw(t, "cpolicy"))
			if rapid.Bool().Draw(t, "rules") {
				c.RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
					ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
			}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	pod.Spec.RestartPolicy = rapid.SampledFrom([]v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}).Draw(t, "policy")
	pod.Spec.HostNetwork = rapid.IntRange(0, 5).Draw(t, "hostNetwork") == 0
	if rapid.Bool().Draw(t, "deadline") {
		pod.Spec.ActiveDeadlineSeconds = ptr.To(rapid.Int64Range(0, 300).Draw(t, "ads"))
	}
	ann := map[string]string{}
	opt := func(key string, values ...string) {
		if rapid.Bool().Draw(t, key) {
			ann[key] = rapid.SampledFrom(values).Draw(t, key+"Value")
		}
	}
	opt(AnnotationProfile, "default", "fast")
	opt(AnnotationRunTime, "0s", "1s", "3s..20s", "2m")
	opt(AnnotationExitCode, "0", "1", "42")
	opt(AnnotationStopDelay, "0s", "1s..40s")
	opt(AnnotationStartupFailures, "0", "1..4")
	opt(AnnotationReadinessFailures, "0", "0..3")
	opt(AnnotationReadinessFlap, "5s", "1s..30s")
	opt(AnnotationLivenessFailAfter, "10s", "5s..60s")
	opt(AnnotationSandboxCrashAfter, "0s", "5s", "1s..60s")
	opt(AnnotationInitRunTime, "0s", "1s..10s")
	pod.Annotations = ann
	return pod
}

// genTimes draws increasing query times (seconds) within 15 minutes.
func genTimes(t *rapid.T) []float64 {
	n := rapid.IntRange(1, 40).Draw(t, "queries")
	out := make([]float64, n)
	at := 0.0
	for i := range out {
		at += float64(rapid.IntRange(0, 60000).Draw(t, "gapMillis")) / 1000
		out[i] = at
	}
	return out
}

// scenario is a drawn pod, its query times and maybe a deletion.
type scenario struct {
	pod      *v1.Pod
	times    []float64
	deleteAt float64 // < 0: never
	grace    int64
	cache    bool // share a Cache
}

func genScenario(t *rapid.T) scenario {
	sc := scenario{pod: genPod(t, "p"), times: genTimes(t), deleteAt: -1}
	if rapid.Bool().Draw(t, "delete") {
		sc.deleteAt = float64(rapid.IntRange(0, 600).Draw(t, "deleteAt"))
		sc.grace = rapid.Int64Range(0, 60).Draw(t, "grace")
	}
	return sc
}

// play runs sc, querying at the times keep selects (and always at the deletion and the
// last time), and returns the facts at each selected time.
func play(t *rapid.T, sc scenario, keep func(i int) bool, visit func(at float64, f Facts, pod *v1.Pod)) map[float64]Facts {
	ipam, _ := NewIPAM("10.244.3.0/24")
	cfg := Config{Node: testNode(), ipam: ipam, Profile: Default(), Seed: 7}
	if sc.cache {
		cfg.Cache = &Cache{}
		// Another pod interns first: the cache must not leak between pods.
		other := cfg
		other.ipam, _ = NewIPAM("10.244.4.0/24")
		newAt(genPodFixed(), other, sec(0))
	}
	pod := sc.pod.DeepCopy()
	sim, _ := newAt(pod, cfg, sec(0))
	out := map[float64]Facts{}
	deleted := false
	for i, at := range sc.times {
		if sc.deleteAt >= 0 && !deleted && at >= sc.deleteAt {
			deleted = true
			pod = pod.DeepCopy()
			pod.DeletionTimestamp = &metav1.Time{Time: sec(sc.deleteAt)}
			pod.DeletionGracePeriodSeconds = ptr.To(sc.grace)
			updateAt(sim, pod, sec(sc.deleteAt))
		}
		if !keep(i) && i != len(sc.times)-1 {
			continue
		}
		f := factsAt(sim, sec(at))
		out[at] = f
		if visit != nil {
			visit(at, f, pod)
		}
		if next := sim.Next(); !next.IsZero() {
			if !next.After(sec(at)) {
				t.Fatalf("at %gs: next %v is not later", at, next.Sub(t0))
			}
		}
	}
	return out
}

func TestPropDeterministicAndGranularityFree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := genScenario(t)
		all := play(t, sc, func(int) bool { return true }, nil)
		withCache := sc
		withCache.cache = true
		again := play(t, withCache, func(int) bool { return true }, nil)
		if d := cmp.Diff(all, again); d != "" {
			t.Fatalf("same seed, different facts (the second run with a Cache):\n%s", d)
		}
		stride := rapid.IntRange(2, 7).Draw(t, "stride")
		some := play(t, sc, func(i int) bool { return i%stride == 0 }, nil)
		for at, f := range some {
			if d := cmp.Diff(all[at], f); d != "" {
				t.Fatalf("at %gs the facts depend on the earlier queries:\n%s", at, d)
			}
		}
	})
}

func TestPropInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := genScenario(t)
		restarts := map[string]int32{}
		terminal := false
		var prev *v1.PodStatus
		var terminalPhase v1.PodPhase
		play(t, sc, func(int) bool { return true }, func(at float64, f Facts, pod *v1.Pod) {
			if f.Done && pod.DeletionTimestamp == nil {
				t.Fatalf("at %gs: Done without deletion", at)
			}
			if (f.Done && !f.Stopped) || (f.Stopped && !f.Terminal) {
				t.Fatalf("at %gs: Done %v Stopped %v Terminal %v", at, f.Done, f.Stopped, f.Terminal)
			}
			if terminal && !f.Terminal {
				t.Fatalf("at %gs: Terminal went back to false", at)
			}
			terminal = f.Terminal
			for _, c := range f.Containers {
				if c.RestartCount < restarts[c.Name] {
					t.Fatalf("at %gs: %s restart count %d < %d", at, c.Name, c.RestartCount, restarts[c.Name])
				}
				restarts[c.Name] = c.RestartCount
			}
			for _, ip := range f.PodIPs {
				if !pod.Spec.HostNetwork && !netip.MustParsePrefix("10.244.3.0/24").Contains(netip.MustParseAddr(ip)) {
					t.Fatalf("pod IP %s outside the CIDR", ip)
				}
			}
			pod = pod.DeepCopy()
			if prev != nil {
				pod.Status = *prev
			}
			s, err := podstate.Generate(f.Input(pod, prev))
			if err != nil {
				t.Fatalf("at %gs: %v", at, err)
			}
			in := f.Input(pod, prev)
			in.Now = metav1.NewTime(sec(at))
			if err := podstate.Stamp(&s, in); err != nil {
				t.Fatalf("at %gs: %v", at, err)
			}
			if terminalPhase != "" && s.Phase != terminalPhase {
				t.Fatalf("at %gs: phase %s after %s", at, s.Phase, terminalPhase)
			}
			if s.Phase == v1.PodSucceeded || s.Phase == v1.PodFailed {
				terminalPhase = s.Phase
			}
			prev = &s
		})
	})
}

func TestPropNextIsTheNextChange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := genScenario(t)
		sc.deleteAt = -1
		ipam, _ := NewIPAM("10.244.3.0/24")
		sim, _ := newAt(sc.pod, Config{Node: testNode(), ipam: ipam, Profile: Default(), Seed: 3}, sec(0))
		for _, at := range sc.times {
			f := factsAt(sim, sec(at))
			next := sim.Next()
			if next.IsZero() {
				if later := factsAt(sim, sec(at+3600)); cmp.Diff(f, later) != "" {
					t.Fatalf("at %gs: no next change, but the facts change later:\n%s", at, cmp.Diff(f, later))
				}
				return
			}
			mid := sec(at).Add(next.Sub(sec(at)) / 2)
			if g := factsAt(sim, mid); cmp.Diff(f, g) != "" {
				t.Fatalf("at %gs: facts changed before next %v:\n%s", at, next.Sub(t0), cmp.Diff(f, g))
			}
		}
	})
}

func TestPropIPsUniquePerNode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ipam, _ := NewIPAM("10.244.3.0/28") // 13 pod addresses
		cfg := Config{Node: testNode(), ipam: ipam, Profile: Fast(), Seed: 1}
		held := map[string]*Pod{}
		ips := map[string]string{}
		for i := range rapid.IntRange(1, 40).Draw(t, "ops") {
			name := fmt.Sprintf("p%d", rapid.IntRange(0, 20).Draw(t, "pod"))
			if p, ok := held[name]; ok && rapid.Bool().Draw(t, "release") {
				p.Release()
				delete(held, name)
				delete(ips, name)
				continue
			} else if ok {
				continue
			}
			p, errs := newAt(mkPod(name, ctn("app")), cfg, sec(float64(i)))
			f := factsAt(p, sec(float64(i)))
			if len(held) >= 13 {
				if len(errs) == 0 || len(f.PodIPs) != 0 {
					t.Fatalf("pod %d on a full node got IP %v", len(held)+1, f.PodIPs)
				}
				continue
			}
			if len(errs) > 0 || len(f.PodIPs) != 1 {
				t.Fatalf("%s: errs %v ips %v", name, errs, f.PodIPs)
			}
			for other, ip := range ips {
				if ip == f.PodIPs[0] {
					t.Fatalf("%s and %s share %s", name, other, ip)
				}
			}
			if !ipam.Contains(f.PodIPs[0]) {
				t.Fatalf("%s outside", f.PodIPs[0])
			}
			held[name], ips[name] = p, f.PodIPs[0]
		}
	})
}

func TestIPAM(t *testing.T) {
	a, err := NewIPAM("10.0.0.0/30")
	if err != nil {
		t.Fatal(err)
	}
	ip, err := a.Allocate("a")
	if err != nil || ip != "10.0.0.2" {
		t.Fatalf("%s %v", ip, err)
	}
	if again, _ := a.Allocate("a"); again != ip {
		t.Errorf("same key, new IP %s", again)
	}
	if _, err := a.Allocate("b"); err == nil {
		t.Errorf("a /30 has one pod address; the second allocation succeeded")
	}
	a.Release("a")
	if err := a.Reserve("b", "10.0.0.2"); err != nil {
		t.Error(err)
	}
	if err := a.Reserve("c", "10.0.0.2"); err == nil {
		t.Error("reserved a held IP")
	}
	if err := a.Reserve("c", "10.0.1.2"); err == nil {
		t.Error("reserved an IP outside the CIDR")
	}
	for _, bad := range []string{"10.0.0.0/31", "nonsense", "fd00::/127"} {
		if _, err := NewIPAM(bad); err == nil {
			t.Errorf("NewIPAM(%q) succeeded", bad)
		}
	}
	v6, err := NewIPAM("fd00:10:244:3::/64")
	if err != nil {
		t.Fatal(err)
	}
	if ip, _ := v6.Allocate("x"); ip != "fd00:10:244:3::2" {
		t.Errorf("v6 %s", ip)
	}
	_ = time.Second
}

// Config.IPAM is required but for a pod on the host's network: there is no other source of
// pod IPs.
func TestNewRequiresIPAM(t *testing.T) {
	pod := mkPod("web", ctn("app"))
	if p, _, err := New(pod, nil, Config{Node: testNode()}); !errors.Is(err, podstatus.ErrInvalidInput) || p != nil {
		t.Fatalf("New without IPAM: %v, %v; want an input error", p, err)
	}
	if _, _, err := New(nil, testConfig(t, Fast()).ipam, testConfig(t, Fast())); !errors.Is(err, podstatus.ErrInvalidInput) {
		t.Fatalf("New(nil): %v; want an input error", err)
	}
	pod.Spec.HostNetwork = true
	p, w, err := New(pod, nil, Config{Node: testNode(), Profile: Fast()})
	if err != nil || w.Err() != nil {
		t.Fatalf("New of a host-network pod without IPAM: %v, %v", err, w.Err())
	}
	if ips := p.Advance().PodIPs; len(ips) != 1 || ips[0] != testNode().HostIPs[0] {
		t.Errorf("host-network pod IPs %v, want the node's", ips)
	}
}

func TestImageRef(t *testing.T) {
	for _, tc := range []struct{ in, image, idPrefix string }{
		{"nginx", "docker.io/library/nginx:latest", "docker.io/library/nginx@sha256:"},
		{"nginx:1.27", "docker.io/library/nginx:1.27", "docker.io/library/nginx@sha256:"},
		{"bitnami/redis:7", "docker.io/bitnami/redis:7", "docker.io/bitnami/redis@sha256:"},
		{"registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10", "registry.k8s.io/pause@sha256:"},
		{"localhost:5000/app", "localhost:5000/app:latest", "localhost:5000/app@sha256:"},
		{"ghcr.io/a/b@sha256:abc", "ghcr.io/a/b@sha256:abc", "ghcr.io/a/b@sha256:abc"},
	} {
		image, id := imageRef(tc.in)
		if image != tc.image || len(id) < len(tc.idPrefix) || id[:len(tc.idPrefix)] != tc.idPrefix {
			t.Errorf("imageRef(%q) = %q, %q", tc.in, image, id)
		}
		if again, id2 := imageRef(tc.in); again != image || id2 != id {
			t.Errorf("imageRef(%q) is not deterministic", tc.in)
		}
	}
}

// genPodFixed is a pod with annotations, for the Cache to hold before the pod under test.
func genPodFixed() *v1.Pod {
	p := mkPod("other", ctn("app"))
	p.Annotations = map[string]string{AnnotationRunTime: "1s", AnnotationExitCode: "3"}
	return p
}
