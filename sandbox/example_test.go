package sandbox_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/podstatus/podstatus/sandbox"
)

func ExampleNeedsNew() {
	pod := &v1.Pod{}
	// The runtime lists the newest sandbox first: it crashed, the previous one is gone.
	d := sandbox.NeedsNew(pod, []sandbox.Status{
		{ID: "sb-2", Attempt: 2, Ready: false, IP: "10.1.0.7"},
		{ID: "sb-1", Attempt: 1, Ready: false},
	})
	fmt.Printf("create=%v attempt=%d replaces=%s: %s\n", d.Create, d.Attempt, d.SandboxID, d.Message)

	d = sandbox.NeedsNew(pod, []sandbox.Status{{ID: "sb-3", Attempt: 3, Ready: true, IP: "10.1.0.8"}})
	fmt.Printf("create=%v attempt=%d current=%s\n", d.Create, d.Attempt, d.SandboxID)
	// Output:
	// create=true attempt=3 replaces=sb-2: pod sandbox is not ready
	// create=false attempt=3 current=sb-3
}
