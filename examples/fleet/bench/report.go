package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// RunResult is what one run of one agent measured.
type RunResult struct {
	// Agent is AgentFleet, AgentKWOK or AgentNone; Run counts from 1.
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

	// AgentProcess is the agent process' CPU time over the run and its peak RSS, when it runs
	// on this machine and the bench knows its pid.
	AgentProcess *ProcStats `json:"agentProcess,omitempty"`
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
	// Results has every run, in the order they ran.
	Results []RunResult `json:"results"`
	// Summaries has one entry per agent, in the order of Config.Agents: medians of its
	// runs.
	Summaries []Summary `json:"summaries"`
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

// WriteMarkdown writes the medians side by side, one column per agent, as a markdown
// table, then the agents' requests per pod by verb, resource and code.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d pods on %d node(s), %d parallel creators, median of %d run(s)", rep.Pods, rep.Nodes, rep.Clients, rep.Runs)
	if rep.Delete {
		b.WriteString(", then graceful deletion")
	}
	fmt.Fprintf(&b, "; fleet profile %s\n\n", rep.Profile)

	b.WriteString("| |")
	for _, s := range rep.Summaries {
		fmt.Fprintf(&b, " %s |", s.Agent)
	}
	b.WriteString("\n|---|")
	for range rep.Summaries {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
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
	row("agent peak RSS", func(s Summary) string { return opt(s.AgentPeakRSSMiB, "%.0f MiB") })
	row("API server + etcd CPU, to Running and Ready", func(s Summary) string { return perPod(s.APIServerCPUSecondsToReady) })
	if rep.Delete {
		row("API server + etcd CPU, deletion", func(s Summary) string { return perPod(s.APIServerCPUSecondsDeletion) })
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
		b.WriteString("\nagent requests per pod (last run; apiserver_request_total minus the bench's own requests)\n\n| verb resource code |")
		for _, s := range rep.Summaries {
			fmt.Fprintf(&b, " %s |", s.Agent)
		}
		b.WriteString("\n|---|")
		for range rep.Summaries {
			b.WriteString("---:|")
		}
		b.WriteString("\n")
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
	_, err := io.WriteString(w, b.String())
	return err
}
