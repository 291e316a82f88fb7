// Package cluster runs a whole Kubernetes v1.37.0 control plane in one process: etcd and
// kube-apiserver (package apiserver), kube-scheduler and kube-controller-manager, all
// compiled in from k8s.io/kubernetes. With podstatus' simulated kubelet (simkubelet) as
// its nodes it is a cluster on which a Deployment, a Job, a drain or a node's loss play
// out through the real controllers: examples/cluster is the command, and this package's
// tests are end-to-end scenarios run on it.
//
// The scheduler and the controller manager are started from their app packages
// (k8s.io/kubernetes/cmd/kube-scheduler/app, cmd/kube-controller-manager/app), not from
// their app/testing test servers: those take a *testing.T (a program has none) and listen
// on every interface (":0"), where everything here stays on 127.0.0.1. The build is the
// same either way (the test servers import the app packages). Both run without leader
// election and without an HTTPS endpoint of their own (--secure-port=0): nothing they
// serve is needed, and no port is opened but the API server's and etcd's, which the
// kernel picks. The controller manager reaches the API server as the super-user (no
// --use-service-account-credentials), runs Controllers and nothing else.
//
// The process-wide state of upstream code (klog, the default feature gate and component
// registry) is shared by the components: one control plane per process.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/configz"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedoptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
)

// DefaultControllers are the kube-controller-manager controllers a ControlPlane runs when
// Options.Controllers is empty: the workload controllers (Deployment, ReplicaSet,
// ReplicationController, StatefulSet, DaemonSet, Job, CronJob, TTL after finished),
// Service endpoints (EndpointSlice, its mirroring, Endpoints), PodDisruptionBudget status
// (disruption), object life cycle (garbage collector, namespace deletion, pod garbage
// collection, resource quota), the default ServiceAccount of every namespace, nodes
// (node lifecycle: Unknown condition, taints, marking pods not ready; taint eviction;
// the TTL annotation) and the aggregated ClusterRoles (admin, edit, view).
//
// Left out: the controllers of a cloud (service load balancers, routes), node IPAM (the
// simulated nodes bring their own pod CIDRs), certificate signing (no signing key is
// configured), the ServiceAccount token and root CA publisher controllers (the pods run
// no process that would read a token), persistent volumes, the horizontal pod autoscaler
// (no metrics API), and the alpha and beta controllers that are off by default.
var DefaultControllers = []string{
	"deployment-controller",
	"replicaset-controller",
	"replicationcontroller-controller",
	"statefulset-controller",
	"daemonset-controller",
	"job-controller",
	"cronjob-controller",
	"ttl-after-finished-controller",
	"endpointslice-controller",
	"endpointslice-mirroring-controller",
	"endpoints-controller",
	"disruption-controller",
	"garbage-collector-controller",
	"namespace-controller",
	"pod-garbage-collector-controller",
	"resourcequota-controller",
	"serviceaccount-controller",
	"node-lifecycle-controller",
	"taint-eviction-controller",
	"ttl-controller",
	"clusterrole-aggregation-controller",
}

// Options configures Start.
type Options struct {
	// Log receives the components' log lines (etcd's and the API server's test harness;
	// klog's output is the caller's to route). Nil discards them.
	Log io.Writer
	// Progress, when non-nil, is called with a line as each component is up.
	Progress func(line string)
	// APIServerFlags are extra kube-apiserver flags (apiserver.WithFlags).
	APIServerFlags []string
	// SchedulerFlags and ControllerManagerFlags are extra flags of kube-scheduler and
	// kube-controller-manager, after those Start sets (so they win), for example
	// "--node-monitor-grace-period=10s".
	SchedulerFlags, ControllerManagerFlags []string
	// Controllers are the controller manager's controllers; default DefaultControllers.
	Controllers []string
	// KubeconfigDir is where Start writes the kubeconfig the scheduler and the controller
	// manager read (the super-user's); default a temporary directory removed by stop.
	KubeconfigDir string
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	// APIServer is the kube-apiserver and its etcd.
	APIServer *apiserver.Server
	// Config reaches the API server as the super-user (APIServer.Config).
	Config *rest.Config
	// Client is a clientset built from Config.
	Client kubernetes.Interface
	// Kubeconfig is the path of a kubeconfig file for Config.
	Kubeconfig string
	// Times says how long each component took to be up.
	Times StartTimes
}

// StartTimes are the start times of a ControlPlane's components, each measured from the
// moment Start began it.
type StartTimes struct {
	// APIServer: etcd and kube-apiserver, until /healthz was ok and the default namespace
	// existed.
	APIServer time.Duration
	// Scheduler: until its informers were synced and it was scheduling.
	Scheduler time.Duration
	// ControllerManager: until the ServiceAccount controller had created the default
	// ServiceAccount of the default namespace (proof that the controllers run).
	ControllerManager time.Duration
	// Total is Start's whole time.
	Total time.Duration
}

