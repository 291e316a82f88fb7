package bench

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The agents Run can start, or none.
const (
	// AgentNone: an agent is already running (or is started by the caller, for example
	// in-process); Config.AgentPID optionally names it for CPU and memory figures.
	AgentNone = "none"
	// AgentFleet: the fleet agent of examples/fleet, a podstatus-based simulated kubelet.
	AgentFleet = "fleet"
	// AgentKWOK: KWOK (sigs.k8s.io/kwok/cmd/kwok) with its default fast stages.
	AgentKWOK = "kwok"
	// AgentKubemark: kubemark's hollow kubelet (k8s.io/kubernetes/cmd/kubemark
	// --morph=kubelet: the kubelet's own code with a fake container runtime), one process
	// per node, each registering its node.
	AgentKubemark = "kubemark"
)

// FakeNodeAnnotation is the annotation (key=value) that marks the nodes the bench
// creates, as KWOK's documentation does; both agents are started with
// --manage-nodes-with-annotation-selector set to it.
const FakeNodeAnnotation = "kwok.x-k8s.io/node=fake"

// KWOKFastStages is KWOK v0.8.0's default fast Stage configuration (node-initialize,
// node-heartbeat-with-lease, pod-ready, pod-complete, pod-delete), copied verbatim from
// the module sigs.k8s.io/kwok@v0.8.0 (kustomize/stage/...). It is what the bench passes
// to kwok --config unless Config.KWOKStages names another file.
//
//go:embed testdata/kwok-fast-stages.yaml
var KWOKFastStages []byte

// agentProc is an agent the bench started: one process (the fleet agent, KWOK) or one
// per node (kubemark's hollow kubelets).
type agentProc struct {
	kind  string
	procs []*childProc
	// metricsURL is the fleet agent's /metrics (the bench passes it --metrics-addr
	// unless Config.AgentArgs does), for its own count of status changes; empty for
	// other agents.
	metricsURL string
	// beforeStop, if set, runs while the processes still run, just before stop signals
	// them (to find their leftovers).
	beforeStop func(*agentProc)
}

// childProc is one process of an agent.
type childProc struct {
	name    string // the agent's kind, and the node for a hollow kubelet
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error
	// leftovers are paths the process leaves behind when it is killed, removed once it
	// stopped (a hollow kubelet's root directory and fake runtime socket).
	leftovers []string
}

// pids are the agent's processes (nil for no agent).
func (p *agentProc) pids() []int {
	if p == nil {
		return nil
	}
	out := make([]int, len(p.procs))
	for i, c := range p.procs {
		out[i] = c.cmd.Process.Pid
	}
	return out
}

// statusChangesMetric is the fleet agent's count of statuses that changed its status
// manager's cache (status.Observer's OnChange, exported by status/promobserver).
const statusChangesMetric = "podstatus_status_changes_total"

// statusChanges reads statusChangesMetric from the agent; ok is false for an agent
// without it.
func (p *agentProc) statusChanges(ctx context.Context) (n float64, ok bool, err error) {
	if p == nil || p.metricsURL == "" {
		return 0, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.metricsURL, nil)
	if err != nil {
		return 0, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false, fmt.Errorf("reading the agent's metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, false, fmt.Errorf("reading the agent's metrics: %w", err)
	}
	for line := range strings.Lines(string(body)) {
		if rest, found := strings.CutPrefix(line, statusChangesMetric+" "); found {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				return 0, false, fmt.Errorf("agent metric %s: %w", statusChangesMetric, err)
			}
			return v, true, nil
		}
	}
	return 0, false, fmt.Errorf("the agent's %s has no %s", p.metricsURL, statusChangesMetric)
}

// freeLoopbackAddr returns a loopback address with a port nobody listens on now.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a port for the agent's metrics: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// agentCommand returns the command line of an agent of kind against kubeconfig.
// For the fleet agent it also returns the URL of its metrics.
func (r *runner) agentCommand(kind string) (argv []string, metricsURL string, err error) {
	switch kind {
	case AgentFleet:
		bin, err := r.fleetBinary()
		if err != nil {
			return nil, "", err
		}
		args := []string{bin,
			"--kubeconfig=" + r.cfg.Kubeconfig,
			"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation,
			"--profile=" + r.cfg.Profile,
		}
		if !slices.ContainsFunc(r.cfg.AgentArgs, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "metrics-addr") }) {
			addr, err := freeLoopbackAddr()
			if err != nil {
				return nil, "", err
			}
			args = append(args, "--metrics-addr="+addr)
			metricsURL = "http://" + addr + "/metrics"
		}
		return append(args, r.cfg.AgentArgs...), metricsURL, nil
	case AgentKWOK:
		bin := r.cfg.KWOKBin
		if bin == "" {
			p, err := exec.LookPath("kwok")
			if err != nil {
				return nil, "", fmt.Errorf("kwok is not on PATH (install it with `go install sigs.k8s.io/kwok/cmd/kwok@v0.8.0`, or pass --kwok-bin): %w", err)
			}
			bin = p
		}
		stages := r.cfg.KWOKStages
		if stages == "" {
			stages = filepath.Join(r.tmp, "kwok-fast-stages.yaml")
			if err := os.WriteFile(stages, KWOKFastStages, 0o644); err != nil {
				return nil, "", fmt.Errorf("writing KWOK stages: %w", err)
			}
		}
		// The flags kwokctl's binary runtime passes, without its TLS and kubelet-server
		// flags, with the annotation selector instead of --manage-all-nodes.
		args := []string{bin,
			"--kubeconfig=" + r.cfg.Kubeconfig,
			"--config=" + stages,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation,
			"--node-lease-duration-seconds=40",
			"--node-ip=127.0.0.1",
			"--node-name=localhost",
		}
		return append(args, r.cfg.AgentArgs...), "", nil
	}
	return nil, "", fmt.Errorf("unknown agent %q", kind)
}

