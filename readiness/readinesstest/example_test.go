package readinesstest_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/readiness/readinesstest"
)

// routable is a user's own rule, built on the engine: a load balancer sends traffic to a
// pod only when it is Ready and its sandbox is up.
func routable(r readiness.Result) bool {
	return r.Ready.Status == v1.ConditionTrue && r.PodReadyToStartContainers.Status == v1.ConditionTrue
}

// routableProperty is the property the user tests: for any input, the engine's invariants
// hold, and the rule never routes to a finished pod or to one whose "example.com/lb" gate
// is not True.
func routableProperty(t *rapid.T) {
	in := readinesstest.Input().Draw(t, "input")
	r, err := readiness.Evaluate(in)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	readinesstest.CheckInvariants(t, in, r)
	readinesstest.CheckPure(t, in)
	if !routable(r) {
		return
	}
	if in.Phase == v1.PodSucceeded || in.Phase == v1.PodFailed {
		t.Fatalf("routes to a %s pod: %s", in.Phase, readinesstest.Describe(in))
	}
	for _, g := range in.Pod.Spec.ReadinessGates {
		if g.ConditionType != "example.com/lb" {
			continue
		}
		for _, c := range in.Conditions {
			if c.Type == g.ConditionType {
				if c.Status != v1.ConditionTrue {
					t.Fatalf("routes to a pod whose load-balancer gate is %q", c.Status)
				}
				break
			}
		}
	}
}

// In a test file the property runs under rapid, which shrinks any failure to a minimal
// input:
//
//	func TestRoutable(t *testing.T) { rapid.Check(t, routableProperty) }
//
// Outside a test (as here), rapid.Check can be driven by a small rapid.TB that collects
// failures instead of failing a test.
func Example() {
	var tb collector
	rapid.Check(&tb, routableProperty)
	fmt.Println("failures:", len(tb.failures))

	// The whole-input generator also works on its own, for example to look at samples.
	in := readinesstest.ReadyInput().Example(1)
	r, _ := readiness.Evaluate(in)
	fmt.Println("a ready input is routable:", routable(r))
	// Output:
	// failures: 0
	// a ready input is routable: true
}

// collector is a minimal rapid.TB that records failures.
type collector struct{ failures []string }

func (c *collector) Helper()                         {}
func (c *collector) Name() string                    { return "Example" }
func (c *collector) Logf(format string, args ...any) {}
func (c *collector) Log(args ...any)                 {}
func (c *collector) Skipf(format string, args ...any) {
	panic("skip is not supported here")
}
func (c *collector) Skip(args ...any) { panic("skip is not supported here") }
func (c *collector) SkipNow()         { panic("skip is not supported here") }
func (c *collector) Errorf(format string, args ...any) {
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
}
func (c *collector) Error(args ...any) { c.failures = append(c.failures, fmt.Sprint(args...)) }
func (c *collector) Fatalf(format string, args ...any) {
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
}
func (c *collector) Fatal(args ...any) { c.failures = append(c.failures, fmt.Sprint(args...)) }
func (c *collector) FailNow()          { c.failures = append(c.failures, "FailNow") }
func (c *collector) Fail()             { c.failures = append(c.failures, "Fail") }
func (c *collector) Failed() bool      { return len(c.failures) > 0 }