// Start starts etcd, kube-apiserver, kube-scheduler and kube-controller-manager in this
// process and returns once all of them work. stop stops them (the controller manager,
// the scheduler, then the API server and etcd) and removes their temporary files; it is
// safe to call more than once. On error, what was started is already stopped.
func Start(ctx context.Context, opts Options) (cp *ControlPlane, stop func(), err error) {
	begin := time.Now()
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	var stops []func()
	stopAll := sync.OnceFunc(func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	})
	defer func() {
		if err != nil {
			stopAll()
			cp, stop = nil, nil
		}
	}()

	progress("starting etcd and kube-apiserver")
	srv, stopAPI, err := apiserver.StartServer(ctx, opts.Log, apiserver.WithFlags(opts.APIServerFlags...))
	if err != nil {
		return nil, nil, err
	}
	stops = append(stops, stopAPI)
	cp = &ControlPlane{APIServer: srv, Config: srv.Config, Client: srv.Client}
	cp.Times.APIServer = srv.StartupTime
	progress(fmt.Sprintf("kube-apiserver ready at %s in %v", srv.Config.Host, srv.StartupTime.Round(time.Millisecond)))

	dir := opts.KubeconfigDir
	if dir == "" {
		dir, err = os.MkdirTemp("", "podstatus-cluster-")
		if err != nil {
			return nil, nil, fmt.Errorf("cluster: %w", err)
		}
		stops = append(stops, func() { os.RemoveAll(dir) })
	}
	cp.Kubeconfig = filepath.Join(dir, "control-plane.kubeconfig")
	if err := apiserver.WriteKubeconfig(cp.Kubeconfig, srv.Config); err != nil {
		return nil, nil, fmt.Errorf("cluster: %w", err)
	}
	if opts.KubeconfigDir != "" {
		stops = append(stops, func() { os.Remove(cp.Kubeconfig) })
	}

	t := time.Now()
	progress("starting kube-scheduler")
	stopSched, err := startScheduler(ctx, cp.Kubeconfig, opts.SchedulerFlags)
	if err != nil {
		return nil, nil, err
	}
	stops = append(stops, stopSched)
	cp.Times.Scheduler = time.Since(t)
	progress(fmt.Sprintf("kube-scheduler running in %v", cp.Times.Scheduler.Round(time.Millisecond)))

	t = time.Now()
	controllers := opts.Controllers
	if len(controllers) == 0 {
		controllers = DefaultControllers
	}
	progress(fmt.Sprintf("starting kube-controller-manager (%d controllers)", len(controllers)))
	stopKCM, err := startControllerManager(ctx, cp.Kubeconfig, controllers, opts.ControllerManagerFlags)
	if err != nil {
		return nil, nil, err
	}
	stops = append(stops, stopKCM)
	if err := waitDefaultServiceAccount(ctx, srv.Client); err != nil {
		return nil, nil, err
	}
	cp.Times.ControllerManager = time.Since(t)
	progress(fmt.Sprintf("kube-controller-manager running in %v", cp.Times.ControllerManager.Round(time.Millisecond)))
	cp.Times.Total = time.Since(begin)
	return cp, stopAll, nil
}

// StartForTest starts a control plane for the length of a test (its cleanup stops it) and
// fails the test if it cannot start.
func StartForTest(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	if opts.Progress == nil {
		opts.Progress = func(line string) { t.Log("cluster: " + line) }
	}
	cp, stop, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	t.Cleanup(stop)
	return cp
}

// runComponent runs run in a goroutine until the returned stop cancels its context, and
// stop waits for it to return (at most 30 s: a component that does not stop is reported
// on stderr, not waited for forever).
func runComponent(ctx context.Context, name string, run func(ctx context.Context) error) (stop func(), done <-chan error) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	errc := make(chan error, 1)
	go func() { errc <- run(ctx) }()
	var once sync.Once
	stopped := make(chan struct{})
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-stopped:
			case <-time.After(30 * time.Second):
				fmt.Fprintf(os.Stderr, "cluster: %s did not stop within 30 s\n", name)
			}
		})
	}
	out := make(chan error, 1)
	go func() {
		err := <-errc
		close(stopped)
		out <- err
	}()
	return stop, out
}

// parseFlags parses args into the named flag sets of a component, as its command would.
func parseFlags(name string, sets map[string]*pflag.FlagSet, args []string) error {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, s := range sets {
		fs.AddFlagSet(s)
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("cluster: %s flags %q: %w", name, args, err)
	}
	return nil
}

