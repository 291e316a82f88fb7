package promobserver_test

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/promobserver"
	"github.com/podstatus/podstatus/status/statustest"
)

// A node agent registers the Observer and hands it to the Manager; serve the registry
// with promhttp.HandlerFor.
func ExampleNew() {
	obs := promobserver.New()
	reg := prometheus.NewRegistry()
	reg.MustRegister(obs)
	m := status.NewManager(statustest.NewServer(), status.Options{Observer: obs})
	_ = m
	// Output:
}
