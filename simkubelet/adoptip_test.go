package simkubelet

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func TestRestartedAgentGivesNoNewPodAnAdoptedPodsIP(t *testing.T) {
	synctest.Test(t, testRestartedAgentGivesNoNewPodAnAdoptedPodsIP)
}

// A restarted agent resumes the pods an earlier process started, with their IPs, while
// its workers start new pods at the same time: no new pod is given an IP a resumed pod
// holds. The new pods come first in the list, so that their workers allocate before the
// resumed pods' workers could reserve.
func testRestartedAgentGivesNoNewPodAnAdoptedPodsIP(t *testing.T) {
	const node, running, fresh = DefaultNodeNamePrefix + "0", 6, 6
	cs := fake.NewClientset(&v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec:       v1.NodeSpec{PodCIDR: "10.9.0.0/24", PodCIDRs: []string{"10.9.0.0/24"}},
	})
	ctx := context.Background()
	started := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	for i := range fresh + running {
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("a-new-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
				CreationTimestamp: started},
			Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "app", Image: "app"}}},
		}
		if i >= fresh {
			ip := fmt.Sprintf("10.9.0.%d", 2+i-fresh) // the addresses a new pod is given first
			p.Name = fmt.Sprintf("z-running-%d", i)
			p.Status = v1.PodStatus{
				Phase: v1.PodRunning, HostIP: "172.16.0.1", PodIP: ip, PodIPs: []v1.PodIP{{IP: ip}}, StartTime: &started,
				ContainerStatuses: []v1.ContainerStatus{{Name: "app", Image: "app", ContainerID: fmt.Sprintf("containerd://%064d", i),
					Ready: true, Started: new(true), State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: started}}}},
			}
		}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stop := startFake(t, Options{Nodes: 1, Profile: "fast", ProgressInterval: -1}, cs)
	defer stop()
	poll(t, "every pod with an IP", func() bool {
		list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, p := range list.Items {
			if p.Status.PodIP == "" {
				return false
			}
		}
		return true
	})
	list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := map[string]string{}
	for _, p := range list.Items {
		if other, ok := holder[p.Status.PodIP]; ok {
			t.Errorf("pods %s and %s share IP %s", other, p.Name, p.Status.PodIP)
		}
		holder[p.Status.PodIP] = p.Name
	}
}
