package kubeclient_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/podstatus/podstatus/status/kubeclient"
)

// A node agent builds the Client from the clientset it already has (here a fake one; in a
// real agent kubernetes.NewForConfig) and hands it to status.NewManager.
func ExampleNew() {
	cs := fake.NewClientset(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"}})
	c := kubeclient.New(cs.CoreV1(), "example-agent")
	pod, err := c.PatchPodStatus(context.Background(), "default", "web",
		[]byte(`{"metadata":{"uid":"uid-1"},"status":{"phase":"Running"}}`))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(pod.Name, pod.Status.Phase)
	// Output: web Running
}
