package promobserver_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/promobserver"
)

// record sends obs the events TestObserverCountsEvents expects.
func record(obs *status.Observer) {
	ref := status.PodRef{Namespace: "ns", Name: "p", UID: "u"}
	for range 3 {
		obs.OnChange(status.ChangeEvent{Pod: ref})
	}
	obs.OnPatch(status.PatchEvent{Pod: ref, Bytes: 300, Took: 20 * time.Millisecond})
	obs.OnPatch(status.PatchEvent{Pod: ref, Bytes: 300, Took: 20 * time.Millisecond})
	obs.OnPatch(status.PatchEvent{Pod: ref, Bytes: 300, Took: time.Second, Err: errors.New("boom")})
	obs.OnSkip(status.SkipEvent{Pod: ref, Reason: status.SkipUnchanged})
	obs.OnConflict(status.ConflictEvent{Pod: ref})
	obs.OnRetry(status.RetryEvent{Pod: ref, Attempt: 1, Delay: time.Second, Err: errors.New("boom")})
	obs.OnSynced(status.SyncedEvent{Pod: ref, Latency: 70 * time.Millisecond})
	obs.OnRecovery(status.RecoveryEvent{Pods: 40, First: 300 * time.Millisecond, Last: 700 * time.Millisecond})
	obs.OnRecovery(status.RecoveryEvent{Pods: 2})
}

func TestObserverCountsEvents(t *testing.T) {
	o := promobserver.New(promobserver.Options{})
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(o); err != nil {
		t.Fatalf("register: %v", err)
	}
	record(o.Observer())

	want := `
# HELP podstatus_status_changes_total Changes of cached pod statuses made by SetPodStatus, TerminatePod, SetContainerReadiness and SetContainerStartup: each is one more status for the API server.
# TYPE podstatus_status_changes_total counter
podstatus_status_changes_total 3
# HELP podstatus_status_patches_total PATCH requests of pods/status sent by the status manager, by result (success or error).
# TYPE podstatus_status_patches_total counter
podstatus_status_patches_total{result="error"} 1
podstatus_status_patches_total{result="success"} 2
# HELP podstatus_status_skips_total Syncs that ended without a PATCH, by reason (Unchanged, NotFound, Recreated).
# TYPE podstatus_status_skips_total counter
podstatus_status_skips_total{reason="Unchanged"} 1
# HELP podstatus_status_conflicts_total 409 Conflict answers to PATCHes of pods/status (the pod is refetched and the sync retried).
# TYPE podstatus_status_conflicts_total counter
podstatus_status_conflicts_total 1
# HELP podstatus_status_retries_total Failed syncs of a pod's status that back off before the next attempt.
# TYPE podstatus_status_retries_total counter
podstatus_status_retries_total 1
# HELP podstatus_status_recoveries_total Times the API server answered again after requests got no HTTP answer (refused, reset, timed out).
# TYPE podstatus_status_recoveries_total counter
podstatus_status_recoveries_total 2
# HELP podstatus_status_recovered_pods_total Pods whose last failure got no HTTP answer, rescheduled (spread and paced) when the API server answered again.
# TYPE podstatus_status_recovered_pods_total counter
podstatus_status_recovered_pods_total 42
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"podstatus_status_changes_total", "podstatus_status_patches_total", "podstatus_status_skips_total",
		"podstatus_status_conflicts_total", "podstatus_status_retries_total",
		"podstatus_status_recoveries_total", "podstatus_status_recovered_pods_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(o, "kubelet_pod_status_sync_duration_seconds"); n != 1 {
		t.Fatalf("kubelet_pod_status_sync_duration_seconds: %d series, want 1", n)
	}
	got, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range got {
		if mf.GetName() == "kubelet_pod_status_sync_duration_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != 1 || h.GetSampleSum() != 0.07 {
				t.Fatalf("sync duration histogram: count %d sum %v, want 1 and 0.07", h.GetSampleCount(), h.GetSampleSum())
			}
			// 0.07 s falls in the kubelet's 0.1 bucket and not in 0.05.
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() == 0.05 && b.GetCumulativeCount() != 0 || b.GetUpperBound() == 0.1 && b.GetCumulativeCount() != 1 {
					t.Fatalf("bucket %v has %d samples", b.GetUpperBound(), b.GetCumulativeCount())
				}
			}
			return
		}
	}
	t.Fatal("kubelet_pod_status_sync_duration_seconds not gathered")
}

// TestTwoManagersInOneRegistry: Metrics with different const labels register side by
// side and count apart; a namespace renames the podstatus_ metrics but not the kubelet's.
func TestTwoManagersInOneRegistry(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	a := promobserver.New(promobserver.Options{ConstLabels: prometheus.Labels{"manager": "a"}})
	b := promobserver.New(promobserver.Options{ConstLabels: prometheus.Labels{"manager": "b"}})
	if err := reg.Register(a); err != nil {
		t.Fatalf("register a: %v", err)
	}
	if err := reg.Register(b); err != nil {
		t.Fatalf("register b: %v", err)
	}
	record(a.Observer())
	b.Observer().OnChange(status.ChangeEvent{})
	want := `
# HELP podstatus_status_changes_total Changes of cached pod statuses made by SetPodStatus, TerminatePod, SetContainerReadiness and SetContainerStartup: each is one more status for the API server.
# TYPE podstatus_status_changes_total counter
podstatus_status_changes_total{manager="a"} 3
podstatus_status_changes_total{manager="b"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "podstatus_status_changes_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(b, "kubelet_pod_status_sync_duration_seconds"); n != 1 {
		t.Fatalf("b: %d kubelet_pod_status_sync_duration_seconds series, want 1", n)
	}

	// The same Managers without const labels collide.
	dup := prometheus.NewRegistry()
	dup.MustRegister(promobserver.New(promobserver.Options{}))
	if err := dup.Register(promobserver.New(promobserver.Options{Namespace: "other"})); err == nil {
		t.Error("two Metrics with the kubelet's histogram and no labels registered in one registry")
	}

	ns := promobserver.New(promobserver.Options{Namespace: "agent"})
	ns.Observer().OnConflict(status.ConflictEvent{})
	if n := testutil.CollectAndCount(ns, "agent_status_conflicts_total", "kubelet_pod_status_sync_duration_seconds"); n != 2 {
		t.Fatalf("namespace agent: %d series of agent_status_conflicts_total and the kubelet histogram, want 2", n)
	}
}

// TestHelpHasNoTypo: our help text is the kubelet's without its "intevening".
func TestHelpHasNoTypo(t *testing.T) {
	ch := make(chan *prometheus.Desc, 16)
	promobserver.New(promobserver.Options{}).Describe(ch)
	close(ch)
	for d := range ch {
		if s := d.String(); strings.Contains(s, "intevening") {
			t.Errorf("typo in %s", s)
		}
	}
}
