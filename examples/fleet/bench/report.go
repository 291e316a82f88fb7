package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// RunResult is what one run of one agent measured.
type RunResult struct {
	// Agent is AgentFleet, AgentKWOK, AgentKubemark or AgentNone; Run counts from 1.
	Agent string `json:"agent"`
	Run   int    `json:"run"`
	Pods  int    `json:"pods"`
	Nodes int    `json:"nodes"`

	// CreateSeconds: first create → last create answered.
	CreateSeconds float64 `json:"createSeconds"`
	// ReadySeconds: first create → every pod seen Running and Ready by the bench's watch.
	ReadySeconds       float64 `json:"readySeconds"`
	ReadyPodsPerSecond float64 `json:"readyPodsPerSecond"`
	// DeleteSeconds: first graceful DELETE → every pod object gone (0 without Delete).
	DeleteSeconds        float64 `json:"deleteSeconds,omitempty"`
	DeletedPodsPerSecond float64 `json:"deletedPodsPerSecond,omitempty"`

	// AgentRequests are the API server's apiserver_request_total increments over the
	// run minus the bench's own requests (counted as it sent them): the agent's requests,
	// plus the API server's own background requests (a few per second).
	// AgentRequestsToReady is the part up to all pods Running and Ready, the rest is
	// AgentRequestsToGone (deletion).
	AgentRequests        []RequestRow `json:"agentRequests"`
	AgentRequestsToReady []RequestRow `json:"agentRequestsToReady"`
	AgentRequestsToGone  []RequestRow `json:"agentRequestsToGone,omitempty"`
	// BenchRequests are the bench's own requests over the run.
	BenchRequests []RequestRow `json:"benchRequests"`

	// StatusPatchesPerPod, PodGETsPerPod, PodDeletesPerPod and PodRequestsPerPod are
	// the agent's PATCHes of pods/status, GETs of a pod, DELETEs of a pod and requests
	// on pods (any verb, any subresource) over the whole run, divided by Pods;
	// StatusPatchesPerPodToReady counts only up to all pods Running and Ready, and
	// StatusPatchesPerPodToGone only during deletion.
	StatusPatchesPerPodToReady float64 `json:"statusPatchesPerPodToReady"`
	StatusPatchesPerPodToGone  float64 `json:"statusPatchesPerPodToGone"`
	StatusPatchesPerPod        float64 `json:"statusPatchesPerPod"`
	PodGETsPerPod              float64 `json:"podGETsPerPod"`
	PodDeletesPerPod           float64 `json:"podDeletesPerPod"`
	PodRequestsPerPod          float64 `json:"podRequestsPerPod"`
	// StatusChanges is the fleet agent's own count of statuses that changed its status
	// manager's cache over the run (StatusChangesToReady: up to all pods Running and
	// Ready), and StatusPatchesPerChange the status PATCHes the API server counted
	// divided by it: at most 1 when every change costs at most one request. Zero for
	// agents that do not count.
	StatusChanges                 float64 `json:"statusChanges,omitempty"`
	StatusChangesToReady          float64 `json:"statusChangesToReady,omitempty"`
	StatusPatchesPerChange        float64 `json:"statusPatchesPerChange,omitempty"`
	StatusPatchesPerChangeToReady float64 `json:"statusPatchesPerChangeToReady,omitempty"`
	// AgentErrors counts the agent's requests answered with a code ≥ 400 (404s of
	// DELETEs included), and Agent404s those answered 404.
	AgentErrors float64 `json:"agentErrors"`
	Agent404s   float64 `json:"agent404s"`

	// AgentProcess is the agent process' CPU time over the run, its peak RSS and its
	// private memory at the end, when it runs on this machine and the bench knows its
	// pid; for an agent of several processes (kubemark), the sums over them.
	AgentProcess *ProcStats `json:"agentProcess,omitempty"`
	// AgentPrivateBytesAtReady is the agent's private memory (summed over its processes)
	// when all pods were Running and Ready.
	AgentPrivateBytesAtReady int64 `json:"agentPrivateBytesAtReady,omitempty"`
	// AgentCPUSecondsToReady is the part of AgentProcess.CPUSeconds up to all pods
	// Running and Ready (the rest is deletion).
	AgentCPUSecondsToReady float64 `json:"agentCPUSecondsToReady,omitempty"`
	// APIServerCPUSeconds is the API server's CPU time over the run, with APIServerPID;
	// APIServerCPUSecondsToReady is its part up to all pods Running and Ready.
	APIServerCPUSeconds        float64 `json:"apiServerCPUSeconds,omitempty"`
	APIServerCPUSecondsToReady float64 `json:"apiServerCPUSecondsToReady,omitempty"`
	// BenchCPUSeconds is the bench's own CPU time over the run (its creating, deleting
	// and watching clients), which shares the machine with the agent and the API server.
	BenchCPUSeconds float64 `json:"benchCPUSeconds,omitempty"`

	// DeleteFloorSeconds is the API server's CPU time during deletion divided by the
	// machine's cores (Config.Cores): no deletion of these pods by any agent can take
	// less wall time on this machine, given the server's work for the writes it asked
	// for. Zero without Delete or APIServerPID.
	DeleteFloorSeconds float64 `json:"deleteFloorSeconds,omitempty"`
	// AgentShareOfDeletionCPU is the agent's CPU time during deletion divided by the
	// agent's and the API server's together; nil when either is unknown.
	AgentShareOfDeletionCPU *float64 `json:"agentShareOfDeletionCPU,omitempty"`

	// SamplePodStatus is the status of the run's first pod when all pods were Running
	// and Ready, as the bench's watch saw it: what the agent wrote, for CompareStatuses.
	SamplePodStatus *v1.PodStatus `json:"samplePodStatus,omitempty"`
}

