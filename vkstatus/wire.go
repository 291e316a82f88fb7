package vkstatus

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/status"
)

// ErrNotWired is matched (errors.Is) by the errors and error logs of a Client that is
// not wired into virtual-kubelet: UpdateStatus's error when EventHandler was never
// registered, and the error logged when statuses are accepted but Run does not run.
var ErrNotWired = errors.New("vkstatus: the Client is not wired into virtual-kubelet")

// NotRunningGrace is how long a status a Client accepted may wait for Run (or the
// Manager's Run or Sync) before the Client logs, at error level and matching
// ErrNotWired, that nothing sends it. It leaves a program time to start Run after
// virtual-kubelet's node, in either order.
const NotRunningGrace = 5 * time.Second

// Wire puts the Client into a virtual-kubelet pod controller's configuration: the
// Client becomes cfg.PodClient (every call but UpdateStatus and virtual-kubelet's force
// delete goes to the PodsGetter the Client wraps) and EventHandler is registered on
// cfg.PodInformer, the informer virtual-kubelet reads pods from. Its signature is
// nodeutil.WithPodControllerConfigOverrides's, so a node built with nodeutil.NewNode is
// wired with
//
//	nodeutil.WithPodControllerConfigOverrides(client.Wire)
//
// Run must still be called: virtual-kubelet has no hook that could start it. Call Wire
// once per Client.
//
// The error is a *podstatus.InputError (matching podstatus.ErrInvalidInput) for a nil
// cfg or cfg.PodInformer, or the informer's error when the handler cannot be registered
// (the informer was stopped).
func (c *Client) Wire(cfg *node.PodControllerConfig) error {
	switch {
	case cfg == nil:
		return fmt.Errorf("vkstatus: Wire: %w", &podstatus.InputError{Errs: field.ErrorList{field.Required(field.NewPath("cfg"), "")}})
	case cfg.PodInformer == nil:
		return fmt.Errorf("vkstatus: Wire: %w", &podstatus.InputError{Errs: field.ErrorList{
			field.Required(field.NewPath("cfg", "PodInformer"), "the informer virtual-kubelet reads pods from")}})
	}
	if _, err := cfg.PodInformer.Informer().AddEventHandler(c.EventHandler()); err != nil {
		return fmt.Errorf("vkstatus: Wire: %w", err)
	}
	cfg.PodClient = c
	return nil
}

// errNoHandler is UpdateStatus's error when EventHandler was never asked for.
var errNoHandler = fmt.Errorf("%w: Client.EventHandler is not registered on virtual-kubelet's pod informer "+
	"(Client.Wire registers it): without the server's copies no status follows a readiness gate or repairs another writer's Ready", ErrNotWired)

// runWatch notices statuses that are accepted and never sent because nothing runs the
// Manager (see NotRunningGrace).
type runWatch struct {
	// running counts the Client's Run calls in progress.
	running atomic.Int32
	// active is set by any sync of the Manager (Client.Run, the Manager's own Run or
	// Sync) since the watch was armed.
	active atomic.Bool
	mu     sync.Mutex
	// armedAt is when the oldest status not known to be sent was accepted; zero when the
	// watch is not armed.
	armedAt time.Time
}

// observer is the Client's hooks on its Manager: accepted changes arm the run watch and
// any sync disarms it.
func (c *Client) observer() *status.Observer {
	active := func() { c.watch.active.Store(true) }
	return &status.Observer{
		OnChange:   func(status.ChangeEvent) { c.changed() },
		OnPatch:    func(status.PatchEvent) { active() },
		OnSkip:     func(status.SkipEvent) { active() },
		OnConflict: func(status.ConflictEvent) { active() },
		OnRetry:    func(status.RetryEvent) { active() },
		OnSynced:   func(status.SyncedEvent) { active() },
	}
}

// changed follows a status the Manager accepted: unless Run runs, it arms the run watch,
// which reports after NotRunningGrace (on the Client's clock when it can run a function
// later, else on the next accepted status after that time).
func (c *Client) changed() {
	if c.watch.running.Load() > 0 {
		return
	}
	now := c.clock.Now()
	w := &c.watch
	w.mu.Lock()
	switch {
	case w.armedAt.IsZero():
		w.armedAt = now
		w.active.Store(false)
		w.mu.Unlock()
		if ac, ok := c.clock.(clock.WithDelayedExecution); ok {
			ac.AfterFunc(NotRunningGrace, c.checkRunning)
		}
		return
	case now.Sub(w.armedAt) >= NotRunningGrace:
		w.mu.Unlock()
		c.checkRunning()
		return
	}
	w.mu.Unlock()
}

// checkRunning logs at error level when the run watch is armed, Run does not run and
// nothing synced since the watch was armed; it disarms the watch.
func (c *Client) checkRunning() {
	w := &c.watch
	w.mu.Lock()
	armed := !w.armedAt.IsZero()
	w.armedAt = time.Time{}
	w.mu.Unlock()
	if !armed || w.running.Load() > 0 || w.active.Load() {
		return
	}
	c.logger.Error(fmt.Errorf("%w: Client.Run is not running", ErrNotWired),
		"Pod statuses are accepted but none is sent to the API server: call Client.Run beside virtual-kubelet's node", "waited", NotRunningGrace)
}
