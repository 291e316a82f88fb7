package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
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

// The runs of several agents interleave: a, b, c, a, b, c, so that a change of the
// machine's load falls on each agent alike.
func TestScheduleInterleaves(t *testing.T) {
	got := schedule([]string{"a", "b", "c"}, 3)
	var order []string
	for _, s := range got {
		order = append(order, fmt.Sprintf("%s%d", s.agent, s.run))
	}
	want := "a1 b1 c1 a2 b2 c2 a3 b3 c3"
	if strings.Join(order, " ") != want {
		t.Errorf("schedule = %v, want %s", order, want)
	}
	if got := schedule([]string{"a"}, 0); len(got) != 0 {
		t.Errorf("zero runs scheduled %v", got)
	}
}

// Interleaved results summarise into medians per agent, in the agents' order.
func TestSummaryOfInterleavedRuns(t *testing.T) {
	rep := &Report{Pods: 100, Runs: 3}
	for i, s := range schedule([]string{AgentKubemark, AgentFleet}, 3) {
		rep.Results = append(rep.Results, RunResult{Agent: s.agent, Run: s.run, Pods: 100, Nodes: 4, ReadySeconds: float64(i)})
	}
	rep.summarize()
	if len(rep.Summaries) != 2 || rep.Summaries[0].Agent != AgentKubemark || rep.Summaries[1].Agent != AgentFleet {
		t.Fatalf("summaries %+v, want kubemark then fleet", rep.Summaries)
	}
	// kubemark ran at positions 0, 2, 4; fleet at 1, 3, 5.
	if got := rep.Summaries[0].ReadySeconds; got != 2 {
		t.Errorf("kubemark median = %v, want 2", got)
	}
	if got := rep.Summaries[1].ReadySeconds; got != 3 {
		t.Errorf("fleet median = %v, want 3", got)
	}
}

func TestDeletionFloor(t *testing.T) {
	for _, c := range []struct {
		name      string
		res       RunResult
		cores     int
		wantFloor float64
		wantShare float64 // < 0: none
	}{
		{
			// Server: 10 s over the run, 4 to Ready → 6 during deletion, ÷ 2 cores = 3 s.
			// Agent: 3 s, 1 to Ready → 2 during deletion; share 2 / (2 + 6) = 0.25.
			name:      "both known",
			res:       RunResult{DeleteSeconds: 5, APIServerCPUSeconds: 10, APIServerCPUSecondsToReady: 4, AgentProcess: &ProcStats{CPUSeconds: 3}, AgentCPUSecondsToReady: 1},
			cores:     2,
			wantFloor: 3, wantShare: 0.25,
		},
		{
			name:      "four cores, no agent process",
			res:       RunResult{DeleteSeconds: 5, APIServerCPUSeconds: 10, APIServerCPUSecondsToReady: 2},
			cores:     4,
			wantFloor: 2, wantShare: -1,
		},
		{
			name:      "no deletion",
			res:       RunResult{APIServerCPUSeconds: 10, APIServerCPUSecondsToReady: 2, AgentProcess: &ProcStats{CPUSeconds: 3}},
			cores:     2,
			wantFloor: 0, wantShare: -1,
		},
		{
			name:      "no API server pid",
			res:       RunResult{DeleteSeconds: 5, AgentProcess: &ProcStats{CPUSeconds: 3}},
			cores:     2,
			wantFloor: 0, wantShare: -1,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.res
			r.setDeletionFloor(c.cores)
			if math.Abs(r.DeleteFloorSeconds-c.wantFloor) > 1e-9 {
				t.Errorf("floor = %v, want %v", r.DeleteFloorSeconds, c.wantFloor)
			}
			switch {
			case c.wantShare < 0 && r.AgentShareOfDeletionCPU != nil:
				t.Errorf("share = %v, want none", *r.AgentShareOfDeletionCPU)
			case c.wantShare >= 0 && (r.AgentShareOfDeletionCPU == nil || math.Abs(*r.AgentShareOfDeletionCPU-c.wantShare) > 1e-9):
				t.Errorf("share = %v, want %v", r.AgentShareOfDeletionCPU, c.wantShare)
			}
		})
	}
}

// The report shows the floor beside the deletion time, the agent's share, and the
// private memory per node of an agent of several processes.
func TestReportFloorAndMemoryPerNode(t *testing.T) {
	res := RunResult{Agent: AgentKubemark, Run: 1, Pods: 1000, Nodes: 10, ReadySeconds: 5, DeleteSeconds: 8,
		APIServerCPUSeconds: 12, APIServerCPUSecondsToReady: 4,
		AgentProcess:           &ProcStats{CPUSeconds: 6, PeakRSSBytes: 800 << 20, Processes: 10},
		AgentCPUSecondsToReady: 2, AgentPrivateBytesAtReady: 250 << 20}
	res.setDeletionFloor(2)
	rep := &Report{Pods: 1000, Nodes: 10, Delete: true, Runs: 1, Cores: 2, Results: []RunResult{res}}
	rep.summarize()
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| deletion floor: API server + etcd CPU during deletion ÷ 2 cores | 4.0 s |", // (12 − 4) / 2
		"| agent's share of agent + API server CPU, deletion | 33% |",                 // 4 / (4 + 8)
		"| agent peak RSS (summed over its processes) | 800 MiB (10 processes) |",
		"| agent private memory per node at all Ready (Private_Clean+Private_Dirty ÷ nodes) | 25.0 MiB |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestKBFields(t *testing.T) {
	rollup := "Rss:                1652 kB\nPrivate_Clean:        40 kB\nPrivate_Dirty:       116 kB\n"
	got, err := kbFields(rollup, "Private_Clean", "Private_Dirty")
	if err != nil || got["Private_Clean"] != 40<<10 || got["Private_Dirty"] != 116<<10 {
		t.Fatalf("kbFields = %v, %v", got, err)
	}
	if _, err := kbFields(rollup, "VmHWM"); err == nil || !strings.Contains(err.Error(), "VmHWM") {
		t.Errorf("a missing field: err = %v, want one naming it", err)
	}
	if _, err := kbFields("VmHWM: 12 MB\n", "VmHWM"); err == nil {
		t.Error("a field not in kB was accepted")
	}
	// This process' own figures.
	st, err := readProcStatsSum([]int{os.Getpid(), os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if st.Processes != 2 || st.PrivateBytes <= 0 || st.PeakRSSBytes < st.PrivateBytes {
		t.Errorf("two reads of this process = %+v: want 2 processes, private memory > 0 and ≤ peak RSS", st)
	}
}
