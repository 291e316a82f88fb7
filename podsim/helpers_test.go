package podsim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/podstate"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func sec(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func testNode() Node {
	return Node{Name: "node-1", HostIPs: []string{"192.168.0.10"}}
}

func testConfig(t testing.TB, prof Profile) Config {
	t.Helper()
	ipam, err := NewIPAM("10.244.3.0/24")
	if err != nil {
		t.Fatal(err)
	}
	return Config{Node: testNode(), ipam: ipam, Profile: prof, Seed: 1}
}

// fixed is a profile with fixed, round delays: sandbox 1 s, pull 1 s, start 0, init 2 s,
// jobs 5 s, stop 1 s, probes succeed at their first run.
func fixed() Profile {
	return Profile{Name: "fixed", SandboxDelay: Fixed(time.Second), ImagePull: Fixed(time.Second),
		InitRunTime: Fixed(2 * time.Second), RunTime: Fixed(5 * time.Second), StopDelay: Fixed(time.Second)}
}

func mkPod(name string, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{NodeName: "node-1", Containers: containers},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}
}

func ctn(name string) v1.Container { return v1.Container{Name: name, Image: "nginx:1.27"} }

// driver feeds the facts through podstate.Generate as a node agent does.
type driver struct {
	t    testing.TB
	pod  *v1.Pod
	sim  *Pod
	prev *v1.PodStatus
}

func start(t testing.TB, pod *v1.Pod, cfg Config, at time.Time) *driver {
	t.Helper()
	sim, errs := newAt(pod, cfg, at)
	if len(errs) > 0 {
		t.Fatalf("New: %v", errs)
	}
	return &driver{t: t, pod: pod, sim: sim}
}

// status is the status the node reports at at.
func (d *driver) status(at time.Time) v1.PodStatus {
	d.t.Helper()
	f := factsAt(d.sim, at)
	s, err := podstate.Generate(f.Input(d.pod, d.prev))
	if err != nil {
		d.t.Fatalf("Generate at %s: %v", at.Sub(t0), err)
	}
	in := f.Input(d.pod, d.prev)
	in.Now = metav1.NewTime(at)
	if err := podstate.Stamp(&s, in); err != nil {
		d.t.Fatalf("Stamp at %s: %v", at.Sub(t0), err)
	}
	d.prev = &s
	d.pod.Status = *s.DeepCopy() // the server accepts every status
	return s
}

func cond(s v1.PodStatus, ct v1.PodConditionType) string {
	for _, c := range s.Conditions {
		if c.Type == ct {
			return string(c.Status)
		}
	}
	return "-"
}

func cstatus(s v1.PodStatus, name string) *v1.ContainerStatus {
	for _, l := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for i := range l {
			if l[i].Name == name {
				return &l[i]
			}
		}
	}
	return nil
}

// stateOf is a short form of a container's state: "Running", "Waiting:Reason",
// "Terminated:Reason:Code".
func stateOf(cs *v1.ContainerStatus) string {
	switch {
	case cs == nil:
		return "none"
	case cs.State.Running != nil:
		return "Running"
	case cs.State.Waiting != nil:
		return "Waiting:" + cs.State.Waiting.Reason
	case cs.State.Terminated != nil:
		return fmt.Sprintf("Terminated:%s:%d", cs.State.Terminated.Reason, cs.State.Terminated.ExitCode)
	}
	return "?"
}

// summary is one line for a status: phase, the conditions, each container.
func summary(s v1.PodStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s PRSC=%s Init=%s CR=%s Ready=%s", s.Phase, cond(s, v1.PodReadyToStartContainers),
		cond(s, v1.PodInitialized), cond(s, v1.ContainersReady), cond(s, v1.PodReady))
	for _, l := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for _, c := range l {
			st := c.Started != nil && *c.Started
			fmt.Fprintf(&b, " %s=%s/r%d/s%v/R%v", c.Name, stateOf(&c), c.RestartCount, st, c.Ready)
		}
	}
	return b.String()
}

// newAt is New with a fake clock at at, which the Pod keeps: factsAt and updateAt move it.
// The warnings come back as a list, nil when there are none.
func newAt(pod *v1.Pod, cfg Config, at time.Time) (*Pod, []error) {
	cfg.Clock = clocktesting.NewFakePassiveClock(at)
	p, w, err := New(pod, cfg.ipam, cfg)
	if err != nil {
		panic(err)
	}
	var errs []error
	for _, e := range w.Annotations {
		errs = append(errs, e)
	}
	for _, e := range []error{w.NoIP, w.IPNotReserved} {
		if e != nil {
			errs = append(errs, e)
		}
	}
	return p, errs
}

// factsAt sets p's clock to at and advances p.
func factsAt(p *Pod, at time.Time) Facts {
	p.clock.(*clocktesting.FakePassiveClock).SetTime(at)
	return p.Advance()
}

// updateAt sets p's clock to at and updates p with pod.
func updateAt(p *Pod, pod *v1.Pod, at time.Time) {
	p.clock.(*clocktesting.FakePassiveClock).SetTime(at)
	p.Update(pod)
}
