// Command fleet is a simulated kubelet for many nodes: it registers or adopts nodes on
// any API server and serves the pods bound to them with the kubelet's exact statuses.
// Each node it creates holds --max-pods pods, 110 by default as the kubelet's: two nodes
// hold 220, and a pod beyond that is rejected (Failed, OutOfpods) as the kubelet rejects
// it. See package github.com/podstatus/podstatus/simkubelet.
//
//	fleet --kubeconfig ~/.kube/config --nodes 10
//	fleet --kubeconfig ~/.kube/config --nodes 2 --max-pods 500   # 1,000 pods' room
//	fleet --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake   # where KWOK ran
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/simkubelet"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr, reexec)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// configFlags maps simkubelet.Options's fields to the flags that set them, so that the
// agent's input errors (which name Go fields, Options.MaxPods) name flags (--max-pods).
var configFlags = strings.NewReplacer(
	"Options.Nodes", "--nodes",
	"Options.NodeNamePrefix", "--node-name-prefix",
	"Options.ManageAllNodes", "--manage-all-nodes",
	"Options.ManageSingleNode", "--manage-single-node",
	"Options.ManageNodesWithLabelSelector", "--manage-nodes-with-label-selector",
	"Options.ManageNodesWithAnnotationSelector", "--manage-nodes-with-annotation-selector",
	"Options.NodeIP", "--node-ip",
	"Options.CIDR", "--cidr",
	"Options.MaxPods", "--max-pods",
	"Options.Profile", "--profile",
	"Options.Workers", "--workers",
	"Options.StatusWorkers", "--status-workers",
	"Options.QPS", "--qps",
	"Options.Burst", "--burst",
	"Options.NodeLeaseDurationSeconds", "--node-lease-duration-seconds",
)

// contentTypes are the values of --kube-api-content-type.
var contentTypes = []string{"application/vnd.kubernetes.protobuf", "application/json"}

