// Command fleet is a simulated kubelet for many nodes: it registers or adopts nodes on
// any API server and serves the pods bound to them with the kubelet's exact statuses.
// See package github.com/podstatus/podstatus/examples/fleet/agent.
//
//	fleet --kubeconfig ~/.kube/config --nodes 10
//	fleet --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake   # where KWOK ran
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/podstatus/podstatus/examples/fleet/agent"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		cfg         agent.Config
		kubeconfig  = flag.String("kubeconfig", "", "Path to a kubeconfig file; default: in-cluster config, else $KUBECONFIG")
		master      = flag.String("master", "", "The address of the API server (overrides the kubeconfig)")
		contentType = flag.String("kube-api-content-type", "application/vnd.kubernetes.protobuf", "Content type of requests sent to the API server (application/json or application/vnd.kubernetes.protobuf)")
		metricsAddr = flag.String("metrics-addr", "", "Serve Prometheus metrics at this address (for example :8080); empty: off")
		leaseSecs   = flag.Uint("node-lease-duration-seconds", agent.DefaultNodeLeaseDurationSeconds, "Duration of node lease seconds (renewed every quarter of it)")
		userAgent   = flag.String("user-agent", "", "User-Agent of the agent's requests, and so its field manager name on the server (the part before a '/'); default podstatus-fleet. Agents sharing a cluster can tell their writes apart by it")
		cpuProfile  = flag.String("cpuprofile", "", "Write a CPU profile of the whole run to this file")
		memProfile  = flag.String("memprofile", "", "Write a heap profile to this file on exit (after a GC)")
		compression = flag.Bool("compression", false, "Ask the API server to gzip its responses, watch streams included. Off by default: next to the API server or on a LAN, compressing every watch event costs the API server and the agent CPU and saves nothing that matters")
	)
	flag.IntVar(&cfg.Nodes, "nodes", 0, "Create (or take over) this many nodes")
	flag.StringVar(&cfg.NodeNamePrefix, "node-name-prefix", agent.DefaultNodeNamePrefix, "Name prefix of the created nodes")
	flag.BoolVar(&cfg.ManageAllNodes, "manage-all-nodes", false, "Manage every node of the cluster")
	flag.StringVar(&cfg.ManageSingleNode, "manage-single-node", "", "Manage the node of this name")
	flag.StringVar(&cfg.ManageNodesWithAnnotationSelector, "manage-nodes-with-annotation-selector", "", "Manage the nodes whose annotations match this selector (for example kwok.x-k8s.io/node=fake)")
	flag.StringVar(&cfg.ManageNodesWithLabelSelector, "manage-nodes-with-label-selector", "", "Manage the nodes whose labels match this selector")
	flag.IntVar(&cfg.MaxPods, "max-pods", agent.DefaultMaxPods, "Pod capacity of the created nodes (the kubelet's --max-pods); also sizes their pod CIDR")
	flag.StringVar(&cfg.NodeIP, "node-ip", "", "InternalIP of the created nodes; default: a distinct address per node")
	flag.StringVar(&cfg.Profile, "profile", "default", "Simulation profile: default or fast")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "Seed of the simulated timings")
	flag.IntVar(&cfg.Workers, "workers", agent.DefaultWorkers, "Pods stepped at once")
	flag.IntVar(&cfg.StatusWorkers, "status-workers", agent.DefaultStatusWorkers, "Pod status PATCHes in flight at once")
	qps := flag.Float64("qps", 0, "Client-side requests per second; 0: no client-side limit")
	flag.IntVar(&cfg.Burst, "burst", 0, "Client-side burst (with --qps); default 2×qps")
	flag.DurationVar(&cfg.ProgressInterval, "progress-interval", agent.DefaultProgressInterval, "How often a progress line is logged; negative: never")
	// KWOK v0.8.0's other flags, accepted so that a KWOK command line runs unchanged, and
	// ignored: they configure KWOK's own kubelet server, stages and tracing, which this
	// agent does not have (pods get IPs from each node's pod CIDR, not from --cidr).
	for _, name := range []string{"config", "cidr", "node-name", "node-port", "tls-cert-file", "tls-private-key-file",
		"server-address", "enable-crds", "tracing-endpoint", "tracing-sampling-rate-per-million",
		"disregard-status-with-annotation-selector", "disregard-status-with-label-selector"} {
		flag.String(name, "", "Accepted for compatibility with KWOK v0.8.0; ignored")
	}
	klogFlags := textlogger.NewConfig()
	klogFlags.AddFlags(flag.CommandLine) // -v, -vmodule
	flag.Parse()
	cfg.QPS = float32(*qps)
	cfg.NodeLeaseDurationSeconds = int32(*leaseSecs)
	logger := textlogger.NewLogger(klogFlags)
	klog.SetLogger(logger) // client-go's own logs
	cfg.Logger = logger

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
	cfg.RESTConfig = rc

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

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	if *metricsAddr != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		cfg.Registerer = reg
		// /metrics, and Go's profiles under /debug/pprof/ (go tool pprof http://ADDR/debug/pprof/heap).
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.HandleFunc("/debug/pprof/", httppprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
		srv := &http.Server{Addr: *metricsAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error(err, "Metrics server stopped", "addr", *metricsAddr)
			}
		}()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
	}
	return agent.Run(ctx, cfg)
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
		return nil, fmt.Errorf("no --kubeconfig, not in a cluster, and $KUBECONFIG: %w", err)
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
