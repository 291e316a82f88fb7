// Command fleet-bench measures a simulated kubelet at scale against a real API server:
// the fleet agent of examples/fleet, KWOK, kubemark's hollow kubelets, or an agent
// already running, one after the other on the same server with --compare. See package
// bench and its README.
//
//	fleet-bench --kubeconfig /tmp/podstatus.kubeconfig --compare fleet,kwok --pods 10000 --nodes 1 --runs 3 --delete
//	fleet-bench --kubeconfig /tmp/podstatus.kubeconfig --compare fleet,kwok,kubemark --kubemark-bin /tmp/kubemark --pods 1000 --nodes 10 --delete
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/podstatus/podstatus/examples/fleet/bench"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fleet-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg bench.Config
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig `file` of the API server (a super-user: the bench reads /metrics); default $KUBECONFIG")
	agent := fs.String("agent", bench.AgentNone, "the agent to measure: fleet (start examples/fleet/cmd/fleet), kwok (start kwok), kubemark (start one hollow kubelet per node) or none (already running)")
	compare := fs.String("compare", "", "measure several agents one after the other, e.g. fleet,kwok,kubemark (overrides --agent)")
	fs.IntVar(&cfg.Runs, "runs", 1, "runs per agent, interleaved (a,b,a,b); the summary shows medians")
	fs.IntVar(&cfg.Nodes, "nodes", 1, "nodes to spread the pods over, round-robin")
	fs.BoolVar(&cfg.WaitForNodes, "wait-for-nodes", false, "do not create nodes: wait for --nodes Ready nodes named --node-name-prefix* (an agent that makes its own)")
	fs.StringVar(&cfg.NodeNamePrefix, "node-name-prefix", "fleet-bench-node-", "name prefix of the nodes")
	fs.IntVar(&cfg.Pods, "pods", 100, "pods per run")
	fs.IntVar(&cfg.Clients, "clients", 20, "parallel creators (and deleters); no client-side rate limit")
	fs.BoolVar(&cfg.Delete, "delete", false, "then delete every pod (default grace period) and wait until the agent has removed them")
	fs.StringVar(&cfg.Namespace, "namespace", "fleet-bench", "namespace of the pods (created if missing)")
	fs.StringVar(&cfg.Profile, "profile", "fast", "--profile of the fleet agent")
	fs.StringVar(&cfg.AgentBin, "agent-bin", "", "fleet agent binary (default: go build examples/fleet/cmd/fleet into a temporary directory)")
	fs.StringVar(&cfg.AgentSource, "agent-src", "", "directory of the examples/fleet module (default: found from the working directory up)")
	fs.StringVar(&cfg.KWOKBin, "kwok-bin", "", "kwok binary (default: kwok on PATH; install: go install sigs.k8s.io/kwok/cmd/kwok@v0.8.0)")
	fs.StringVar(&cfg.KWOKStages, "kwok-stages", "", "Stage file for kwok --config (default: KWOK v0.8.0's fast stages, built in)")
	fs.StringVar(&cfg.KubemarkBin, "kubemark-bin", "", "kubemark binary, required for the agent kubemark (examples/fleet/bench/hack/build-kubemark.sh builds one)")
	fs.IntVar(&cfg.Cores, "cores", 0, "cores of the API server's machine, for the deletion floor (API server CPU ÷ cores); default: this machine's")
	var agentArgs stringList
	fs.Var(&agentArgs, "agent-arg", "an extra `argument` for the agents the bench starts (repeatable)")
	fs.IntVar(&cfg.AgentPID, "agent-pid", 0, "with --agent none: `pid` of the running agent, for its CPU time and peak RSS")
	fs.IntVar(&cfg.APIServerPID, "apiserver-pid", 0, "`pid` of the API server when it runs on this machine, for its CPU time")
	fs.DurationVar(&cfg.Timeout, "timeout", 0, "bound of each phase (nodes Ready, pods Ready, pods gone); default 10m")
	fs.DurationVar(&cfg.ProgressInterval, "progress-interval", 0, "how often progress is printed; default 2s")
	jsonOut := fs.Bool("json", false, "print the report as JSON instead of tables")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *kubeconfig == "" {
		return errors.New("no --kubeconfig (and $KUBECONFIG is empty)")
	}
	cfg.AgentArgs = agentArgs
	cfg.Agents = []string{*agent}
	if *compare != "" {
		cfg.Agents = strings.Split(*compare, ",")
	}
	if *agent != bench.AgentNone && *compare != "" {
		return errors.New("--agent and --compare exclude each other")
	}
	if slices.Contains(cfg.Agents, bench.AgentKubemark) {
		if err := bench.CheckKubemarkBin(cfg.KubemarkBin); err != nil {
			return fmt.Errorf("--kubemark-bin: %w (examples/fleet/bench/hack/build-kubemark.sh builds one)", err)
		}
	}
	if cfg.Cores < 0 {
		return fmt.Errorf("--cores must not be negative, got %d", cfg.Cores)
	}
	if len(cfg.Agents) == 1 && cfg.Agents[0] == bench.AgentNone {
		// Said up front, even with --quiet: a newcomer who started nothing would otherwise
		// wait for nodes that never become Ready.
		fmt.Fprintln(stderr, "fleet-bench: measuring an agent you started yourself (--agent none, the default): it must make the bench's nodes (annotated kwok.x-k8s.io/node=fake) Ready; pass --agent fleet or --agent kwok to have the bench start one")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("reading kubeconfig %s: %w", *kubeconfig, err)
	}
	cfg.RESTConfig = rc
	cfg.Kubeconfig = *kubeconfig
	if !*quiet {
		cfg.Progress = stderr
	}
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if *jsonOut {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteMarkdown(stdout)
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