// run is the program: it parses args, checks every flag before it connects anywhere
// (an invalid value is an error naming its flag), with --sysmon-awake executes the program
// again with sysmon kept awake (exec: reexec, nil in tests; see sysmon.go), listens on
// --metrics-addr, and
// runs the agent until ctx is done.
func run(ctx context.Context, args []string, stderr io.Writer, exec func(godebug string) error) error {
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg         simkubelet.Options
		kubeconfig  = fs.String("kubeconfig", "", "Path to a kubeconfig file; default: in-cluster config, else $KUBECONFIG")
		master      = fs.String("master", "", "The address of the API server (overrides the kubeconfig)")
		contentType = fs.String("kube-api-content-type", "application/vnd.kubernetes.protobuf", "Content type of requests sent to the API server (application/json or application/vnd.kubernetes.protobuf)")
		metricsAddr = fs.String("metrics-addr", "", "Serve Prometheus metrics (/metrics), health (/healthz, /livez: 200 \"ok\" while the program runs, as the kubelet's /healthz) and readiness (/readyz: 200 once the agent's nodes are registered) at this address, for example 127.0.0.1:8080 (this machine only) or :8080 (every interface, for a Prometheus elsewhere); empty: off. --pprof adds Go's profiles")
		leaseSecs   = fs.Uint("node-lease-duration-seconds", simkubelet.DefaultNodeLeaseDurationSeconds, "Duration of node lease seconds (renewed every quarter of it)")
		userAgent   = fs.String("user-agent", "", "User-Agent of the agent's requests, and so its field manager name on the server (the part before a '/'); default podstatus-fleet. Agents sharing a cluster can tell their writes apart by it")
		cpuProfile  = fs.String("cpuprofile", "", "Write a CPU profile of the whole run to this file")
		memProfile  = fs.String("memprofile", "", "Write a heap profile to this file on exit (after a GC)")
		procs       = fs.Int("procs", defaultProcs, "Threads running Go code at once (GOMAXPROCS). The default, 1, suits an agent that waits on the API server most of the time: it spends less CPU per pod than one thread per core (fewer threads woken for each request and watch event; figures in docs/performance.md). 0: Go's default (one per core, or $GOMAXPROCS). Without this flag, $GOMAXPROCS, if set, wins over the default")
		memoryRatio = fs.Float64("memory-ratio", defaultMemoryRatio, "Keep the agent's memory near this many times the largest live heap it has had: every second it sets Go's soft memory limit (what $GOMEMLIMIT sets) to that, plus 32 MiB. With Go's defaults the heap grows to twice what is live; at 1.5 the collector runs more often only while the live heap is at its largest, and as with Go's defaults while it shrinks (figures in docs/performance.md). 0: off, Go's defaults. Without this flag, $GOGC or $GOMEMLIMIT, if either is set, turns it off")
		sysmonAwake = fs.Bool("sysmon-awake", false, "Opt-in CPU saving, off by default: execute the program again at startup with GODEBUG=schedtrace=2147483647, the Go runtime setting that keeps its monitor thread (sysmon) from parking each time the agent goes idle; the setting is the runtime's scheduler trace with its longest period, not a documented tuning knob. Measured on 2 cores, 10,000 pods on 1 node: 0.63-0.64 instead of 0.76-0.80 ms of CPU per pod while deleting, 0.29-0.30 instead of 0.32-0.36 to Ready, and 0.3% of a core more when idle (examples/fleet/README.md). The trace itself prints one line on stderr each time the machine's uptime passes a multiple of 24.8 days. A schedtrace already in $GODEBUG: left as it is")
		pprofOn     = fs.Bool("pprof", false, "Also serve Go's profiles (/debug/pprof/) at --metrics-addr. Off by default: profiles expose the program's memory and command line, so serve them on a loopback address (--metrics-addr 127.0.0.1:8080)")
		compression = fs.Bool("compression", false, "Ask the API server to gzip its responses, watch streams included. Off by default: next to the API server or on a LAN, compressing every watch event costs the API server and the agent CPU and saves nothing that matters")
	)
	fs.IntVar(&cfg.Nodes, "nodes", 0, "Create (or take over) this many nodes, each with room for --max-pods pods")
	fs.StringVar(&cfg.NodeNamePrefix, "node-name-prefix", simkubelet.DefaultNodeNamePrefix, "Name prefix of the created nodes")
	fs.BoolVar(&cfg.ManageAllNodes, "manage-all-nodes", false, "Manage every node of the cluster")
	fs.StringVar(&cfg.ManageSingleNode, "manage-single-node", "", "Manage the node of this name")
	fs.StringVar(&cfg.ManageNodesWithAnnotationSelector, "manage-nodes-with-annotation-selector", "", "Manage the nodes whose annotations match this selector (for example kwok.x-k8s.io/node=fake)")
	fs.StringVar(&cfg.ManageNodesWithLabelSelector, "manage-nodes-with-label-selector", "", "Manage the nodes whose labels match this selector")
	fs.IntVar(&cfg.MaxPods, "max-pods", simkubelet.DefaultMaxPods, "Pod capacity of each created node (the kubelet's --max-pods, default 110), at least 1; also sizes their pod CIDR. A pod beyond it is rejected as the kubelet rejects it (Failed, reason OutOfpods; the first rejection is logged). For more pods, raise it (--max-pods 1000) or add --nodes")
	fs.StringVar(&cfg.CIDR, "cidr", "", "Pod IP range of the managed nodes without a spec.podCIDR, shared by them (KWOK's --cidr); default: a free /14 the agent picks")
	fs.StringVar(&cfg.NodeIP, "node-ip", "", "InternalIP (an IP address) of the created nodes; default: a distinct address per node")
	fs.StringVar(&cfg.Profile, "profile", "default", "Simulation profile: default or fast")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "Seed of the simulated timings")
	fs.IntVar(&cfg.Workers, "workers", simkubelet.DefaultWorkers, "Pods stepped at once, at least 1")
	fs.IntVar(&cfg.StatusWorkers, "status-workers", simkubelet.DefaultStatusWorkers, "Pod status PATCHes in flight at once, at least 1")
	qps := fs.Float64("qps", 0, "Client-side requests per second; 0: no client-side limit")
	fs.IntVar(&cfg.Burst, "burst", 0, "Client-side burst (with --qps); default 2×qps")
	fs.DurationVar(&cfg.ProgressInterval, "progress-interval", simkubelet.DefaultProgressInterval, "How often a progress line is logged; negative: never")
	// KWOK v0.8.0's other flags. Those that configure KWOK's own kubelet server and
	// tracing, which this agent does not have, are accepted so that a KWOK command line
	// runs unchanged, and named on stderr as ignored; those that would change which
	// statuses are written are refused (kwokRefused).
	for _, name := range kwokIgnored {
		fs.String(name, "", "Accepted for compatibility with KWOK v0.8.0 and ignored (this agent has no kubelet server or tracing); a note on stderr says so")
	}
	for name, why := range kwokRefused {
		fs.String(name, "", "KWOK v0.8.0's flag, refused: "+why)
	}
	klogFlags := textlogger.NewConfig()
	klogFlags.AddFlags(fs) // -v, -vmodule
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err} // the flag package names the flag
	}
	cfg.QPS = float32(*qps)
	cfg.NodeLeaseDurationSeconds = int32(*leaseSecs)
	if err := checkFlags(fs, cfg, *contentType, *leaseSecs, *procs, *memoryRatio); err != nil {
		return err
	}
	if *pprofOn && *metricsAddr == "" {
		return usageError{errors.New("invalid flags: --pprof: Forbidden: serves the profiles at --metrics-addr, which is not set")}
	}
	if ignored := setFlags(fs, kwokIgnored); len(ignored) > 0 {
		fmt.Fprintf(stderr, "fleet: ignoring KWOK's %s: this agent has no kubelet server or tracing to configure\n", strings.Join(ignored, ", "))
	}
	if *sysmonAwake && exec != nil {
		if godebug, ok := sysmonGODEBUG(os.Getenv("GODEBUG")); ok {
			err := exec(godebug) // returns only if it failed
			fmt.Fprintf(stderr, "fleet: --sysmon-awake: running on without it: executing the program again with GODEBUG=%s: %v\n", godebug, err)
		}
	}
	if fromFlag(fs, "procs", os.Getenv("GOMAXPROCS")) && *procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*procs))
	}
	if fromFlag(fs, "memory-ratio", os.Getenv("GOGC")+os.Getenv("GOMEMLIMIT")) && *memoryRatio > 0 {
		defer startPeakLimit(ctx, *memoryRatio)()
	}
	logger := textlogger.NewLogger(klogFlags)
	klog.SetLogger(logger) // client-go's own logs
	cfg.Logger = logger

	// Listen before connecting: a busy or bad address fails the program at once rather
	// than leaving fleet-bench (which reads the metrics) without them.
	var metricsListener net.Listener
	if *metricsAddr != "" {
		l, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr %q: %w", *metricsAddr, err)
		}
		metricsListener = l
		defer l.Close()
	}

	rc, err := restConfig(*kubeconfig, *master)
	if err != nil {
		return err
	}
	rc.ContentType = *contentType
	rc.DisableCompression = !*compression
	if *userAgent != "" {
		rc.UserAgent = *userAgent
	}
	rc.AcceptContentTypes = *contentType + ",application/json"
	if *contentType == "application/json" {
		rc.AcceptContentTypes = "application/json"
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		defer func() {
			if err := writeHeapProfile(*memProfile); err != nil {
				logger.Error(err, "Heap profile not written", "file", *memProfile)
			}
		}()
	}

	if metricsListener != nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		cfg.Registerer = reg
		var running atomic.Bool
		cfg.OnRunning = func(simkubelet.RunningEvent) { running.Store(true) }
		mux := newMux(reg, &running, *pprofOn)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.Serve(metricsListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error(err, "Metrics server stopped", "addr", *metricsAddr)
			}
		}()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
	}
	k, err := simkubelet.New(rc, cfg)
	if err != nil {
		return err // checkFlags has seen every field: only what it cannot see
	}
	return k.Run(ctx)
}

