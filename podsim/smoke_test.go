package podsim

import (
	"testing"
)

func TestSmoke(t *testing.T) {
	pod := mkPod("web", ctn("app"))
	d := start(t, pod, testConfig(t, Default()), sec(0))
	for i := 0; i < 10; i++ {
		s := d.status(sec(float64(i)))
		t.Logf("%ds next=%v %s", i, d.sim.Next().Sub(t0), summary(s))
	}
}
