// Command cluster runs a whole Kubernetes v1.37.0 cluster in one process, in one command:
// etcd, kube-apiserver, kube-scheduler and kube-controller-manager (compiled in from
// k8s.io/kubernetes; package internal/upstream/cluster), and --nodes simulated nodes
// (simkubelet: the kubelet's node and pod statuses without containers). It writes a
// kubeconfig for kubectl and serves until SIGINT or SIGTERM, then stops everything and
// removes its files.
//
//	cd examples/cluster && go run . --nodes 3
//	export KUBECONFIG=$PWD/podstatus-cluster.kubeconfig
//	kubectl create deployment web --image=x --replicas=20
//
// See README.md for the flags, what works and what does not.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/internal/upstream/cluster"
	"github.com/podstatus/podstatus/simkubelet"
)

// exitUsage is the exit code of a command line refused before anything starts.
const exitUsage = 2

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is the parsed command line.
type config struct {
	nodes          int
	nodePrefix     string
	profile        string
	maxPods        int
	kubeconfigOut  string
	dataDir        string
	verbose        bool
	apiserverFlags stringList
	schedFlags     stringList
	kcmFlags       stringList
	controllers    string
}

// usageError is a command line refused before anything starts (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func parse(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	fs.IntVar(&c.nodes, "nodes", 3, "how many simulated nodes to run (1 to 5000)")
	fs.StringVar(&c.nodePrefix, "node-name-prefix", "node-", "the nodes are named `prefix`0, prefix1, ...")
	fs.StringVar(&c.profile, "profile", "default", "how the simulated runtime runs pods: \"default\" (sandbox, image pull and start take a second or two, probes run on their schedule) or \"fast\" (no delays)")
	fs.IntVar(&c.maxPods, "max-pods", simkubelet.DefaultMaxPods, "pod capacity of each node, as the kubelet's --max-pods")
	fs.StringVar(&c.kubeconfigOut, "kubeconfig-out", "podstatus-cluster.kubeconfig", "write the super-user's kubeconfig to this `file` (removed when the cluster stops)")
	fs.StringVar(&c.dataDir, "data-dir", "", "keep the cluster's files (etcd, certificates, kubeconfigs) under this `directory` while it runs, locked against a second cluster; default a new temporary directory")
	fs.BoolVar(&c.verbose, "v", false, "print the components' log lines on stderr")
	fs.Var(&c.apiserverFlags, "apiserver-flag", "an extra kube-apiserver `flag`, as --name=value (repeatable)")
	fs.Var(&c.schedFlags, "scheduler-flag", "an extra kube-scheduler `flag`, as --name=value (repeatable)")
	fs.Var(&c.kcmFlags, "controller-manager-flag", "an extra kube-controller-manager `flag`, as --name=value (repeatable)")
	fs.StringVar(&c.controllers, "controllers", "", "comma-separated kube-controller-manager controllers to run instead of the default list (see README.md)")
	if err := fs.Parse(args); err != nil {
		return nil, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("unexpected arguments %q", fs.Args())}
	}
	if c.nodes < 1 || c.nodes > 5000 {
		return nil, usageError{fmt.Sprintf("--nodes=%d: want 1 to 5000", c.nodes)}
	}
	if c.kubeconfigOut == "" {
		return nil, usageError{"--kubeconfig-out: want a file name"}
	}
	if err := c.kubeletOptions(logr.Discard()).Validate(); err != nil {
		var in *podstatus.InputError
		if errors.As(err, &in) {
			return nil, usageError{flagNames(err.Error())}
		}
		return nil, usageError{err.Error()}
	}
	if err := cluster.ValidateFlags(c.clusterOptions()); err != nil {
		return nil, usageError{err.Error()}
	}
	return c, nil
}

// flagNames renames the simkubelet.Options fields in msg to the flags that set them.
func flagNames(msg string) string {
	return strings.NewReplacer(
		"Options.NodeNamePrefix", "--node-name-prefix",
		"Options.Profile", "--profile",
		"Options.MaxPods", "--max-pods",
		"Options.Nodes", "--nodes",
	).Replace(msg)
}

func (c *config) kubeletOptions(log logr.Logger) simkubelet.Options {
	return simkubelet.Options{
		Nodes:            c.nodes,
		NodeNamePrefix:   c.nodePrefix,
		Profile:          c.profile,
		MaxPods:          c.maxPods,
		Logger:           log,
		ProgressInterval: -1,
		ShutdownTimeout:  3 * time.Second,
	}
}

