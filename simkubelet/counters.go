package simkubelet

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podstatus/podstatus/status"
)

// phases are the pod phases counted, in the order progress lines print them.
var phases = []v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, v1.PodUnknown}

// counters are the agent's running totals, for progress lines and metrics. Its
// observer() counts the status Manager's writes.
type counters struct {
	byPhase            [5]atomic.Int64
	patches, patchErrs atomic.Int64
	// statusChanges counts the Manager's OnChange: statuses that changed its cache,
	// what "one request per status change" is measured against.
	statusChanges      atomic.Int64
	leaseRenewals      atomic.Int64
	nodeStatusReports  atomic.Int64
	deletes            atomic.Int64
	invalidAnnotations atomic.Int64
	// admissionRejections counts pods rejected with ReasonOutOfPods.
	admissionRejections atomic.Int64
	errors              atomic.Int64
	requests            atomic.Int64
	requestErrs         atomic.Int64

	requestsVec *prometheus.CounterVec
}

func phaseIndex(p v1.PodPhase) int {
	for i, q := range phases {
		if q == p {
			return i
		}
	}
	return -1
}

// setPhase moves one pod from phase old to phase new ("" for none).
func (c *counters) setPhase(old, new v1.PodPhase) {
	if old == new {
		return
	}
	if i := phaseIndex(old); i >= 0 {
		c.byPhase[i].Add(-1)
	}
	if i := phaseIndex(new); i >= 0 {
		c.byPhase[i].Add(1)
	}
}

// observer counts the Manager's status changes and PATCHes (promobserver exports the
// same counts as podstatus_status_changes_total and podstatus_status_patches_total; these
// feed the progress line).
func (c *counters) observer() *status.Observer {
	return &status.Observer{
		OnChange: func(status.ChangeEvent) { c.statusChanges.Add(1) },
		OnPatch: func(ev status.PatchEvent) {
			switch {
			case apierrors.IsNotFound(ev.Err):
				// The pod is gone (deleted meanwhile): neither a patch nor an error.
			case ev.Err != nil:
				c.patchErrs.Add(1)
			default:
				c.patches.Add(1)
			}
		},
	}
}

// register adds the agent's own collectors: requests by verb and code (client-go's
// rest_client_requests_total name) and pods by phase.
func (c *counters) register(reg prometheus.Registerer) error {
	c.requestsVec = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_requests_total",
		Help: "Number of HTTP requests the agent sent, partitioned by status code and method.",
	}, []string{"code", "method"})
	if err := reg.Register(c.requestsVec); err != nil {
		return err
	}
	for i, p := range phases {
		g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "podstatus_fleet_pods",
			Help:        "Pods served by the agent, by the phase of the newest status generated for them.",
			ConstLabels: prometheus.Labels{"phase": string(p)},
		}, func() float64 { return float64(c.byPhase[i].Load()) })
		if err := reg.Register(g); err != nil {
			return err
		}
	}
	// The kubelet's own name (pkg/kubelet/metrics: AdmissionRejectionsTotal); OutOfpods is
	// the one reason the agent rejects pods for.
	if err := reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name:        "kubelet_admission_rejections_total",
		Help:        "Cumulative number pod admission rejections by the Kubelet.",
		ConstLabels: prometheus.Labels{"reason": ReasonOutOfPods},
	}, func() float64 { return float64(c.admissionRejections.Load()) })); err != nil {
		return err
	}
	for _, m := range []struct {
		name, help string
		v          *atomic.Int64
	}{
		{"podstatus_fleet_lease_renewals_total", "Node Leases renewed (or created).", &c.leaseRenewals},
		{"podstatus_fleet_node_status_reports_total", "Node statuses sent.", &c.nodeStatusReports},
		{"podstatus_fleet_pod_deletions_total", "Pods deleted after their terminal status (or found gone already).", &c.deletes},
		{"podstatus_fleet_invalid_sim_annotations_total", "Invalid or unknown sim.podstatus.io/ annotations found on pods, each also a Warning Event on its pod.", &c.invalidAnnotations},
		{"podstatus_fleet_errors_total", "Failures the agent logged at error level: failed requests (each retry counted) and pods it could not simulate.", &c.errors},
		{"podstatus_fleet_request_errors_total", "Requests that failed or were answered with an error status the agent did not expect (a Lease GET answered 404 before the Lease exists, a node create answered 409 on a restart, a DELETE or status PATCH answered 404 for a pod already gone are expected).", &c.requestErrs},
	} {
		if err := reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: m.name, Help: m.help},
			func() float64 { return float64(m.v.Load()) })); err != nil {
			return err
		}
	}
	return nil
}

// wrapTransport counts every request by verb and code.
func (c *counters) wrapTransport(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		code := "<error>"
		if err == nil {
			code = strconv.Itoa(resp.StatusCode)
		}
		c.requests.Add(1)
		if err != nil || resp.StatusCode >= 400 && !expectedAnswer(req.Method, req.URL.Path, resp.StatusCode) {
			c.requestErrs.Add(1)
		}
		if c.requestsVec != nil {
			c.requestsVec.WithLabelValues(code, req.Method).Inc()
		}
		return resp, err
	})
}

// expectedAnswer reports whether an error status is one the agent's normal work brings
// and handles, and so is not a request error: a node Lease that does not exist yet (GET
// 404, then created, as pkg/kubelet/nodelease does), a node that exists already (POST 409
// on a restart, then taken over), and a pod that is gone already (its DELETE, or the
// PATCH of its status, answered 404: the pod was deleted meanwhile, as the kubelet's
// status manager also meets it).
func expectedAnswer(method, path string, code int) bool {
	switch {
	case code == http.StatusNotFound && method == http.MethodGet:
		return strings.Contains(path, "/leases/")
	case code == http.StatusConflict && method == http.MethodPost:
		return strings.HasSuffix(path, "/nodes")
	case code == http.StatusNotFound && (method == http.MethodDelete || method == http.MethodPatch):
		return strings.Contains(path, "/pods/")
	}
	return false
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (a *agent) progressLoop(ctx context.Context) {
	t := a.cfg.Clock.NewTicker(a.cfg.ProgressInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			a.logProgress()
		}
	}
}

func (a *agent) logProgress() {
	c := &a.counts
	kv := []any{"nodes", a.nodes.len()}
	for i, p := range phases {
		kv = append(kv, string(p), c.byPhase[i].Load())
	}
	kv = append(kv,
		"statusChanges", c.statusChanges.Load(), "statusPatches", c.patches.Load(), "statusPatchErrors", c.patchErrs.Load(),
		"leaseRenewals", c.leaseRenewals.Load(), "deletes", c.deletes.Load(), "invalidAnnotations", c.invalidAnnotations.Load(),
		"rejected", c.admissionRejections.Load(),
		"requests", c.requests.Load(), "requestErrors", c.requestErrs.Load(), "errors", c.errors.Load())
	a.log.Info("Progress", kv...)
}
