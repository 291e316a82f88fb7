package podsim

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func benchPods(n int) []*v1.Pod {
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = mkPod(fmt.Sprintf("pod-%d", i), ctn("app"))
		pods[i].Spec.Containers[0].ReadinessProbe = probe(0, 10, 1, 3)
	}
	return pods
}

// BenchmarkNewFacts is a one-container pod's arrival: New, then its first facts.
func BenchmarkNewFacts(b *testing.B) {
	pods := benchPods(1000)
	cfg := benchConfig()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p, _ := newAt(pods[i%len(pods)], cfg, t0)
		_ = factsAt(p, t0)
		i++
	}
}

// BenchmarkSteadyFacts is the facts of a running, ready one-container pod.
func BenchmarkSteadyFacts(b *testing.B) {
	p, _ := newAt(benchPods(1)[0], benchConfig(), t0)
	at := t0.Add(time.Minute)
	if f := factsAt(p, at); f.Containers[0].State.Running == nil || !p.Next().IsZero() {
		b.Fatal("not steady")
	}
	b.ReportAllocs()
	for b.Loop() {
		at = at.Add(time.Second)
		_ = factsAt(p, at)
	}
}

// BenchmarkSteadyNext is the cost of asking a steady pod when it changes next.
func BenchmarkSteadyNext(b *testing.B) {
	p, _ := newAt(benchPods(1)[0], benchConfig(), t0)
	factsAt(p, t0.Add(time.Minute))
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Next()
	}
}

// BenchmarkLifecycle runs a one-container pod from arrival to Running and Ready, querying
// it at each change as an agent does.
func BenchmarkLifecycle(b *testing.B) {
	pods := benchPods(1000)
	cfg := benchConfig()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p, _ := newAt(pods[i%len(pods)], cfg, t0)
		for n := p.Next(); !n.IsZero(); n = p.Next() {
			_ = factsAt(p, n)
		}
		i++
	}
}

// BenchmarkMemoryPerPod reports the heap a running one-container pod keeps (the pod
// object itself not counted), its IPAM entry included, without and with a Cache.
func BenchmarkMemoryPerPod(b *testing.B) {
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprintf("cache=%v", cached), func(b *testing.B) {
			const n = 10000
			pods := benchPods(n)
			for b.Loop() {
				ipam, _ := NewIPAM("10.0.0.0/8")
				cfg := Config{Node: testNode(), ipam: ipam, Profile: Default(), Seed: 1}
				if cached {
					cfg.Cache = &Cache{}
				}
				sims := make([]*Pod, n)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for i := range sims {
					sims[i], _ = newAt(pods[i], cfg, t0)
					factsAt(sims[i], t0.Add(time.Minute))
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/pod")
				runtime.KeepAlive(sims)
			}
		})
	}
}

// benchConfig is the default profile on a node with a /8 pod CIDR.
func benchConfig() Config {
	ipam, err := NewIPAM("10.0.0.0/8")
	if err != nil {
		panic(err)
	}
	return Config{Node: testNode(), ipam: ipam, Profile: Default(), Seed: 1}
}