func (c *config) clusterOptions() cluster.Options {
	o := cluster.Options{
		APIServerFlags:         c.apiserverFlags,
		SchedulerFlags:         c.schedFlags,
		ControllerManagerFlags: c.kcmFlags,
	}
	if c.controllers != "" {
		o.Controllers = strings.Split(c.controllers, ",")
	}
	return o
}

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		if ue.msg != flag.ErrHelp.Error() {
			fmt.Fprintf(stderr, "cluster: %s\n", ue.msg)
		} else {
			return 0
		}
		return exitUsage
	}
	if err := serve(c, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "cluster: %v\n", err)
		return 1
	}
	return 0
}

func serve(c *config, stdout, stderr io.Writer) error {
	begin := time.Now()
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	go func() {
		// After the first signal a second one kills the process at once.
		<-ctx.Done()
		stopSignals()
	}()
	// The upstream test harnesses under the API server consult the testing package's
	// flags (testing.Verbose panics before they are parsed).
	testing.Init()
	if err := flag.CommandLine.Parse(nil); err != nil {
		return err
	}
	if err := quietKlog(c.verbose, stderr); err != nil {
		return err
	}

	// The data directory: every temporary directory of the components is made in it
	// (TMPDIR), and a lock file keeps a second cluster out.
	dataDir := c.dataDir
	if dataDir == "" {
		d, err := os.MkdirTemp("", "podstatus-cluster-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dataDir = d
	} else {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return fmt.Errorf("--data-dir: %w", err)
		}
		unlock, err := lockDataDir(dataDir)
		if err != nil {
			return err
		}
		defer unlock()
	}
	if err := os.Setenv("TMPDIR", dataDir); err != nil {
		return err
	}

	progress := func(line string) {
		fmt.Fprintf(stdout, "[%5.1fs] %s\n", time.Since(begin).Seconds(), line)
	}
	opts := c.clusterOptions()
	opts.Progress = progress
	opts.KubeconfigDir = dataDir
	if c.verbose {
		opts.Log = stderr
	}
	cp, stopCP, err := cluster.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		progress("stopping the control plane")
		stopCP()
		progress("stopped; files removed")
	}()

	log := logr.Discard()
	if c.verbose {
		log = funcr.New(func(prefix, args string) { fmt.Fprintln(stderr, "simkubelet:", prefix, args) }, funcr.Options{})
	}
	kopts := c.kubeletOptions(log)
	running := make(chan struct{})
	kopts.OnRunning = func(simkubelet.RunningEvent) { close(running) }
	k, err := simkubelet.New(cp.Config, kopts)
	if err != nil {
		return err
	}
	progress(fmt.Sprintf("starting %d simulated nodes (%s0 .. %s%d, profile %q)", c.nodes, c.nodePrefix, c.nodePrefix, c.nodes-1, c.profile))
	nodeCtx, stopNodes := context.WithCancel(context.WithoutCancel(ctx))
	nodesDone := make(chan error, 1)
	go func() { nodesDone <- k.Run(nodeCtx) }()
	defer func() {
		progress("stopping the simulated nodes")
		stopNodes()
		<-nodesDone
	}()
	select {
	case <-running:
	case err := <-nodesDone:
		return fmt.Errorf("simulated nodes: %w", err)
	case <-ctx.Done():
		return nil
	}
	readyCtx, cancel := context.WithTimeout(ctx, time.Minute)
	err = cluster.NodesReady(readyCtx, cp.Client, c.nodes)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	progress(fmt.Sprintf("%d nodes Ready", c.nodes))

	kubeconfig, err := filepath.Abs(c.kubeconfigOut)
	if err != nil {
		return err
	}
	if err := writeKubeconfig(kubeconfig, cp); err != nil {
		return err
	}
	defer os.Remove(kubeconfig)

	fmt.Fprintf(stdout, "\nKubernetes v1.37.0 cluster ready in %v (pid %d): kube-apiserver at %s, %d simulated nodes\n",
		time.Since(begin).Round(100*time.Millisecond), os.Getpid(), cp.Config.Host, c.nodes)
	fmt.Fprintf(stdout, "  export KUBECONFIG=%s\n", kubeconfig)
	fmt.Fprintf(stdout, "  kubectl get nodes\n")
	fmt.Fprintf(stdout, "  kubectl create deployment web --image=x --replicas=20\n")
	fmt.Fprintf(stdout, "Ctrl-C stops the cluster and removes its files (data in %s).\n", dataDir)

	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout)
		return nil
	case err := <-nodesDone:
		nodesDone <- err // for the deferred stop
		return fmt.Errorf("simulated nodes stopped: %w", err)
	}
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
