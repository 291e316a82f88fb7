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

func TestObserverCountsEvents(t *testing.T) {
	o := promobserver.New()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(o); err != nil {
		t.Fatalf("register: %v", err)
	}
	ref := status.PodRef{Namespace: "ns", Name: "p", UID: "u"}
	for range 3 {
		o.OnChange(ref)
	}
	o.OnPatch(ref, 300, 20*time.Millisecond, nil)
	o.OnPatch(ref, 300, 20*time.Millisecond, nil)
	o.OnPatch(ref, 300, time.Second, errors.New("boom"))
	o.OnSkip(ref, status.SkipUnchanged)
	o.OnConflict(ref)
	o.OnRetry(ref, 1, time.Second, errors.New("boom"))
	o.OnSynced(ref, 70*time.Millisecond)

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
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"podstatus_status_changes_total", "podstatus_status_patches_total", "podstatus_status_skips_total",
		"podstatus_status_conflicts_total", "podstatus_status_retries_total"); err != nil {
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