// readyz answers 200 once running is set (the agent's nodes are registered and its pods
// listed), 503 before: a StatefulSet's readiness probe, so that with OrderedReady the next
// replica starts only after this one's nodes, and the addresses they carry, exist.
func readyz(running *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !running.Load() {
			http.Error(w, "starting: the nodes are not registered yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
}

// newMux serves /metrics from reg, /healthz and /livez, /readyz (200 once running is
// set) and, with pprof, Go's profiles under /debug/pprof/.
func newMux(reg *prometheus.Registry, running *atomic.Bool, pprof bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// The kubelet's /healthz (pkg/kubelet/server/server.go installs k8s.io/apiserver's
	// healthz handler: "ok" with 200 while its checks pass, and each check under
	// /healthz/<name>) and /livez: the process serves, so it is alive.
	for _, p := range []string{"/healthz", "/healthz/ping", "/livez", "/livez/ping"} {
		mux.Handle(p, healthz())
	}
	mux.Handle("/readyz", readyz(running))
	if pprof {
		// go tool pprof http://ADDR/debug/pprof/heap
		mux.HandleFunc("/debug/pprof/", httppprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	}
	return mux
}

// healthz answers 200 "ok", as the kubelet's /healthz does while its checks pass (the
// agent has no check that can fail while the process serves: a lost API server is
// retried, not fatal, and shows in /metrics).
func healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = io.WriteString(w, "ok")
	})
}

