package core

import (
	"context"
	"errors"
	"time"

	"github.com/relock-go/relock/observe"
)

// StartAcquire tells the client's Observer that an acquire (op) of
// kind's lock name begins. It returns the context the acquire's Redis
// commands run under (the Observer's, derived from ctx: the lock context
// must still derive from ctx), and the func that ends the acquire with
// its error and the scripts it ran, nil (and nothing built) when the
// client has no Observer or the Observer wants no end.
func (c *Client) StartAcquire(ctx context.Context, kind string, op observe.Op, name string) (context.Context, func(err error, attempts int)) {
	if c == nil || c.cfg.Observer == nil {
		return ctx, nil
	}
	start := time.Now()
	octx, end := c.cfg.Observer.StartAcquire(ctx, observe.Lock{Kind: kind, Name: name}, op)
	if octx == nil {
		octx = ctx
	}
	if end == nil {
		return octx, nil
	}
	return octx, func(err error, attempts int) {
		end(observe.Acquire{Outcome: outcome(err), Wait: time.Since(start), Attempts: attempts, Err: err})
	}
}

// outcome classifies an acquire's error.
func outcome(err error) observe.Outcome {
	switch {
	case err == nil:
		return observe.Acquired
	case errors.Is(err, ErrClosed):
		return observe.Closed
	case errors.Is(err, ErrNotAcquired):
		return observe.NotAcquired
	}
	return observe.Failed
}

// StartUnlock tells the client's Observer that an unlock (op) of kind's
// lock name begins. It returns the context the unlock's Redis commands
// run under, and the func that ends it, nil without an Observer.
func (c *Client) StartUnlock(ctx context.Context, kind string, op observe.Op, name string) (context.Context, func(error)) {
	if c == nil || c.cfg.Observer == nil {
		return ctx, nil
	}
	octx, end := c.cfg.Observer.StartUnlock(ctx, observe.Lock{Kind: kind, Name: name}, op)
	if octx == nil {
		octx = ctx
	}
	return octx, end
}

// Stats reports the client's holds, waiters and subscribed channels
// (none before the client's pub/sub mode is known).
func (c *Client) Stats() observe.Stats {
	c.holds.mu.Lock()
	s := observe.Stats{Holds: len(c.holds.m)}
	c.holds.mu.Unlock()
	if h := c.pubsub.ready.Load(); h != nil {
		s.Waiters, s.Channels = h.Stats()
	}
	return s
}

// holdEnded tells the client's Observer that h ended with cause. It is
// called with no lock held.
func (c *Client) holdEnded(h *hold, cause error) {
	if c.cfg.Observer == nil || h.kind == "" {
		return
	}
	c.cfg.Observer.HoldEnded(observe.HoldEnd{Lock: observe.Lock{Kind: h.kind, Name: h.name()}, Held: time.Since(h.since), Cause: cause})
}

// watchdogRound tells the client's Observer of a renewal round. It is
// the watchdog's callback (OnRound, set by NewClient when there is an
// Observer), called on its goroutine with no lock held.
func (c *Client) watchdogRound(leases, failures, lost int, took time.Duration) {
	c.cfg.Observer.WatchdogRound(observe.Round{Leases: leases, Failures: failures, Lost: lost, Duration: took})
}
