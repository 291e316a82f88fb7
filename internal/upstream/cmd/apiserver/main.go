// Command apiserver serves the in-process kube-apiserver v1.37.0 + etcd of package
// apiserver to other processes until it gets SIGINT or SIGTERM: a node agent (the fleet
// agent of examples/fleet, KWOK, a kubelet fork) and a load generator
// (examples/fleet/bench) can then share a real API server without a cluster, a container
// runtime or any download.
//
//	cd internal/upstream && go run ./cmd/apiserver --kubeconfig-out /tmp/podstatus.kubeconfig
//
// The kube-apiserver reports the version its release build stamps into
// k8s.io/component-base/version; a plain go build leaves "v0.0.0-master+$Format:%H$", which
// `kubectl version` prints and warns about. To have it report v1.37.0, stamp it as the
// release build does:
//
//	go run -ldflags "-X k8s.io/component-base/version.gitVersion=v1.37.0 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" ./cmd/apiserver
//
// It writes a kubeconfig for the server's loopback super-user (group system:masters:
// every resource, /metrics included) to --kubeconfig-out and prints where. The server
// runs without a controller manager or scheduler (see package apiserver): pods must be
// bound with spec.nodeName, and a namespace that is deleted stays Terminating.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("apiserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("kubeconfig-out", "podstatus.kubeconfig", "write a kubeconfig for the server's super-user to this `file`")
	verbose := fs.Bool("v", false, "print the log lines of the API server and etcd on stderr")
	var extra stringList
	fs.Var(&extra, "apiserver-flag", "an extra kube-apiserver `flag`, as --name=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("apiserver: unexpected arguments %q", fs.Args())
	}
	// Register and parse the testing package's flags, as a test binary would, in case
	// the upstream test harnesses consult them (testing.Verbose panics before that).
	testing.Init()
	if err := flag.CommandLine.Parse(nil); err != nil {
		return err
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	var logw io.Writer
	if *verbose {
		logw = stderr
	} else {
		// kube-apiserver logs through klog's global logger, not the test harness. Errors
		// would still reach stderr (klog's stderrthreshold is ERROR), and a fresh start
		// logs two that alarm a newcomer and mean nothing here: "The manifest file is
		// empty" and "Found stale data, removed previous endpoints" (the endpoints
		// reconciler's message whenever no earlier apiserver shut down cleanly). -v
		// shows them.
		klog.LogToStderr(false)
		klog.SetOutput(io.Discard)
		kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(kfs)
		if err := kfs.Set("stderrthreshold", "FATAL"); err != nil {
			return err
		}
	}
	srv, stop, err := apiserver.StartServer(ctx, logw, apiserver.WithFlags(extra...))
	if err != nil {
		return err
	}
	defer stop()

	if err := apiserver.WriteKubeconfig(*out, srv.Config); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "kube-apiserver v1.37.0 + etcd at %s, ready in %v (pid %d)\n", srv.Config.Host, srv.StartupTime.Round(time.Millisecond), os.Getpid())
	fmt.Fprintf(stdout, "kubeconfig written to %s (super-user; /metrics included)\n", *out)
	fmt.Fprintf(stdout, "serving until SIGINT or SIGTERM\n")
	<-ctx.Done()
	fmt.Fprintf(stdout, "stopping\n")
	return nil
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
