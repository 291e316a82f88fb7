package sim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// Bounds of a run: the simulation steps every pod every simulated second, at about 0.1 ms
// of CPU per pod-second, so these keep a run under about half a minute.
const (
	// MaxPods is the most pods a run may have (more are the fleet agent's job).
	MaxPods = 2000
	// MaxSeconds is the longest run, in simulated seconds.
	MaxSeconds = 24 * 3600
	// MaxPodSeconds bounds pods × seconds.
	MaxPodSeconds = 300000
)

// Flags are the command-line flags of a simulated node, shared by examples/simnode (in
// memory) and simnode-kube (against a cluster), so that both accept the same values and
// run the same simulation. Register them on a FlagSet, Parse it, then Check.
type Flags struct {
	Pods        int     // -pods: Config.Pods, 1..MaxPods
	Seed        uint64  // -seed: Config.Seed
	Seconds     int     // -seconds: Config.Seconds, 1..MaxSeconds, with Pods×Seconds ≤ MaxPodSeconds
	Speed       float64 // -speed: simulated seconds per real second; 0 runs unpaced
	JSON        bool    // -json: Write prints JSON
	Patches     bool    // -patches: Write prints every PATCH body
	SummaryOnly bool    // -summary-only: Write prints the summary only
}

// Register defines the flags on fs, with their defaults (7 pods, seed 1, 60 seconds, no
// pacing).
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.IntVar(&f.Pods, "pods", len(Kinds()), fmt.Sprintf("number of pods, 1..%d; their kinds cycle through %v", MaxPods, Kinds()))
	fs.Uint64Var(&f.Seed, "seed", 1, "seed for every pod's timing; the same seed gives the same timeline")
	fs.IntVar(&f.Seconds, "seconds", 60, fmt.Sprintf("simulated seconds to run, 1..%d", MaxSeconds))
	fs.Float64Var(&f.Speed, "speed", 0, "simulated seconds per real second; 0 runs as fast as possible on the simulated clock")
	fs.BoolVar(&f.JSON, "json", false, "print the timeline and summary as JSON")
	fs.BoolVar(&f.Patches, "patches", false, "print every PATCH body under its one-line digest")
	fs.BoolVar(&f.SummaryOnly, "summary-only", false, "print only the summary")
}

// Parse parses args into fs, whose Usage prints the help to fs.Output(): -h or -help
// prints the help on stdout and returns flag.ErrHelp (the program exits 0); a bad flag
// or value returns one line naming them, with a hint, and prints nothing (the program
// exits 2), instead of the flag package's error followed by the whole help on stderr.
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		fs.SetOutput(out)
		return err
	case err != nil:
		return fmt.Errorf("%w (-h lists the flags)", err)
	}
	return nil
}

// Check refuses what no run should get, naming the flag: counts out of bounds, a run
// that would take minutes of CPU, a negative speed, and positional arguments (args, the
// FlagSet's Args after Parse).
func (f *Flags) Check(args []string) error {
	switch {
	case len(args) > 0:
		return fmt.Errorf("unexpected arguments %q (see -h)", args)
	case f.Pods <= 0 || f.Pods > MaxPods:
		return fmt.Errorf("-pods %d: want 1..%d (many more pods are the fleet agent's job: examples/fleet)", f.Pods, MaxPods)
	case f.Seconds <= 0 || f.Seconds > MaxSeconds:
		return fmt.Errorf("-seconds %d: want 1..%d", f.Seconds, MaxSeconds)
	case f.Pods*f.Seconds > MaxPodSeconds:
		return fmt.Errorf("-pods %d with -seconds %d: %d pod-seconds, want at most %d (a run costs about 0.1 ms of CPU per pod-second, so that is about half a minute)",
			f.Pods, f.Seconds, f.Pods*f.Seconds, MaxPodSeconds)
	case f.Speed < 0:
		return fmt.Errorf("-speed %v: want 0 (as fast as possible) or a positive factor", f.Speed)
	}
	return nil
}

// Config returns the run's Config (Start is the caller's). The namespace and the node are
// named after the seed (simnode-1), in memory as on a cluster: podsim draws each pod's
// timings from the seed and the pod's namespace and name, so that a seed gives the same
// timeline in both. With a Speed, its Tick paces the run at Speed simulated seconds per
// real second and ends it with ctx's error when ctx is done.
func (f *Flags) Config(ctx context.Context) Config {
	name := fmt.Sprintf("simnode-%d", f.Seed)
	cfg := Config{Pods: f.Pods, Seed: f.Seed, Seconds: f.Seconds, Namespace: name, Node: name}
	if f.Speed > 0 {
		step := time.Duration(float64(time.Second) / f.Speed)
		cfg.Tick = func(int) error {
			t := time.NewTimer(step)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return cfg
}

// Write prints rep as the flags ask: text or JSON, the timeline unless SummaryOnly, PATCH
// bodies with Patches. It clears rep.Timeline for SummaryOnly.
func (f *Flags) Write(w io.Writer, rep *Report) error {
	if f.SummaryOnly {
		rep.Timeline = nil
	}
	if f.JSON {
		return rep.WriteJSON(w)
	}
	return rep.WriteText(w, f.Patches)
}
