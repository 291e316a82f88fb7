package kube

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/podstatus/podstatus/examples/simnode/sim"
)

// cleanupTimeout bounds Cleanup after the run, which also runs after SIGINT.
const cleanupTimeout = 30 * time.Second

// Env is what Command takes from its surroundings; the zero value is the real one.
type Env struct {
	// Connect returns a clientset for the kubeconfig file. Nil: clientcmd and client-go.
	Connect func(kubeconfig string) (kubernetes.Interface, error)
	// Now is the wall-clock time the simulated clock starts at. Zero: time.Now().
	Now time.Time
}

// Command is simnode-kube: the simulated node of examples/simnode, with the same flags,
// checks and output (sim.Flags), run against the cluster of --kubeconfig (else
// $KUBECONFIG) in a namespace and on a Node named after the seed, which it creates. The
// simulated clock starts at the wall-clock time of the start, so that the condition
// times follow the server's creationTimestamps, and advances one simulated second per
// step as fast as it can, or at -speed simulated seconds per real second (-speed 1 keeps
// it on the wall clock). When the run ends, fails or ctx is cancelled (SIGINT), it
// deletes the pods it created and the namespace and node, if it created them, unless
// -keep. Bad flags are refused before anything connects, with an error that names the
// flag and for which IsUsage is true.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer, env Env) error {
	fs := flag.NewFlagSet("simnode-kube", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "path to the kubeconfig of the cluster to run against (required, or $KUBECONFIG)")
	keep := fs.Bool("keep", false, "leave the pods, the namespace and the node for inspection instead of deleting them at the end")
	qps := fs.Float64("qps", DefaultQPS, "client-side requests per second to the API server (client-go's default, 5, made a 1-second run take minutes); 0: no client-side limit")
	burst := fs.Int("burst", DefaultBurst, "client-side burst above --qps")
	progress := fs.Int("progress", 10, "print a progress line on stderr every this many simulated seconds; 0: never")
	var f sim.Flags
	f.Register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: simnode-kube --kubeconfig FILE [flags]\n\nRuns the simulated node of examples/simnode against a cluster, in a namespace and on a node it creates\n"+
			"(and deletes at the end, unless -keep). Use a test cluster: nothing else may run a kubelet for that node.\n\n")
		fs.PrintDefaults()
	}
	if err := sim.Parse(fs, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if err := f.Check(fs.Args()); err != nil {
		return usageError{err}
	}
	switch {
	case *qps < 0:
		return usageError{fmt.Errorf("--qps %v: want 0 (no limit) or more", *qps)}
	case *burst < 1:
		return usageError{fmt.Errorf("--burst %d: want at least 1", *burst)}
	case *progress < 0:
		return usageError{fmt.Errorf("--progress %d: want 0 (never) or more", *progress)}
	}
	if *kubeconfig == "" {
		return usageError{errors.New("--kubeconfig is required (or set KUBECONFIG)")}
	}
	connect := env.Connect
	if connect == nil {
		connect = func(path string) (kubernetes.Interface, error) {
			cfg, err := restConfig(path, float32(*qps), *burst)
			if err != nil {
				return nil, err
			}
			return kubernetes.NewForConfig(cfg)
		}
	}
	cs, err := connect(*kubeconfig)
	if err != nil {
		return err
	}
	now := env.Now
	if now.IsZero() {
		now = time.Now()
	}
	cfg := f.Config(ctx)
	cfg.Start = now.UTC().Truncate(time.Second) // the API server stores whole seconds
	if *progress > 0 {
		pace := cfg.Tick
		cfg.Tick = func(sec int) error {
			if sec > 0 && sec%*progress == 0 || sec == cfg.Seconds {
				fmt.Fprintf(stderr, "simnode-kube: %d/%d simulated seconds\n", sec, cfg.Seconds)
			}
			if pace != nil {
				return pace(sec)
			}
			return nil
		}
	}

	if err := awaitNamespaceGone(ctx, cs, cfg.Namespace, stderr); err != nil {
		return err
	}
	cluster := New(cs)
	err = cluster.Prepare(ctx, cfg.Namespace, cfg.Node)
	var rep *sim.Report
	if err == nil {
		rep, err = sim.Run(ctx, cluster, cfg)
	}
	if !*keep {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		what := cluster.created()
		if cerr := cluster.Cleanup(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("clean up: %w", cerr))
		} else {
			fmt.Fprintf(stderr, "simnode-kube: deleted %s (-keep leaves them)\n", what)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		return err
	}
	return f.Write(stdout, rep)
}

// DefaultQPS and DefaultBurst are the --qps and --burst defaults: high enough that the
// client does not pace a run against a local test server (a run of the default 7 pods
// sends about 1,300 requests), low enough not to flood a shared one.
const (
	DefaultQPS   = 500
	DefaultBurst = 1000
)

// restConfig loads the kubeconfig at path with the client-side rate limit qps (0: none)
// and burst.
func restConfig(path string, qps float32, burst int) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = qps, burst
	if qps == 0 {
		cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	}
	return cfg, nil
}

// namespaceWait bounds the wait for the namespace of an earlier run with the same seed
// to be deleted.
const namespaceWait = 30 * time.Second

// awaitNamespaceGone waits, saying so on stderr, while namespace is being deleted (by an
// earlier run's clean-up: pods cannot be created in it), up to namespaceWait. The
// namespace is named after the seed, so that a seed gives the same pod timings on every
// run (podsim draws them from the pod's namespace and name).
func awaitNamespaceGone(ctx context.Context, cs kubernetes.Interface, namespace string, stderr io.Writer) error {
	terminating := func() (bool, error) {
		ns, err := cs.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("get namespace %s: %w", namespace, err)
		}
		return ns.DeletionTimestamp != nil, nil
	}
	t, err := terminating()
	if err != nil || !t {
		return err
	}
	fmt.Fprintf(stderr, "simnode-kube: namespace %s is still being deleted (an earlier run's clean-up); waiting up to %v\n", namespace, namespaceWait)
	err = wait.PollUntilContextTimeout(ctx, time.Second, namespaceWait, false, func(context.Context) (bool, error) {
		t, err := terminating()
		return !t, err
	})
	if err != nil {
		return fmt.Errorf("namespace %s is still being deleted after %v (a server without a namespace controller, such as internal/upstream's cmd/apiserver, never deletes it): run with another -seed: %w",
			namespace, namespaceWait, err)
	}
	return nil
}

// usageError is a bad command line: nothing was run.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// IsUsage reports whether Command's err is a bad command line (exit code 2, as
// examples/simnode) rather than a failed run (exit code 1).
func IsUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}