// setDeletionFloor sets DeleteFloorSeconds and AgentShareOfDeletionCPU from the CPU
// figures already set, for an API server with cores cores.
func (res *RunResult) setDeletionFloor(cores int) {
	if res.DeleteSeconds == 0 || res.APIServerCPUSeconds == 0 || cores <= 0 {
		return
	}
	server := res.APIServerCPUSeconds - res.APIServerCPUSecondsToReady
	res.DeleteFloorSeconds = server / float64(cores)
	if res.AgentProcess != nil {
		agent := res.AgentProcess.CPUSeconds - res.AgentCPUSecondsToReady
		if agent+server > 0 {
			share := agent / (agent + server)
			res.AgentShareOfDeletionCPU = &share
		}
	}
}

// RequestRow is one RequestKey and its count.
type RequestRow struct {
	RequestKey
	Count float64 `json:"count"`
}

func rows(c RequestCounts) []RequestRow {
	out := []RequestRow{}
	for _, k := range c.Keys() {
		out = append(out, RequestRow{RequestKey: k, Count: c[k]})
	}
	return out
}

func (res *RunResult) setRequests(toReady, toGone, bench RequestCounts) {
	agent := RequestCounts{}
	for _, c := range []RequestCounts{toReady, toGone} {
		for k, v := range c {
			agent[k] += v
		}
	}
	res.AgentRequests, res.BenchRequests = rows(agent), rows(bench)
	res.AgentRequestsToReady, res.AgentRequestsToGone = rows(toReady), rows(toGone)
	n := float64(res.Pods)
	res.StatusPatchesPerPodToReady = toReady.Sum("PATCH", "pods", "status") / n
	res.StatusPatchesPerPodToGone = toGone.Sum("PATCH", "pods", "status") / n
	res.StatusPatchesPerPod = agent.Sum("PATCH", "pods", "status") / n
	res.PodGETsPerPod = agent.Sum("GET", "pods", "-") / n
	res.PodDeletesPerPod = agent.Sum("DELETE", "pods", "-") / n
	res.PodRequestsPerPod = agent.Sum("", "pods", "") / n
	for k, v := range agent {
		if k.Code >= "400" && len(k.Code) == 3 {
			res.AgentErrors += v
		}
		if k.Code == "404" {
			res.Agent404s += v
		}
	}
}

// setStatusChanges records the agent's count of status changes (to Ready, and over
// the run) against the status PATCHes setRequests counted.
func (res *RunResult) setStatusChanges(toReady, total float64) {
	res.StatusChangesToReady, res.StatusChanges = toReady, total
	n := float64(res.Pods)
	if toReady > 0 {
		res.StatusPatchesPerChangeToReady = res.StatusPatchesPerPodToReady * n / toReady
	}
	if total > 0 {
		res.StatusPatchesPerChange = res.StatusPatchesPerPod * n / total
	}
}

