package core

import (
	"context"
	"errors"
	"time"

	"github.com/relock-go/relock/observe"
)

// StartAcquire tells the client's Observer that an acquire of kind's
// lock name begins. The func it returns ends it with the acquire's error
// and the scripts it ran; it is nil, and nothing was built, when the
// client has no Observer or the Observer wants no end.
func (c *Client) StartAcquire(ctx context.Context, kind, name string) func(err error, attempts int) {
	if c == nil || c.cfg.Observer == nil {
		return nil
	}
	start := time.Now()
	end := c.cfg.Observer.StartAcquire(ctx, observe.Lock{Kind: kind, Name: name})
	if end == nil {
		return nil
	}
	return func(err error, attempts int) {
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

// StartUnlock tells the client's Observer that an unlock of kind's lock
// name begins; the func it returns, nil without an Observer, ends it.
func (c *Client) StartUnlock(ctx context.Context, kind, name string) func(error) {
	if c == nil || c.cfg.Observer == nil {
		return nil
	}
	return c.cfg.Observer.StartUnlock(ctx, observe.Lock{Kind: kind, Name: name})
}

// Stats reports the client's holds, waiters and subscribed channels
// (none before the client's pub/sub mode is known).
func (c *Client) Stats() observe.Stats {
	c.holds.mu.Lock()
	s := observe.Stats{Holds: len(c.holds.m)}
	c.holds.mu.Unlock()
	if t := c.pubsub.ready.Load(); t != nil {
		s.Waiters, s.Channels = t.hub.Stats()
	}
	return s
}

// holdEnded tells the client's Observer that h ended with cause. It is
// called with no lock held.
func (c *Client) holdEnded(h *hold, cause error) {
	if c.cfg.Observer == nil || h.kind == "" {
		return
	}
	c.cfg.Observer.HoldEnded(observe.HoldEnd{Lock: observe.Lock{Kind: h.kind, Name: h.key.Name}, Held: time.Since(h.since), Cause: cause})
}

// watchdogRound tells the client's Observer of a renewal round. It is
// the watchdog's callback (OnRound, set by NewClient when there is an
// Observer), called on its goroutine with no lock held.
func (c *Client) watchdogRound(leases, failures, lost int, took time.Duration) {
	c.cfg.Observer.WatchdogRound(observe.Round{Leases: leases, Failures: failures, Lost: lost, Duration: took})
}
