package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Event is one line of the timeline: a condition transition seen on the server, or a
// PATCH the node agent sent.
type Event struct {
	// At is the simulated time, in seconds since the start.
	At int `json:"at"`
	// Pod is the pod's name.
	Pod string `json:"pod"`
	// What is "condition", "patch" or "delete" (the node agent deleted the pod object,
	// after its last conditions).
	What string `json:"what"`
	// Condition, Status, Reason and LastTransitionTime describe a condition transition.
	Condition          string `json:"condition,omitempty"`
	Status             string `json:"status,omitempty"`
	Reason             string `json:"reason,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	// By names who wrote the condition: node-agent, scheduler or lb-controller.
	By string `json:"by,omitempty"`
	// Patch is the patch sent (What == "patch"), and Summary a one-line digest of it.
	Patch   json.RawMessage `json:"patch,omitempty"`
	Summary string          `json:"summary,omitempty"`
}

// PodSummary is the outcome for one pod.
type PodSummary struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Phase is the pod's last phase seen on the server; empty when the run ended before
	// the pod was created.
	Phase string `json:"phase"`
	Ready string `json:"ready"`
	// SandboxLatencySeconds is KEP-3085's pod sandbox creation latency: the first
	// lastTransitionTime of PodReadyToStartContainers True minus PodScheduled's; -1 when
	// the sandbox never became ready.
	SandboxLatencySeconds int `json:"sandboxLatencySeconds"`
}

// Summary totals a run.
type Summary struct {
	Pods             int `json:"pods"`
	SimulatedSeconds int `json:"simulatedSeconds"`
	StatusChanges    int `json:"statusChanges"`
	PatchesSent      int `json:"patchesSent"`
	PatchesSkipped   int `json:"patchesSkipped"`
	// Gets counts the node agent's GETs (the status Manager's); InformerGets the reads
	// of pods that stand in for the agent's informer (a watch in a real agent), which
	// the API server also sees as GETs but which are not in Requests.
	Gets         int `json:"gets"`
	InformerGets int `json:"informerGets"`
	// Deletes counts the pod objects the node agent deleted once they terminated; they are
	// not status requests and not in Requests.
	Deletes           int          `json:"deletes"`
	Requests          int          `json:"requests"`
	RequestsPerChange float64      `json:"requestsPerChange"`
	PerPod            []PodSummary `json:"perPod"`
}

// Report is everything a run produced.
type Report struct {
	Start    time.Time `json:"start"`
	Timeline []Event   `json:"timeline,omitempty"`
	Summary  Summary   `json:"summary"`
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write JSON report: %w", err)
	}
	return nil
}

// WriteText writes the timeline and the summary for people. With patches, each PATCH is
// printed in full under its digest.
func (r *Report) WriteText(w io.Writer, patches bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.Timeline) > 0 {
		fmt.Fprintf(tw, "TIME\tPOD\tEVENT\n")
	}
	for _, e := range r.Timeline {
		switch e.What {
		case "delete":
			fmt.Fprintf(tw, "%3ds\t%s\tDELETE (grace period 0, UID precondition) (%s)\n", e.At, e.Pod, e.By)
		case "patch":
			fmt.Fprintf(tw, "%3ds\t%s\tPATCH  %s\n", e.At, e.Pod, e.Summary)
			if patches {
				fmt.Fprintf(tw, "\t\t       %s\n", e.Patch)
			}
		default:
			reason := e.Reason
			if reason == "" {
				reason = "-"
			}
			fmt.Fprintf(tw, "%3ds\t%s\t%-26s %-7s %-28s lastTransitionTime=%s (%s)\n", e.At, e.Pod, e.Condition, e.Status, reason, e.LastTransitionTime, e.By)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write timeline: %w", err)
	}
	s := r.Summary
	if len(r.Timeline) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "summary\n")
	fmt.Fprintf(w, "  pods                  %d (simulated %ds)\n", s.Pods, s.SimulatedSeconds)
	fmt.Fprintf(w, "  status changes        %d\n", s.StatusChanges)
	fmt.Fprintf(w, "  PATCHes sent          %d\n", s.PatchesSent)
	fmt.Fprintf(w, "  PATCHes skipped       %d (status already up to date)\n", s.PatchesSkipped)
	fmt.Fprintf(w, "  GETs                  %d (the agent's; plus %d reads standing in for its informer's watch, not counted as requests)\n", s.Gets, s.InformerGets)
	fmt.Fprintf(w, "  DELETEs               %d (terminated pods, with a UID precondition)\n", s.Deletes)
	fmt.Fprintf(w, "  requests per change   %.2f (the kubelet: 2, a GET before every PATCH)\n", s.RequestsPerChange)
	fmt.Fprintf(w, "\n  sandbox-creation latency (KEP-3085: PodReadyToStartContainers - PodScheduled)\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  POD\tKIND\tPHASE\tREADY\tSANDBOX LATENCY\n")
	for _, p := range s.PerPod {
		lat := "never"
		if p.SandboxLatencySeconds >= 0 {
			lat = fmt.Sprintf("%ds", p.SandboxLatencySeconds)
		}
		phase := p.Phase
		if phase == "" {
			phase = "-" // not created yet
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p.Name, p.Kind, phase, p.Ready, lat)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// digest summarises a status patch in one line: the status fields it sets and the
// conditions it touches.
func digest(patch []byte) string {
	var p struct {
		Status map[string]json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return fmt.Sprintf("%d bytes (undecodable: %v)", len(patch), err)
	}
	var fields, conds []string
	for k := range p.Status {
		if strings.HasPrefix(k, "$") {
			continue
		}
		fields = append(fields, k)
	}
	slices.Sort(fields)
	if raw, ok := p.Status["conditions"]; ok {
		var cs []map[string]any
		if json.Unmarshal(raw, &cs) == nil {
			for _, c := range cs {
				conds = append(conds, fmt.Sprintf("%v=%v", c["type"], orDash(c["status"])))
			}
		}
	}
	s := fmt.Sprintf("%d bytes: %s", len(patch), strings.Join(fields, ","))
	if len(conds) > 0 {
		s += " [" + strings.Join(conds, " ") + "]"
	}
	if phase, ok := p.Status["phase"]; ok {
		s += " phase=" + strings.Trim(string(phase), `"`)
	}
	return s
}

func orDash(v any) any {
	if v == nil {
		return "~"
	}
	return v
}