// Summary is the median of an agent's runs.
type Summary struct {
	Agent                string  `json:"agent"`
	Runs                 int     `json:"runs"`
	ReadySeconds         float64 `json:"readySeconds"`
	ReadyPodsPerSecond   float64 `json:"readyPodsPerSecond"`
	DeleteSeconds        float64 `json:"deleteSeconds,omitempty"`
	DeletedPodsPerSecond float64 `json:"deletedPodsPerSecond,omitempty"`
	StatusPatchesPerPod  float64 `json:"statusPatchesPerPod"`
	StatusPatchesToReady float64 `json:"statusPatchesPerPodToReady"`
	StatusPatchesToGone  float64 `json:"statusPatchesPerPodToGone"`
	PodGETsPerPod        float64 `json:"podGETsPerPod"`
	PodDeletesPerPod     float64 `json:"podDeletesPerPod"`
	PodRequestsPerPod    float64 `json:"podRequestsPerPod"`
	AgentErrors          float64 `json:"agentErrors"`
	// StatusChangesPerPod and StatusPatchesPerChange (whole run) are medians of the
	// agent's own count; nil for agents that do not count.
	StatusChangesPerPod    *float64 `json:"statusChangesPerPod,omitempty"`
	StatusPatchesPerChange *float64 `json:"statusPatchesPerChange,omitempty"`
	AgentCPUSeconds        *float64 `json:"agentCPUSeconds,omitempty"`
	// AgentCPUSecondsToReady is the agent's CPU up to all pods Running and Ready.
	AgentCPUSecondsToReady *float64 `json:"agentCPUSecondsToReady,omitempty"`
	// AgentCPUSecondsDeletion is the agent's CPU after all pods were Running and Ready.
	AgentCPUSecondsDeletion *float64 `json:"agentCPUSecondsDeletion,omitempty"`
	AgentPeakRSSMiB         *float64 `json:"agentPeakRSSMiB,omitempty"`
	// AgentProcesses is how many processes the agent ran (one per node for kubemark).
	AgentProcesses int `json:"agentProcesses,omitempty"`
	// AgentPrivateMiBPerNode is the agent's private memory when all pods were Running
	// and Ready, summed over its processes, divided by the nodes.
	AgentPrivateMiBPerNode *float64 `json:"agentPrivateMiBPerNode,omitempty"`
	// DeleteFloorSeconds and AgentShareOfDeletionCPU are the medians of the runs' (see
	// RunResult).
	DeleteFloorSeconds      *float64 `json:"deleteFloorSeconds,omitempty"`
	AgentShareOfDeletionCPU *float64 `json:"agentShareOfDeletionCPU,omitempty"`
	APIServerCPUSeconds     *float64 `json:"apiServerCPUSeconds,omitempty"`
	// APIServerCPUSecondsToReady is the API server's CPU up to all pods Running and Ready.
	APIServerCPUSecondsToReady *float64 `json:"apiServerCPUSecondsToReady,omitempty"`
	// APIServerCPUSecondsDeletion is the API server's CPU after all pods were Running
	// and Ready.
	APIServerCPUSecondsDeletion *float64 `json:"apiServerCPUSecondsDeletion,omitempty"`
	BenchCPUSeconds             *float64 `json:"benchCPUSeconds,omitempty"`
}

