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
	"time"

	"github.com/podstatus/podstatus/internal/sim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "simnode:", err)
		}
		os.Exit(2)
	}
}

// Bounds of a run: the simulation steps every pod every simulated second, at about 0.1 ms
// of CPU per pod-second, so these keep a run under about half a minute.
const (
	maxPods       = 2000
	maxPodSeconds = 300000
)

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("simnode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pods := fs.Int("pods", len(sim.Kinds()), "number of pods; their kinds cycle through "+fmt.Sprint(sim.Kinds()))
	seed := fs.Uint64("seed", 1, "seed for every pod's timing; the same seed gives the same output")
	seconds := fs.Int("seconds", 60, "simulated seconds to run")
	speed := fs.Float64("speed", 0, "simulated seconds per real second; 0 runs as fast as possible on the simulated clock")
	asJSON := fs.Bool("json", false, "print the timeline and summary as JSON")
	patches := fs.Bool("patches", false, "print every PATCH body under its one-line digest")
	quiet := fs.Bool("summary-only", false, "print only the summary")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: simnode [flags]\n\nRuns a simulated node against an in-memory API server and prints the condition timeline and a summary.\n"+
			"A PATCH line lists the status fields the patch sets and, in brackets, the conditions it touches with their\n"+
			"new status; \"~\" marks a condition whose status the patch leaves unchanged (reason, message or time only).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q (see -h)", fs.Args())
	case *pods <= 0 || *pods > maxPods:
		return fmt.Errorf("-pods %d: want 1..%d (many more pods are the fleet agent's job: examples/fleet)", *pods, maxPods)
	case *seconds <= 0 || *seconds > 24*3600:
		return fmt.Errorf("-seconds %d: want 1..86400", *seconds)
	case *pods**seconds > maxPodSeconds:
		return fmt.Errorf("-pods %d with -seconds %d: %d pod-seconds, want at most %d (a run costs about 0.1 ms of CPU per pod-second, so that is about half a minute)",
			*pods, *seconds, *pods**seconds, maxPodSeconds)
	case *speed < 0:
		return fmt.Errorf("-speed %v: want 0 (as fast as possible) or a positive factor", *speed)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := sim.Config{Pods: *pods, Seed: *seed, Seconds: *seconds}
	if *speed > 0 {
		step := time.Duration(float64(time.Second) / *speed)
		cfg.Tick = func(int) error {
			select {
			case <-time.After(step):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	rep, err := sim.Run(ctx, sim.NewMemory(), cfg)
	if err != nil {
		return err
	}
	if *quiet {
		rep.Timeline = nil
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteText(stdout, *patches)
}
