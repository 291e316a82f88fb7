package status

import (
	"context"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podstatus/podstatus/conditions"
)

// mgrT0 is the fake clock's start: a whole second, so truncation is visible.
var mgrT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// mgrPod is the upstream tests' getTestPod().
func mgrPod() *v1.Pod {
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{UID: "12345678", Name: "foo", Namespace: "new"},
	}
}

var mgrRandCounter int

// mgrRandomStatus is the upstream tests' getRandomPodStatus(): a status with a fresh message.
func mgrRandomStatus() v1.PodStatus {
	mgrRandCounter++
	return v1.PodStatus{Message: "msg-" + strconv.Itoa(mgrRandCounter)}
}

func mgrNewCache(t *testing.T, opts Options) (*Manager, *clocktesting.FakeClock) {
	t.Helper()
	fc := clocktesting.NewFakeClock(mgrT0)
	opts.Clock = fc
	return NewManager(nil, opts), fc
}

// version returns the cached version of uid (0 if none): the upstream tests' update count
// is the difference of two versions.
func mgrVersion(m *Manager, uid types.UID) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.pods[uid]; e != nil {
		return e.version
	}
	return 0
}

func mgrCond(t v1.PodConditionType, s v1.ConditionStatus) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: s}
}

func mgrSet(t *testing.T, m *Manager, pod *v1.Pod, s v1.PodStatus) {
	t.Helper()
	if err := m.SetPodStatus(context.Background(), pod, s); err != nil {
		t.Fatalf("SetPodStatus: %v", err)
	}
}

func mgrStatus(t *testing.T, m *Manager, uid types.UID) v1.PodStatus {
	t.Helper()
	s, ok := m.GetPodStatus(uid)
	if !ok {
		t.Fatalf("no cached status for %s", uid)
	}
	return s
}

func mgrGetCond(s v1.PodStatus, t v1.PodConditionType) *v1.PodCondition {
	return conditions.Get(s.Conditions, t)
}
