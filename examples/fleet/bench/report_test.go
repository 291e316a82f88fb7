package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAgentStatusChanges(t *testing.T) {
	for _, c := range []struct {
		name    string
		body    string
		want    float64
		wantErr string
	}{
		{name: "counter", body: "# TYPE podstatus_status_changes_total counter\npodstatus_status_changes_total 4.2e+04\nother_total 1\n", want: 42000},
		{name: "missing", body: "other_total 1\n", wantErr: "has no podstatus_status_changes_total"},
		{name: "not a number", body: "podstatus_status_changes_total many\n", wantErr: "podstatus_status_changes_total"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(c.body)) }))
			defer srv.Close()
			p := &agentProc{metricsURL: srv.URL + "/metrics"}
			got, ok, err := p.statusChanges(context.Background())
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !ok || got != c.want {
				t.Fatalf("got %v, %v, %v; want %v, true, nil", got, ok, err, c.want)
			}
		})
	}
	// An agent the bench did not start, or KWOK: no count, no error.
	for _, p := range []*agentProc{nil, {kind: AgentKWOK}} {
		if _, ok, err := p.statusChanges(context.Background()); ok || err != nil {
			t.Errorf("%+v: ok=%v err=%v, want false, nil", p, ok, err)
		}
	}
}

func TestReportPerPhaseCPUAndPatchesPerChange(t *testing.T) {
	run := func(agent string, i int, ready, total, changes float64) RunResult {
		r := RunResult{Agent: agent, Run: i, Pods: 1000, DeleteSeconds: 10, ReadySeconds: 5}
		r.AgentProcess = &ProcStats{CPUSeconds: total, PeakRSSBytes: 100 << 20}
		r.AgentCPUSecondsToReady = ready
		r.StatusPatchesPerPodToReady, r.StatusPatchesPerPod = 1, 2
		if changes > 0 {
			r.setStatusChanges(changes/2, changes)
		}
		return r
	}
	rep := &Report{Pods: 1000, Nodes: 1, Delete: true, Runs: 3, Results: []RunResult{
		run(AgentFleet, 1, 0.4, 1.4, 2500), run(AgentFleet, 2, 0.5, 1.1, 2000), run(AgentFleet, 3, 0.6, 1.2, 4000),
		run(AgentKWOK, 1, 1.0, 2.0, 0),
	}}
	rep.summarize()
	fleet, kwok := rep.Summaries[0], rep.Summaries[1]
	// Medians of each run's own figures, not differences of medians: deletion CPU is
	// 1.0, 0.6, 0.6 → 0.6 (median whole 1.2 − median to Ready 0.5 would say 0.7).
	if got := *fleet.AgentCPUSecondsDeletion; got < 0.59 || got > 0.61 {
		t.Errorf("fleet deletion CPU median = %v, want 0.6", got)
	}
	if got := *fleet.StatusPatchesPerChange; got != 0.8 { // 2000/2500, 2000/2000, 2000/4000 → 0.8
		t.Errorf("fleet PATCHes per change = %v, want 0.8", got)
	}
	if kwok.StatusPatchesPerChange != nil || kwok.StatusChangesPerPod != nil {
		t.Errorf("KWOK has no count of its status changes, got %v, %v", kwok.StatusPatchesPerChange, kwok.StatusChangesPerPod)
	}
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| agent CPU, to Running and Ready | 0.5 s (0.50 ms/pod) | 1.0 s (1.00 ms/pod) |",
		"| agent CPU, deletion | 0.6 s (0.60 ms/pod) | 1.0 s (1.00 ms/pod) |",
		"| status PATCHes per status change (whole run) | 0.80 | – |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
