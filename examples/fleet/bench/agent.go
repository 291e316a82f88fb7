package bench

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// agentProc is an agent process the bench started.
type agentProc struct {
	kind    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error
}

// agentCommand returns the command line of an agent of kind against kubeconfig.
func (r *runner) agentCommand(kind string) ([]string, error) {
	switch kind {
	case AgentFleet:
		bin, err := r.fleetBinary()
		if err != nil {
			return nil, err
		}
		args := []string{bin,
			"--kubeconfig=" + r.cfg.Kubeconfig,
			"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation,
			"--profile=" + r.cfg.Profile,
		}
		return append(args, r.cfg.AgentArgs...), nil
	case AgentKWOK:
		bin := r.cfg.KWOKBin
		if bin == "" {
			p, err := exec.LookPath("kwok")
			if err != nil {
				return nil, fmt.Errorf("bench: kwok is not on PATH (install it with `go install sigs.k8s.io/kwok/cmd/kwok@v0.8.0`, or pass --kwok-bin): %w", err)
			}
			bin = p
		}
		stages := r.cfg.KWOKStages
		if stages == "" {
			stages = filepath.Join(r.tmp, "kwok-fast-stages.yaml")
			if err := os.WriteFile(stages, KWOKFastStages, 0o644); err != nil {
				return nil, fmt.Errorf("bench: writing KWOK stages: %w", err)
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
		return append(args, r.cfg.AgentArgs...), nil
	}
	return nil, fmt.Errorf("bench: unknown agent %q", kind)
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
		return "", fmt.Errorf("bench: building the fleet agent in %s: %w\n%s", src, err, b)
	}
	r.fleetBin = out
	return out, nil
}

// findFleetModule looks for the examples/fleet module from the working directory up.
func findFleetModule() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		for _, cand := range []string{d, filepath.Join(d, "examples", "fleet")} {
			b, err := os.ReadFile(filepath.Join(cand, "go.mod"))
			if err == nil && strings.HasPrefix(string(b), "module github.com/podstatus/podstatus/examples/fleet\n") {
				return cand, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("bench: cannot find the examples/fleet module from %s; pass --agent-bin or --agent-src", dir)
		}
	}
}

// startAgent starts an agent of kind, its output going to a log file in the bench's
// temporary directory.
func (r *runner) startAgent(kind string, run int) (*agentProc, error) {
	argv, err := r.agentCommand(kind)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(r.tmp, fmt.Sprintf("%s-run%d.log", kind, run))
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("bench: agent log: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("bench: starting %s: %w", kind, err)
	}
	p := &agentProc{kind: kind, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	r.logf("started %s (pid %d): %s; log %s", kind, cmd.Process.Pid, strings.Join(argv, " "), logPath)
	return p, nil
}

// alive returns an error if the agent has exited.
func (p *agentProc) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("bench: %s exited early (%v); see its log %s", p.kind, p.waitErr, p.logPath)
	default:
		return nil
	}
}

// stop sends SIGTERM to the agent's process group and waits up to 15 s before SIGKILL.
func (p *agentProc) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.exited
		return errors.New("bench: agent did not stop within 15 s of SIGTERM; killed")
	}
}
