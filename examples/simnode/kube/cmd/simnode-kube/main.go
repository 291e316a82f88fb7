// Command simnode-kube runs the simulated node of examples/simnode against a real cluster:
//
//	cd examples/simnode/kube && go run ./cmd/simnode-kube --kubeconfig ~/.kube/config
//
// It takes simnode's flags (-pods, -seed, -seconds, -speed, -json, -patches,
// -summary-only, with the same bounds) plus --kubeconfig and -keep. It creates a
// namespace and a Node object named after the seed, creates the simulated pods bound to
// that node, and drives their statuses with podstatus exactly as the in-memory run does,
// on a simulated clock that starts at the wall-clock time of the start (so condition
// times follow the server's creationTimestamps) and runs as fast as it can, or at -speed
// simulated seconds per real second. At the end, and on SIGINT, it deletes the pods, and
// the namespace and node if it created them; -keep leaves them for inspection. Use a
// test cluster: nothing else should run a kubelet for the node it creates. See
// kube.Command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/podstatus/podstatus/examples/simnode/kube"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := kube.Command(ctx, os.Args[1:], os.Stdout, os.Stderr, kube.Env{})
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case kube.IsUsage(err):
		fmt.Fprintln(os.Stderr, "simnode-kube:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "simnode-kube:", err)
		os.Exit(1)
	}
}
