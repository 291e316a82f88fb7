package simkubelet_test

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/podstatus/podstatus/simkubelet"
)

// Run the agent in your own process: 10 nodes of its own plus every node KWOK would have
// managed, until SIGINT or SIGTERM.
func ExampleKubelet_Run() {
	rc, kerr := clientcmd.BuildConfigFromFlags("", "/path/to/kubeconfig")
	if kerr != nil {
		panic(kerr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	k, err := simkubelet.New(rc, simkubelet.Options{
		Nodes:                             10,
		ManageNodesWithAnnotationSelector: "kwok.x-k8s.io/node=fake",
		Profile:                           "fast",
		Registerer:                        prometheus.NewRegistry(), // serve it with promhttp
	})
	if err != nil {
		panic(err) // an invalid Options
	}
	if err := k.Run(ctx); err != nil {
		panic(err)
	}
}