// fleetBinary returns Config.AgentBin, or builds examples/fleet/cmd/fleet once.
func (r *runner) fleetBinary() (string, error) {
	if r.cfg.AgentBin != "" {
		return r.cfg.AgentBin, nil
	}
	if r.fleetBin != "" {
		return r.fleetBin, nil
	}
	src := r.cfg.AgentSource
	if src == "" {
		var err error
		if src, err = findFleetModule(); err != nil {
			return "", err
		}
	}
	out := filepath.Join(r.tmp, "fleet")
	r.logf("building the fleet agent: go build -o %s ./cmd/fleet (in %s)", out, src)
	cmd := exec.Command("go", "build", "-o", out, "./cmd/fleet")
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the fleet agent in %s: %w\n%s", src, err, b)
	}
	r.fleetBin = out
	return out, nil
}

// findFleetModule looks for the examples/fleet module from the working directory up.
func findFleetModule() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		for _, cand := range []string{d, filepath.Join(d, "examples", "fleet")} {
			b, err := os.ReadFile(filepath.Join(cand, "go.mod"))
			if err == nil && strings.HasPrefix(string(b), "module github.com/podstatus/podstatus/examples/fleet\n") {
				return cand, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("cannot find the examples/fleet module from %s; pass --agent-bin or --agent-src", dir)
		}
	}
}

// startAgent starts an agent of kind (for kubemark, one hollow kubelet per name of
// nodes), its output going to log files in the bench's temporary directory.
func (r *runner) startAgent(kind string, run int, nodes []string) (*agentProc, error) {
	if kind == AgentKubemark {
		return r.startKubemark(run, nodes)
	}
	argv, metricsURL, err := r.agentCommand(kind)
	if err != nil {
		return nil, err
	}
	c, err := r.startProcess(kind, argv, filepath.Join(r.tmp, fmt.Sprintf("%s-run%d.log", kind, run)))
	if err != nil {
		return nil, err
	}
	return &agentProc{kind: kind, procs: []*childProc{c}, metricsURL: metricsURL}, nil
}

// startProcess starts argv in a process group of its own, its output going to logPath.
func (r *runner) startProcess(name string, argv []string, logPath string) (*childProc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("agent log: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &childProc{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		logf.Close()
		close(c.exited)
	}()
	r.logf("started %s (pid %d): %s; log %s", name, cmd.Process.Pid, strings.Join(argv, " "), logPath)
	return c, nil
}

// alive returns an error if a process of the agent has exited.
func (p *agentProc) alive() error {
	for _, c := range p.procs {
		select {
		case <-c.exited:
			return fmt.Errorf("%s exited early (%v); see its log %s", c.name, c.waitErr, c.logPath)
		default:
		}
	}
	return nil
}

// stopGrace is how long stop waits after SIGTERM before SIGKILL.
const stopGrace = 15 * time.Second

// stop sends SIGTERM to the process group of each of the agent's processes, waits up to
// stopGrace for all of them before SIGKILL, then removes what they left behind.
func (p *agentProc) stop() error {
	if p.beforeStop != nil {
		p.beforeStop(p)
	}
	for _, c := range p.procs {
		select {
		case <-c.exited:
		default:
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
		}
	}
	deadline := time.After(stopGrace)
	var errs []error
	for _, c := range p.procs {
		select {
		case <-c.exited:
		case <-deadline:
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
			<-c.exited
			errs = append(errs, fmt.Errorf("%s did not stop within %v of SIGTERM; killed", c.name, stopGrace))
		}
	}
	for _, c := range p.procs {
		for _, path := range c.leftovers {
			if err := os.RemoveAll(path); err != nil {
				errs = append(errs, fmt.Errorf("removing what %s left: %w", c.name, err))
			}
		}
	}
	return errors.Join(errs...)
}
