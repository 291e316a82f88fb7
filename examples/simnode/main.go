// Command simnode is the project's main job: a simulated node that runs a set of pods
// through their lives — sandbox creation with delays and failures, init containers, a
// sidecar, readiness probes, a readiness gate set by a simulated load-balancer controller,
// a crash-looping container, a sandbox crash and recreation, a batch job, graceful
// termination — with podstatus doing the real work: podstate.Generate builds each status
// from the runtime facts, the readiness engine computes the conditions, and status.Manager
// sends the PATCHes. By default it runs against an in-memory API server (no cluster
// needed) on a simulated clock, so a run takes seconds and is the same for a given seed.
//
//	go run ./examples/simnode                 # 7 pods, seed 1, 60 simulated seconds
//	go run ./examples/simnode -pods 70 -seed 42 -json
//	go run ./examples/simnode -speed 10       # pace it: 10 simulated seconds per real second
//
// The pods run on podsim, the simulated runtime the fleet agent serves; each lifecycle is
// a pod spec with sim.podstatus.io/ annotations.
//
// It prints a timeline of condition transitions (pod, condition, status, reason,
// lastTransitionTime, who wrote it) and of the PATCHes sent, then a summary: pods, status
// changes, PATCHes sent and skipped, requests per change, pods deleted, and each pod's
// KEP-3085 sandbox-creation latency. A PATCH line lists the status fields the patch sets
// and, in brackets, the conditions it touches with their new status; "~" marks a
// condition whose status the patch leaves as it is (it changes only its reason, message
// or lastTransitionTime).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/podstatus/podstatus/examples/simnode/sim"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintln(os.Stderr, "simnode:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("simnode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f sim.Flags
	f.Register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: simnode [flags]\n\nRuns a simulated node against an in-memory API server and prints the condition timeline and a summary.\n"+
			"A PATCH line lists the status fields the patch sets and, in brackets, the conditions it touches with their\n"+
			"new status; \"~\" marks a condition whose status the patch leaves unchanged (reason, message or time only).\n\n")
		fs.PrintDefaults()
	}
	if err := sim.Parse(fs, args, stdout); err != nil {
		return err
	}
	if err := f.Check(fs.Args()); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := sim.Run(ctx, sim.NewMemory(), f.Config(ctx))
	if err != nil {
		return err
	}
	return f.Write(stdout, rep)
}