// Report is the result of Run.
type Report struct {
	Pods    int    `json:"pods"`
	Nodes   int    `json:"nodes"`
	Clients int    `json:"clients"`
	Delete  bool   `json:"delete"`
	Runs    int    `json:"runs"`
	Profile string `json:"fleetProfile"`
	// Cores is the core count the deletion floor divides by (Config.Cores).
	Cores int `json:"cores"`
	// Results has every run, in the order they ran.
	Results []RunResult `json:"results"`
	// Summaries has one entry per agent, in the order of Config.Agents: medians of its
	// runs.
	Summaries []Summary `json:"summaries"`
	// StatusDiffs are the fields on which the agents' sample pods (the first pod of each
	// agent's last run, when all were Running and Ready) differ: CompareStatuses.
	StatusDiffs []FieldDiff `json:"statusDiffs,omitempty"`
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (rep *Report) summarize() {
	rep.Summaries = nil
	samples := map[string]*v1.PodStatus{}
	for _, r := range rep.Results {
		if r.SamplePodStatus != nil {
			samples[r.Agent] = r.SamplePodStatus
		}
	}
	// A PodStatus always marshals, so CompareStatuses does not fail here.
	rep.StatusDiffs, _ = CompareStatuses(samples)
	var order []string
	by := map[string][]RunResult{}
	for _, r := range rep.Results {
		if _, ok := by[r.Agent]; !ok {
			order = append(order, r.Agent)
		}
		by[r.Agent] = append(by[r.Agent], r)
	}
	for _, a := range order {
		rs := by[a]
		med := func(f func(RunResult) float64) float64 {
			xs := make([]float64, len(rs))
			for i, r := range rs {
				xs[i] = f(r)
			}
			return median(xs)
		}
		optMed := func(f func(RunResult) (float64, bool)) *float64 {
			var xs []float64
			for _, r := range rs {
				if v, ok := f(r); ok {
					xs = append(xs, v)
				}
			}
			if len(xs) == 0 {
				return nil
			}
			m := median(xs)
			return &m
		}
		rep.Summaries = append(rep.Summaries, Summary{
			Agent:                a,
			Runs:                 len(rs),
			ReadySeconds:         med(func(r RunResult) float64 { return r.ReadySeconds }),
			ReadyPodsPerSecond:   med(func(r RunResult) float64 { return r.ReadyPodsPerSecond }),
			DeleteSeconds:        med(func(r RunResult) float64 { return r.DeleteSeconds }),
			DeletedPodsPerSecond: med(func(r RunResult) float64 { return r.DeletedPodsPerSecond }),
			StatusPatchesPerPod:  med(func(r RunResult) float64 { return r.StatusPatchesPerPod }),
			StatusPatchesToReady: med(func(r RunResult) float64 { return r.StatusPatchesPerPodToReady }),
			StatusPatchesToGone:  med(func(r RunResult) float64 { return r.StatusPatchesPerPodToGone }),
			PodGETsPerPod:        med(func(r RunResult) float64 { return r.PodGETsPerPod }),
			PodDeletesPerPod:     med(func(r RunResult) float64 { return r.PodDeletesPerPod }),
			PodRequestsPerPod:    med(func(r RunResult) float64 { return r.PodRequestsPerPod }),
			AgentErrors:          med(func(r RunResult) float64 { return r.AgentErrors }),
			StatusChangesPerPod: optMed(func(r RunResult) (float64, bool) {
				return r.StatusChanges / float64(r.Pods), r.StatusChanges > 0
			}),
			StatusPatchesPerChange: optMed(func(r RunResult) (float64, bool) {
				return r.StatusPatchesPerChange, r.StatusChanges > 0
			}),
			AgentCPUSeconds: optMed(func(r RunResult) (float64, bool) {
				if r.AgentProcess == nil {
					return 0, false
				}
				return r.AgentProcess.CPUSeconds, true
			}),
			AgentCPUSecondsToReady: optMed(func(r RunResult) (float64, bool) {
				return r.AgentCPUSecondsToReady, r.AgentProcess != nil
			}),
			AgentCPUSecondsDeletion: optMed(func(r RunResult) (float64, bool) {
				if r.AgentProcess == nil || r.DeleteSeconds == 0 {
					return 0, false
				}
				return r.AgentProcess.CPUSeconds - r.AgentCPUSecondsToReady, true
			}),
			AgentPeakRSSMiB: optMed(func(r RunResult) (float64, bool) {
				if r.AgentProcess == nil {
					return 0, false
				}
				return float64(r.AgentProcess.PeakRSSBytes) / (1 << 20), true
			}),
			AgentProcesses: int(med(func(r RunResult) float64 {
				if r.AgentProcess == nil {
					return 0
				}
				return float64(r.AgentProcess.Processes)
			})),
			AgentPrivateMiBPerNode: optMed(func(r RunResult) (float64, bool) {
				return float64(r.AgentPrivateBytesAtReady) / (1 << 20) / float64(max(r.Nodes, 1)), r.AgentPrivateBytesAtReady > 0
			}),
			DeleteFloorSeconds: optMed(func(r RunResult) (float64, bool) {
				return r.DeleteFloorSeconds, r.DeleteFloorSeconds > 0
			}),
			AgentShareOfDeletionCPU: optMed(func(r RunResult) (float64, bool) {
				if r.AgentShareOfDeletionCPU == nil {
					return 0, false
				}
				return *r.AgentShareOfDeletionCPU, true
			}),
			APIServerCPUSeconds: optMed(func(r RunResult) (float64, bool) {
				return r.APIServerCPUSeconds, r.APIServerCPUSeconds > 0
			}),
			APIServerCPUSecondsToReady: optMed(func(r RunResult) (float64, bool) {
				return r.APIServerCPUSecondsToReady, r.APIServerCPUSeconds > 0
			}),
			APIServerCPUSecondsDeletion: optMed(func(r RunResult) (float64, bool) {
				return r.APIServerCPUSeconds - r.APIServerCPUSecondsToReady, r.APIServerCPUSeconds > 0 && r.DeleteSeconds > 0
			}),
			BenchCPUSeconds: optMed(func(r RunResult) (float64, bool) {
				return r.BenchCPUSeconds, r.BenchCPUSeconds > 0
			}),
		})
	}
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// writeHeader writes the header of a markdown table whose first column is named first,
// then one column per agent aligned by align ("---:" or "---"), then, unless last is
// empty, a column named last.
func (rep *Report) writeHeader(b *strings.Builder, first, align, last string) {
	fmt.Fprintf(b, "| %s |", first)
	for _, s := range rep.Summaries {
		fmt.Fprintf(b, " %s |", s.Agent)
	}
	if last != "" {
		fmt.Fprintf(b, " %s |", last)
	}
	b.WriteString("\n|---|")
	for range rep.Summaries {
		fmt.Fprintf(b, "%s|", align)
	}
	if last != "" {
		b.WriteString("---|")
	}
	b.WriteString("\n")
}

// WriteMarkdown writes the medians side by side, one column per agent, as a markdown
// table, then the agents' requests per pod by verb, resource and code.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d pods on %d node(s), %d parallel creators, median of %d run(s)", rep.Pods, rep.Nodes, rep.Clients, rep.Runs)
	if rep.Delete {
		b.WriteString(", then graceful deletion")
	}
	fmt.Fprintf(&b, "; fleet profile %s\n\n", rep.Profile)

	rep.writeHeader(&b, "", "---:", "")
	row := func(name string, f func(Summary) string) {
		fmt.Fprintf(&b, "| %s |", name)
		for _, s := range rep.Summaries {
			fmt.Fprintf(&b, " %s |", f(s))
		}
		b.WriteString("\n")
	}
	opt := func(p *float64, format string) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf(format, *p)
	}
	row("first create → all Running and Ready", func(s Summary) string { return fmt.Sprintf("%.1f s", s.ReadySeconds) })
	row("pods Running and Ready per second", func(s Summary) string { return fmt.Sprintf("%.0f", s.ReadyPodsPerSecond) })
	if rep.Delete {
		row("first delete → all pod objects gone", func(s Summary) string { return fmt.Sprintf("%.1f s", s.DeleteSeconds) })
		row(fmt.Sprintf("deletion floor: API server + etcd CPU during deletion ÷ %d cores", rep.Cores), func(s Summary) string { return opt(s.DeleteFloorSeconds, "%.1f s") })
		row("pods deleted per second", func(s Summary) string { return fmt.Sprintf("%.0f", s.DeletedPodsPerSecond) })
	}
	row("status PATCHes per pod, to Running and Ready", func(s Summary) string { return fmt.Sprintf("%.2f", s.StatusPatchesToReady) })
	if rep.Delete {
		row("status PATCHes per pod, deletion", func(s Summary) string { return fmt.Sprintf("%.2f", s.StatusPatchesToGone) })
	}
	row("status changes per pod (the agent's count, whole run)", func(s Summary) string { return opt(s.StatusChangesPerPod, "%.2f") })
	row("status PATCHes per status change (whole run)", func(s Summary) string { return opt(s.StatusPatchesPerChange, "%.2f") })
	row("pod GETs per pod (whole run)", func(s Summary) string { return fmt.Sprintf("%.2f", s.PodGETsPerPod) })
	row("pod DELETEs per pod (whole run)", func(s Summary) string { return fmt.Sprintf("%.2f", s.PodDeletesPerPod) })
	row("requests on pods per pod (whole run)", func(s Summary) string { return fmt.Sprintf("%.2f", s.PodRequestsPerPod) })
	row("agent requests answered ≥ 400", func(s Summary) string { return fmt.Sprintf("%.0f", s.AgentErrors) })
	perPod := func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf("%.1f s (%.2f ms/pod)", *p, *p*1000/float64(rep.Pods))
	}
	row("agent CPU, to Running and Ready", func(s Summary) string { return perPod(s.AgentCPUSecondsToReady) })
	if rep.Delete {
		row("agent CPU, deletion", func(s Summary) string { return perPod(s.AgentCPUSecondsDeletion) })
	}
	row("agent CPU, whole run", func(s Summary) string { return perPod(s.AgentCPUSeconds) })
	row("agent peak RSS (summed over its processes)", func(s Summary) string {
		if s.AgentProcesses > 1 {
			return opt(s.AgentPeakRSSMiB, fmt.Sprintf("%%.0f MiB (%d processes)", s.AgentProcesses))
		}
		return opt(s.AgentPeakRSSMiB, "%.0f MiB")
	})
	row("agent private memory per node at all Ready (Private_Clean+Private_Dirty ÷ nodes)", func(s Summary) string { return opt(s.AgentPrivateMiBPerNode, "%.1f MiB") })
	row("API server + etcd CPU, to Running and Ready", func(s Summary) string { return perPod(s.APIServerCPUSecondsToReady) })
	if rep.Delete {
		row("API server + etcd CPU, deletion", func(s Summary) string { return perPod(s.APIServerCPUSecondsDeletion) })
		row("agent's share of agent + API server CPU, deletion", func(s Summary) string {
			if s.AgentShareOfDeletionCPU == nil {
				return "–"
			}
			return fmt.Sprintf("%.0f%%", *s.AgentShareOfDeletionCPU*100)
		})
	}
	row("bench CPU (its clients and watch), whole run", func(s Summary) string { return opt(s.BenchCPUSeconds, "%.1f s") })

	// Requests by key: the last run of each agent.
	last := map[string]RunResult{}
	for _, r := range rep.Results {
		last[r.Agent] = r
	}
	keys := RequestCounts{}
	for _, r := range last {
		for _, row := range r.AgentRequests {
			keys[row.RequestKey] = 1
		}
	}
	if len(keys) > 0 {
		b.WriteString("\nagent requests per pod (last run; apiserver_request_total minus the bench's own requests)\n\n")
		rep.writeHeader(&b, "verb resource code", "---:", "")
		for _, k := range keys.Keys() {
			fmt.Fprintf(&b, "| %s |", k)
			for _, s := range rep.Summaries {
				r := last[s.Agent]
				var n float64
				for _, row := range r.AgentRequests {
					if row.RequestKey == k {
						n = row.Count
					}
				}
				if n == 0 {
					b.WriteString(" – |")
				} else {
					fmt.Fprintf(&b, " %.3g (%.0f) |", n/float64(r.Pods), n)
				}
			}
			b.WriteString("\n")
		}
	}
	if len(rep.StatusDiffs) > 0 {
		b.WriteString("\nwhat each wrote for the same pod, field by field (first pod of the last run at all Ready; times, addresses and container IDs normalised; – for a field not written)\n\n")
		rep.writeHeader(&b, "field", "---", "why")
		for _, d := range rep.StatusDiffs {
			fmt.Fprintf(&b, "| %s |", d.Field)
			for _, s := range rep.Summaries {
				v := d.Values[s.Agent]
				if v == "" {
					v = "–"
				}
				fmt.Fprintf(&b, " %s |", v)
			}
			reason := d.Reason
			if reason == "" {
				reason = "(not explained yet)"
			}
			fmt.Fprintf(&b, " %s |\n", reason)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