// checkFlags reports every invalid flag value at once, each named by its flag: the
// command's own flags, and the agent's Config (simkubelet.Options.Validate, whose Go field
// names are mapped to flags). A flag's default is the real default, so a count must be
// at least 1 here: 0 is refused rather than silently replaced by the default.
func checkFlags(fs *flag.FlagSet, cfg simkubelet.Options, contentType string, leaseSecs uint, procs int, memoryRatio float64) error {
	var errs field.ErrorList
	if fs.NArg() > 0 {
		errs = append(errs, field.Invalid(field.NewPath("argument"), fs.Arg(0),
			"unexpected: the program takes flags only, and the first argument that is not a flag ends them (a flag's value goes after '=' or as the next argument)"))
	}
	fs.Visit(func(f *flag.Flag) {
		if why, ok := kwokRefused[f.Name]; ok {
			errs = append(errs, field.Forbidden(field.NewPath("--"+f.Name), why))
		}
	})
	if !slices.Contains(contentTypes, contentType) {
		errs = append(errs, field.NotSupported(field.NewPath("--kube-api-content-type"), contentType, contentTypes))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max-pods", cfg.MaxPods}, {"workers", cfg.Workers}, {"status-workers", cfg.StatusWorkers}} {
		if f.v < 1 {
			errs = append(errs, field.Invalid(field.NewPath("--"+f.name), f.v, "must be at least 1"))
		}
	}
	if procs < 0 {
		errs = append(errs, field.Invalid(field.NewPath("--procs"), procs, "must be 0 (Go's default) or more"))
	}
	if memoryRatio != 0 && !(memoryRatio >= 1.1) { // NaN too
		errs = append(errs, field.Invalid(field.NewPath("--memory-ratio"), memoryRatio, "must be 0 (off) or at least 1.1: a limit at the live heap would keep the collector running"))
	}
	if leaseSecs < 1 || leaseSecs > math.MaxInt32 {
		errs = append(errs, field.Invalid(field.NewPath("--node-lease-duration-seconds"), leaseSecs, fmt.Sprintf("must be 1 to %d", math.MaxInt32)))
	}
	var ie *podstatus.InputError
	if err := cfg.Validate(); errors.As(err, &ie) {
		for _, fe := range ie.Errs {
			fe.Field = configFlags.Replace(fe.Field)
			fe.Detail = configFlags.Replace(fe.Detail)
			if !slices.ContainsFunc(errs, func(e *field.Error) bool { return e.Field == fe.Field }) {
				errs = append(errs, fe)
			}
		}
	} else if err != nil {
		errs = append(errs, field.InternalError(nil, err))
	}
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return usageError{fmt.Errorf("invalid flags: %s", strings.Join(msgs, "; "))}
}

// kwokIgnored are KWOK v0.8.0's flags that configure what this agent does not have (a
// kubelet server, CRD-driven stages, tracing): accepted and ignored, with a note.
var kwokIgnored = []string{"node-name", "node-port", "tls-cert-file", "tls-private-key-file",
	"server-address", "enable-crds", "tracing-endpoint", "tracing-sampling-rate-per-million"}

// kwokRefused are KWOK v0.8.0's flags whose meaning this agent does not implement and
// whose silent absence would write statuses the user asked for differently: refused,
// with the reason, rather than accepted.
var kwokRefused = map[string]string{
	"config": "KWOK's configuration file (stages, KwokConfiguration) is not read by this agent; " +
		"set its flags instead (see -h)",
	"disregard-status-with-annotation-selector": "not supported: this agent writes the status of every pod on the " +
		"nodes it manages; choose the nodes it manages instead (--manage-nodes-with-annotation-selector, " +
		"--manage-nodes-with-label-selector, --manage-single-node)",
	"disregard-status-with-label-selector": "not supported: this agent writes the status of every pod on the " +
		"nodes it manages; choose the nodes it manages instead (--manage-nodes-with-label-selector, " +
		"--manage-nodes-with-annotation-selector, --manage-single-node)",
}

// setFlags returns, as --name, the flags of names given on the command line.
func setFlags(fs *flag.FlagSet, names []string) []string {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(names, f.Name) {
			set = append(set, "--"+f.Name)
		}
	})
	return set
}

// usageError is a bad command line: the program exits 2 (as the flag package's own
// errors) before it connects anywhere.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// defaultProcs is --procs' default.
const defaultProcs = 1

// fromFlag reports whether the program applies the runtime setting of the flag name (its
// value or its default): when the flag is given, or when the environment variable that
// sets the same (env, its value; Go has applied it) is not.
func fromFlag(fs *flag.FlagSet, name, env string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set || env == ""
}

// restConfig is --kubeconfig/--master, else the in-cluster config, else $KUBECONFIG and
// the default loading rules.
func restConfig(kubeconfig, master string) (*rest.Config, error) {
	if kubeconfig != "" || master != "" {
		c, err := clientcmd.BuildConfigFromFlags(master, kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %q: %w", kubeconfig, err)
		}
		return c, nil
	}
	if c, err := rest.InClusterConfig(); err == nil {
		return c, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	c, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, usageError{errors.New("no API server to talk to: pass --kubeconfig FILE or --master URL, or set $KUBECONFIG, or write ~/.kube/config (the program is not running in a cluster either)")}
		}
		return nil, fmt.Errorf("no --kubeconfig, not in a cluster: the default kubeconfig ($KUBECONFIG, else ~/.kube/config): %w", err)
	}
	return c, nil
}

// writeHeapProfile writes the live heap, after a GC, to file.
func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
