// Command explain reads a pod — YAML or JSON, from a file or stdin, exactly as
// `kubectl get pod -o yaml` prints it (a List of pods works too) — and prints the
// conditions the kubelet v1.37.0 would compute for it and, when it is not ready, why.
//
//	kubectl get pod web -o yaml | go run ./examples/explain
//	go run ./examples/explain pod.json
//
// A pod manifest carries no runtime sandbox list, so the sandbox is inferred from the
// status: a pod with a pod IP (or a host-network pod past Pending, or one whose
// PodReadyToStartContainers condition is True) is taken to have one ready sandbox; any
// other pod none. Everything else (container statuses, phase, readiness-gate conditions,
// generation) is read from the manifest.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/podstatus/podstatus/conditions"
	"github.com/podstatus/podstatus/readiness"
	"github.com/podstatus/podstatus/sandbox"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: explain [pod.yaml|pod.json|-]\n\nReads a pod (or a List of pods) and prints the conditions the kubelet would compute and why it is not ready.\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if waitsOnTerminal(flag.Args(), os.Stdin) {
		// Nothing would ever arrive: say how to use it instead of waiting silently.
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Args(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "explain:", err)
		os.Exit(1)
	}
}

// waitsOnTerminal reports whether run would read stdin while stdin is a terminal (a
// character device): no pipe and no file named, as when `go run ./examples/explain` is
// typed alone.
func waitsOnTerminal(args []string, stdin *os.File) bool {
	if len(args) > 0 && args[0] != "-" {
		return false
	}
	fi, err := stdin.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func run(args []string, stdin io.Reader, out io.Writer) error {
	var data []byte
	var err error
	switch {
	case len(args) > 1:
		return errors.New("expected at most one file argument")
	case len(args) == 0 || args[0] == "-":
		data, err = io.ReadAll(stdin)
	default:
		data, err = os.ReadFile(args[0])
	}
	if err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	pods, err := decode(data)
	if err != nil {
		return err
	}
	for i := range pods {
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := explain(&pods[i], out); err != nil {
			return err // readiness's errors name the pod already
		}
	}
	return nil
}

// decode accepts a Pod or a List of Pods, in YAML or JSON.
func decode(data []byte) ([]v1.Pod, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("no input: pipe a pod in (kubectl get pod NAME -o yaml | explain) or name a file")
	}
	js, err := yaml.ToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("input is neither YAML nor JSON: %w", err)
	}
	var head struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, fmt.Errorf("decode input: %w", err)
	}
	raw := []json.RawMessage{js}
	switch head.Kind {
	case "Pod", "":
	case "List", "PodList":
		raw = head.Items
	default:
		return nil, fmt.Errorf("input is a %s, want a Pod or a List of Pods", head.Kind)
	}
	pods := make([]v1.Pod, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &pods[i]); err != nil {
			return nil, fmt.Errorf("decode pod %d: %w", i, err)
		}
	}
	return pods, nil
}

// inferSandboxes guesses the runtime's sandbox list from what the status shows.
func inferSandboxes(p *v1.Pod) []sandbox.Status {
	prtsc := conditions.Get(p.Status.Conditions, v1.PodReadyToStartContainers)
	hasSandbox := p.Status.PodIP != "" ||
		(p.Spec.HostNetwork && p.Status.Phase != v1.PodPending && p.Status.Phase != "") ||
		(prtsc != nil && prtsc.Status == v1.ConditionTrue)
	if !hasSandbox {
		return nil
	}
	return []sandbox.Status{{ID: "inferred", Ready: true, HostNetwork: p.Spec.HostNetwork, IP: p.Status.PodIP, NoNetworkStatus: p.Status.PodIP == ""}}
}

func explain(p *v1.Pod, out io.Writer) error {
	in := readiness.Input{
		Pod:                   p,
		Phase:                 p.Status.Phase,
		InitContainerStatuses: p.Status.InitContainerStatuses,
		ContainerStatuses:     p.Status.ContainerStatuses,
		Conditions:            p.Status.Conditions,
		Sandboxes:             inferSandboxes(p),
		OldStatus:             &p.Status,
	}
	e, err := readiness.Explain(in)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "pod %s/%s (phase %s)\n", p.Namespace, p.Name, orDash(string(p.Status.Phase)))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONDITION\tSTATUS\tREASON\tMESSAGE\tON SERVER")
	for _, c := range e.Result.Conditions() {
		server := "-"
		if s := conditions.Get(p.Status.Conditions, c.Type); s != nil {
			server = string(s.Status)
			if s.Status != c.Status {
				server += " (differs)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, orDash(c.Reason), orDash(c.Message), server)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if e.Ready {
		fmt.Fprintln(out, "ready")
		return nil
	}
	fmt.Fprintln(out, "not ready because:")
	fmt.Fprintln(out, indent(e.String()))
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func indent(s string) string {
	return "  " + string(bytes.ReplaceAll([]byte(s), []byte("\n"), []byte("\n  ")))
}
