// Command vkpodsim is a virtual-kubelet node whose pods run in podsim, the simulated
// runtime of podstatus, and get the kubelet v1.37.0's exact statuses through vkstatus.
// It registers the node on any API server (from this directory, a module of its own):
//
//	go run . --kubeconfig ~/.kube/config
//	go run . --kubeconfig ~/.kube/config --write-path stock   # virtual-kubelet's own PUT
//
// Pods must tolerate the node's taint (virtual-kubelet.io/provider=podsim:NoSchedule)
// unless --taint=false. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
	vkslog "github.com/virtual-kubelet/virtual-kubelet/log/slog"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/vkstatus/examples/vkpodsim/provider"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vkpodsim:", err)
		os.Exit(1)
	}
}

// flags are the command line, checked by check before anything connects.
type flags struct {
	kubeconfig, nodeName, writePath, profile, podCIDR, nodeIP string
	seed                                                      uint64
	workers                                                   int
	taint                                                     bool
}

func parse(args []string, out io.Writer) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("vkpodsim", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.nodeName, "node-name", "vkpodsim", "name of the node to register")
	fs.StringVar(&f.writePath, "write-path", "vkstatus", `status write path: "vkstatus" (status.Manager, one PATCH per change) or "stock" (virtual-kubelet's PUT)`)
	fs.StringVar(&f.profile, "profile", "default", `simulated runtime timing: "default" or "fast"`)
	fs.StringVar(&f.podCIDR, "pod-cidr", "10.244.0.0/24", "range the pod IPs come from")
	fs.StringVar(&f.nodeIP, "node-ip", "10.0.0.1", "the node's InternalIP")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the simulated runtime (runs are reproducible)")
	fs.IntVar(&f.workers, "workers", 4, "pods virtual-kubelet syncs at once")
	fs.BoolVar(&f.taint, "taint", true, "taint the node virtual-kubelet.io/provider=podsim:NoSchedule")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return f, check(f)
}

// check refuses bad flags up front, naming each.
func check(f flags) error {
	var errs []string
	if msgs := validation.IsDNS1123Subdomain(f.nodeName); len(msgs) > 0 {
		errs = append(errs, fmt.Sprintf("--node-name %q: %s", f.nodeName, strings.Join(msgs, "; ")))
	}
	if f.writePath != "vkstatus" && f.writePath != "stock" {
		errs = append(errs, fmt.Sprintf(`--write-path %q: must be "vkstatus" or "stock"`, f.writePath))
	}
	if _, err := podsim.Named(f.profile); err != nil {
		errs = append(errs, fmt.Sprintf("--profile %q: %v", f.profile, err))
	}
	if _, err := podsim.NewIPAM(f.podCIDR); err != nil {
		errs = append(errs, fmt.Sprintf("--pod-cidr %q: %v", f.podCIDR, err))
	}
	if net.ParseIP(f.nodeIP) == nil {
		errs = append(errs, fmt.Sprintf("--node-ip %q: not an IP address", f.nodeIP))
	}
	if f.workers < 1 {
		errs = append(errs, fmt.Sprintf("--workers %d: must be at least 1", f.workers))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	f, err := parse(args, out)
	if err != nil {
		return err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.kubeconfig != "" {
		rules.ExplicitPath = f.kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	profile, _ := podsim.Named(f.profile) // checked
	n, err := provider.NewNode(provider.NodeConfig{
		Client: cs, Name: f.nodeName, PodCIDR: f.podCIDR, NodeIP: f.nodeIP, Profile: profile, Seed: f.seed,
		Stock: f.writePath == "stock", Workers: f.workers, Taint: f.taint, FieldManager: "vkpodsim",
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "vkpodsim: node %s, write path %s\n", f.nodeName, f.writePath)
	// virtual-kubelet logs through the logger in ctx and through none by default: without
	// one, a server that is down is retried in silence. Info and above go to stderr.
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx = vklog.WithLogger(ctx, vkslog.FromSlog(logger))
	// virtual-kubelet retries a node it cannot register without a word at the default
	// level: wait for the server here, saying so at error level, with back-off.
	if err := awaitServer(ctx, cs, logger); err != nil {
		return nil // interrupted while waiting
	}
	return n.Run(ctx)
}

// awaitServer returns once the API server answers (its version), retrying every 1 s
// doubling to 30 s (apimachinery's wait.Backoff). The first failure is logged at error
// level with what to check, the next ones at debug level (a server down for an hour must
// not fill the log), and the recovery once. It returns ctx's error if ctx ends first.
func awaitServer(ctx context.Context, cs kubernetes.Interface, logger *slog.Logger) error {
	failures := 0
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Cap: 30 * time.Second, Steps: math.MaxInt32}
	return wait.ExponentialBackoffWithContext(ctx, backoff, func(context.Context) (bool, error) {
		_, err := cs.Discovery().ServerVersion()
		switch {
		case err == nil && failures > 0:
			logger.Info("API server answered", "failures", failures)
		case err == nil:
		case failures == 0:
			logger.Error("API server unreachable; retrying with backoff (up to every 30s) until it answers: check that it is up and reachable at the kubeconfig's address, and the kubeconfig's credentials", "err", err)
		default:
			logger.Debug("API server still unreachable; retrying", "err", err, "failures", failures+1)
		}
		if err != nil {
			failures++
		}
		return err == nil, nil
	})
}
