package wait

import (
	"context"
	"time"

	"github.com/relock-go/relock/internal/core"
)

// Polling. A lock whose releases announce nothing (Redisson's spin lock
// publishes no message, so that it costs no subscription on large
// clusters) cannot wake its waiters: they retry after sleeps that a
// Backoff paces. Nothing can be missed between an attempt and the sleep,
// since nothing is announced; the price is the time from a release to
// the next attempt, up to one sleep, and an attempt per sleep.
//
// The sleeps still end early for the caller (ctx), the client (the
// hub's Done) and the wait's bound, which is followed by one last
// attempt, as in the listening wait.

// A Backoff paces a wait that polls. It keeps no state of its own, so one
// value serves any number of waits at once: each wait passes it what it
// needs.
type Backoff interface {
	// Sleep returns how long to sleep after failed attempt n (1 for the
	// first) of a wait; prev is the sleep it returned for attempt n-1
	// (0 when n is 1).
	Sleep(n int, prev time.Duration) time.Duration
}

// MinPoll is the shortest sleep between a polling wait's attempts: a
// Backoff's shorter sleeps are raised to it, so that no wait sends
// attempts back to back.
const MinPoll = time.Millisecond

// poll sleeps and retries until the lock is acquired or the wait ends. o
// and err are the first attempt's. The attempts report that the waiter
// does not listen: nothing announces a release to it.
func poll(ctx context.Context, s Spec, o Outcome, err error) error {
	var deadline <-chan time.Time
	if s.Wait > 0 {
		t := time.NewTimer(s.Wait)
		defer t.Stop()
		deadline = t.C
	}
	sleep := time.NewTimer(0)
	defer sleep.Stop()
	var (
		n       int           // failed attempts so far
		prev    time.Duration // the Backoff's last sleep
		backoff = minBackoff  // the sleep after an unreachable Redis
		expired bool
	)
	for {
		if done, end := exit(ctx, s, o, err, expired); done {
			return end
		}
		var d time.Duration
		if err != nil {
			// Redis is unreachable: retry with the listening wait's
			// backoff, which the Backoff's pace does not change.
			d, backoff = backoff, min(2*backoff, maxBackoff)
		} else {
			backoff = minBackoff
			n++
			prev = s.Poll.Sleep(n, prev)
			d = max(prev, MinPoll)
			if o.TTL > 0 && o.TTL < d {
				// The lock expires before then: try when it may.
				d = o.TTL
			}
		}
		if s.MaxSleep > 0 && d > s.MaxSleep {
			d = s.MaxSleep
		}
		sleep.Reset(d)
		select {
		case <-sleep.C:
		case <-deadline:
			// One last attempt: the lock may have been freed just now.
			expired = true
		case <-ctx.Done():
			return ended(ctx, ctx.Err(), err)
		case <-s.Hub.Done():
			return core.ErrClosed
		}
		o, err = s.Attempt(ctx, false)
	}
}
