// Command simnode-kube runs the simulated node of examples/simnode against a real cluster:
//
//	cd examples/simnode/kube && go run ./cmd/simnode-kube --kubeconfig ~/.kube/config
//
// It creates a namespace and a Node object named after the seed, creates the simulated
// pods bound to that node, and drives their statuses with podstatus exactly as the
// in-memory run does (on a simulated clock, so condition times are simulated times). Use
// a test cluster: nothing else should run a kubelet for the node it creates. The pods and
// the namespace are left for you to inspect; delete the namespace and the node when done.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/podstatus/podstatus/examples/simnode/kube"
	"github.com/podstatus/podstatus/internal/sim"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "path to the kubeconfig of the cluster to run against (required)")
	pods := flag.Int("pods", len(sim.Kinds()), "number of pods")
	seed := flag.Uint64("seed", 1, "seed for every pod's timing")
	seconds := flag.Int("seconds", 60, "simulated seconds to run")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "simnode-kube: --kubeconfig is required (or set KUBECONFIG)")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "simnode-kube: load kubeconfig:", err)
		os.Exit(1)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "simnode-kube: client:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ns, node := fmt.Sprintf("simnode-%d", *seed), fmt.Sprintf("simnode-%d", *seed)
	cluster := kube.New(cs)
	if err := cluster.Prepare(ctx, ns, node); err != nil {
		fmt.Fprintln(os.Stderr, "simnode-kube:", err)
		os.Exit(1)
	}
	rep, err := sim.Run(ctx, cluster, sim.Config{Pods: *pods, Seed: *seed, Seconds: *seconds, Namespace: ns, Node: node})
	if err == nil {
		if *asJSON {
			err = rep.WriteJSON(os.Stdout)
		} else {
			err = rep.WriteText(os.Stdout, false)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "simnode-kube:", err)
		os.Exit(1)
	}
}
