package promobserver_test

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/promobserver"
	"github.com/podstatus/podstatus/status/statustest"
)

// A node agent registers the Metrics and hands their Observer to the Manager; serve the
// registry with promhttp.HandlerFor. The const label tells this Manager's series from
// another's in the same registry.
func ExampleNew() {
	metrics := promobserver.New(promobserver.Options{ConstLabels: prometheus.Labels{"manager": "pods"}})
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)
	m := status.NewManager(statustest.NewServer(), status.Options{Observer: metrics.Observer()})
	_ = m
	// Output:
}
