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
	if c == nil || c.Obs == nil {
		return nil
	}
	start := time.Now()
	end := c.Obs.StartAcquire(ctx, observe.Lock{Kind: kind, Name: name})
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
	if c == nil || c.Obs == nil {
		return nil
	}
	return c.Obs.StartUnlock(ctx, observe.Lock{Kind: kind, Name: name})
}

// Stats reports the client's holds, waiters and subscribed channels.
func (c *Client) Stats() observe.Stats {
	c.mu.Lock()
	holds := len(c.holds)
	c.mu.Unlock()
	waiters, channels := c.Hub.Stats()
	return observe.Stats{Holds: holds, Waiters: waiters, Channels: channels}
}

// holdEnded tells the client's Observer that h ended with cause. It is
// called with no lock held.
func (c *Client) holdEnded(h *hold, cause error) {
	if c.Obs == nil || h.kind == "" {
		return
	}
	c.Obs.HoldEnded(observe.HoldEnd{Lock: observe.Lock{Kind: h.kind, Name: h.key.Name}, Held: time.Since(h.since), Cause: cause})
}

// watchdogRound tells the client's Observer of a renewal round.
func (c *Client) watchdogRound(leases, failures, lost int, took time.Duration) {
	c.Obs.WatchdogRound(observe.Round{Leases: leases, Failures: failures, Lost: lost, Duration: took})
}

// SetObserver makes obs the client's Observer, told of the watchdog's
// rounds too. It is called once, before the client is used.
func (c *Client) SetObserver(obs observe.Observer) {
	c.Obs = obs
	c.Watchdog.OnRound(c.watchdogRound)
}