func startScheduler(ctx context.Context, kubeconfig string, extra []string) (func(), error) {
	opts := schedoptions.NewOptions()
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	}, extra...)
	if err := parseFlags("kube-scheduler", opts.Flags.FlagSets, args); err != nil {
		return nil, err
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, fmt.Errorf("cluster: kube-scheduler feature gates: %w", err)
	}
	cc, sched, err := schedapp.Setup(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: set up kube-scheduler: %w", err)
	}
	stop, done := runComponent(ctx, "kube-scheduler", func(ctx context.Context) error {
		// Run registers the process-wide configz entry its test server deletes at
		// tear-down; so must we, for a later control plane in this process.
		defer configz.Delete("componentconfig")
		return schedapp.Run(ctx, cc, sched)
	})
	// Run starts the informers, waits for their caches, then schedules: once the pod
	// informer has synced the scheduler acts on every pod.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, fmt.Errorf("kube-scheduler exited: %v", err)
		default:
		}
		return cc.InformerFactory.Core().V1().Pods().Informer().HasSynced(), nil
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("cluster: start kube-scheduler: %w", err)
	}
	return stop, nil
}

func startControllerManager(ctx context.Context, kubeconfig string, controllers, extra []string) (func(), error) {
	s, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return nil, fmt.Errorf("cluster: kube-controller-manager options: %w", err)
	}
	all, disabled, aliases := kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases()
	named := s.Flags(all, disabled, aliases)
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers=" + strings.Join(controllers, ","),
	}, extra...)
	if err := parseFlags("kube-controller-manager", named.FlagSets, args); err != nil {
		return nil, err
	}
	s.ParsedFlags = &named
	if err := s.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, fmt.Errorf("cluster: kube-controller-manager feature gates: %w", err)
	}
	c, err := s.Config(ctx, all, disabled, aliases)
	if err != nil {
		return nil, fmt.Errorf("cluster: configure kube-controller-manager: %w", err)
	}
	completed := c.Complete()
	stop, done := runComponent(ctx, "kube-controller-manager", func(ctx context.Context) error {
		defer configz.Delete(kcmapp.ConfigzName)
		return kcmapp.Run(ctx, completed)
	})
	go func() {
		// An early exit (a controller that cannot start) is an error the caller sees
		// through waitDefaultServiceAccount timing out; say why on stderr.
		if err := <-done; err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "cluster: kube-controller-manager exited: %v\n", err)
		}
	}()
	return stop, nil
}

// waitDefaultServiceAccount waits (at most a minute) for the ServiceAccount controller to
// create the "default" ServiceAccount of the default namespace.
func waitDefaultServiceAccount(ctx context.Context, c kubernetes.Interface) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("cluster: kube-controller-manager: no default ServiceAccount in namespace default: %w", err)
	}
	return nil
}

// NodesReady waits (until ctx is done) for n nodes that the scheduler will use: Ready=True
// and without the node.kubernetes.io/not-ready or unreachable taint. The node lifecycle
// controller removes those taints on its first pass after it sees the node Ready (every
// --node-monitor-period); until then the scheduler puts every pod on the nodes it already
// untainted, so a workload started on Ready nodes alone could land on one of three.
func NodesReady(ctx context.Context, c kubernetes.Interface, n int) error {
	var last, tainted int
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		last, tainted = 0, 0
		for _, node := range nodes.Items {
			if !nodeReady(&node) {
				continue
			}
			if lifecycleTainted(&node) {
				tainted++
				continue
			}
			last++
		}
		return last >= n, nil
	})
	if err != nil {
		return fmt.Errorf("cluster: %d of %d nodes Ready and untainted (%d more Ready, still tainted not-ready or unreachable): %w", last, n, tainted, errors.Join(err, ctx.Err()))
	}
	return nil
}

// nodeReady reports whether node's Ready condition is True.
func nodeReady(node *v1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == v1.NodeReady {
			return cond.Status == v1.ConditionTrue
		}
	}
	return false
}

// lifecycleTainted reports whether node carries a taint the node lifecycle controller
// keeps on nodes that are not Ready.
func lifecycleTainted(node *v1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == v1.TaintNodeNotReady || t.Key == v1.TaintNodeUnreachable {
			return true
		}
	}
	return false
}

// ValidateFlags reports the extra component flags of opts that their components would
// refuse (an unknown flag, a bad value) and unknown controllers, without starting
// anything: a program checks its command line with it before it starts a control plane.
func ValidateFlags(opts Options) error {
	if err := parseFlags("kube-scheduler", schedoptions.NewOptions().Flags.FlagSets, opts.SchedulerFlags); err != nil {
		return err
	}
	s, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return fmt.Errorf("cluster: kube-controller-manager options: %w", err)
	}
	all, disabled, aliases := kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases()
	named := s.Flags(all, disabled, aliases)
	if err := parseFlags("kube-controller-manager", named.FlagSets, opts.ControllerManagerFlags); err != nil {
		return err
	}
	known := map[string]bool{"*": true}
	for _, c := range all {
		known[c] = true
	}
	for a := range aliases {
		known[a] = true
	}
	for _, c := range opts.Controllers {
		if !known[strings.TrimPrefix(c, "-")] {
			return fmt.Errorf("cluster: unknown kube-controller-manager controller %q", c)
		}
	}
	return nil
}
