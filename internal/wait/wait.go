// Package wait is the acquire loop every lock type shares: try, subscribe,
// retry, then sleep until a wake-up, the lock's TTL or the caller's end.
// A lock type without pub/sub (Redisson's spin lock) polls instead, with
// a backoff (Spec.Poll).
//
// No release is missed between a failed attempt and the sleep: the
// waiter's subscription is in place before an attempt that counts. When
// the channel is live already (the hub keeps recently used channels
// subscribed), the waiter joins it before its first attempt, so that
// attempt counts and the acquire costs one script call; otherwise it
// subscribes after the first attempt and tries once more. Either way a
// release after the counting attempt publishes to a channel the waiter
// is on. A waiter sends no Redis command while it sleeps.
//
// A lock its caller expects to find free (Spec.LikelyFree) skips the
// look for a live channel: the first attempt acquires without the hub's
// lock and bookkeeping, and the rare one that finds the lock taken is
// followed by a second, as on a channel that is not live.
package wait

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/transport"
)

// An Outcome is what one acquire attempt found.
type Outcome struct {
	Acquired bool
	// TTL is the time after which the lock may be free on its own
	// (negative: no expiry, wait for a wake-up).
	TTL time.Duration
	// Also names one more channel the waiter must listen on from now on
	// (a fair lock's per-owner channel, where Redisson clients wake it),
	// "" for none.
	Also string
}

// An Acquirer is what a lock type does for the loop. (An interface
// rather than funcs: an uncontended acquire then allocates no closures.)
// Every method gets the context Acquire was called with. An Acquirer may
// also be a Handoffer and a Quitter.
type Acquirer interface {
	// Attempt tries once to acquire. listening reports whether the
	// waiter is on its channel already: an attempt that is not must
	// leave nothing in Redis that a wake-up would have to find (a fair
	// lock's queue entry, whose grant would be published before anyone
	// listens). An error ends the wait.
	Attempt(ctx context.Context, listening bool) (Outcome, error)
}

// A Handoffer is an Acquirer to which a release may hand the lock (or a
// synchronizer's permits, or news) directly, in a wake-up tagged for it.
type Handoffer interface {
	// Handoff takes the note of a wake-up tagged for this waiter. It
	// reports whether the waiter now holds the lock; when it does not,
	// an attempt follows.
	Handoff(ctx context.Context, note string) (bool, error)
}

// A Quitter is an Acquirer whose failed attempts may leave something in
// Redis (a fair lock's queue entry, relock's registry of waiters).
type Quitter interface {
	// GiveUp undoes it when the wait ends without the lock, ctx ended
	// or not (it runs on time of its own: core.Client.Settle).
	GiveUp(ctx context.Context) error
}

// A Spec describes one acquire.
type Spec struct {
	Hub     *hub.Hub
	Channel string // where releases are announced
	Tag     string // the waiter's tag on Channel, "" for none
	// Wake is how messages on Channel wake the waiter, and AlsoWake
	// how messages on Outcome.Also's channel do (see hub.Wake): each
	// lock type states its channels' policies.
	Wake, AlsoWake hub.Wake
	Acquirer
	// LikelyFree: the caller expects the first attempt to acquire (the
	// last acquire of the lock found it free), so it is made without
	// joining a live channel first (see the package doc).
	LikelyFree bool
	// Wait bounds the wait: 0 means a single attempt, negative means
	// until ctx ends.
	Wait time.Duration
	// MaxSleep, if positive, caps each sleep between attempts.
	MaxSleep time.Duration
	// Poll, when set, makes the wait poll instead of listening (see
	// poll.go): it never subscribes, and Channel, Tag, Wake, AlsoWake,
	// Handoff and Outcome.Also go unused.
	Poll Backoff
	// Done, when set, is called once as Acquire returns, with its error
	// and the number of attempts it made (core.Client.StartAcquire's
	// end, for the client's Observer).
	Done func(err error, attempts int)
}

// counted is an Acquirer that counts the attempts of the one it wraps.
type counted struct {
	Acquirer
	n int
}

func (c *counted) Attempt(ctx context.Context, listening bool) (Outcome, error) {
	c.n++
	return c.Acquirer.Attempt(ctx, listening)
}

// Acquire runs the loop. It returns nil once an attempt acquired; an
// error matching core.ErrNotAcquired when it gave up, which also matches
// ctx.Err() when ctx ended and wraps the last attempt's error when that
// failed; core.ErrClosed when the client closed; or an attempt's error
// when Redis rejected the call (connection errors are retried, but for a
// single attempt). Every attempt runs under ctx's deadline, so Acquire
// returns by then, give or take core.Grace for GiveUp.
func Acquire(ctx context.Context, s Spec) (err error) {
	quitter, _ := s.Acquirer.(Quitter)
	handoffer, _ := s.Acquirer.(Handoffer)
	if s.Done != nil {
		c := &counted{Acquirer: s.Acquirer}
		s.Acquirer = c
		defer func() { s.Done(err, c.n) }()
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", core.ErrNotAcquired, ctx.Err())
	}
	defer func() {
		// An attempt the client's Close cut off fails with go-redis's
		// "client is closed" or a broken connection: the wait ended
		// because the client closed, as when it was asleep (the hub
		// closes first).
		if err != nil && ctx.Err() == nil && !errors.Is(err, core.ErrClosed) && hubClosed(s.Hub) {
			err = fmt.Errorf("%w (%w)", core.ErrClosed, err)
		}
		// A single attempt leaves nothing to undo.
		if err != nil && quitter != nil && s.Wait != 0 {
			if gerr := quitter.GiveUp(ctx); gerr != nil {
				err = fmt.Errorf("%w (leaving the queue failed: %v)", err, gerr)
			}
		}
	}()
	w := waiter{s: s, handoffer: handoffer}
	defer w.close()
	if s.Wait != 0 && s.Poll == nil && !s.LikelyFree {
		w.sub = s.Hub.Live(s.Channel, s.Wake, s.Tag)
	}
	o, err := s.Attempt(ctx, w.sub != nil)
	switch {
	case o.Acquired:
		return nil
	case err != nil && (s.Wait == 0 || !transport.Transient(err)):
		return transport.Ended(ctx, core.ErrNotAcquired, err)
	case s.Wait == 0:
		return core.ErrNotAcquired
	case s.Poll != nil:
		return poll(ctx, s, o, err)
	}
	return w.wait(ctx, o, err)
}

// A waiter is the state of one Acquire past its first attempt.
type waiter struct {
	s Spec
	// handoffer is s.Acquirer's, nil when it is not one.
	handoffer Handoffer
	sub       *hub.Subscription // on Spec.Channel
	also      *hub.Subscription // on Outcome.Also, once named
}

func (w *waiter) close() {
	if w.sub != nil {
		w.sub.Close()
	}
	if w.also != nil {
		w.also.Close()
	}
}

// wait sleeps and retries until the lock is acquired or the wait ends. o
// and err are the first attempt's.
func (w *waiter) wait(ctx context.Context, o Outcome, err error) error {
	s := w.s
	var deadline <-chan time.Time
	if s.Wait > 0 {
		t := time.NewTimer(s.Wait)
		defer t.Stop()
		deadline = t.C
	}
	// again: the last attempt does not count (it ran before a
	// subscription it needed was in place), try again at once.
	again := false
	if w.sub == nil {
		var jerr error
		if w.sub, jerr = s.Hub.Join(ctx, s.Channel, s.Wake, s.Tag); jerr != nil {
			return ended(ctx, jerr, err)
		}
		again = true
	}
	expired := false
	retry := time.NewTimer(0)
	defer retry.Stop()
	backoff := minBackoff
	for {
		if o.Also != "" && w.also == nil {
			var serr error
			if w.also, serr = s.Hub.Subscribe(ctx, o.Also, s.AlsoWake); serr != nil {
				return ended(ctx, serr, err)
			}
			again = true
		}
		if again {
			again = false
			o, err = s.Attempt(ctx, true)
		}
		// A last attempt that names a channel to listen on is made
		// once more, listening.
		subscribing := o.Also != "" && w.also == nil
		if done, end := exit(ctx, s, o, err, expired && (err != nil || !subscribing)); done {
			return end
		}
		ttl := o.TTL
		if err != nil {
			// Redis is unreachable (a restart, a failover): keep
			// waiting, retrying with backoff; the hub also wakes every
			// waiter when its connection comes back.
			ttl, backoff = backoff, min(2*backoff, maxBackoff)
		} else {
			backoff = minBackoff
		}
		if subscribing {
			continue
		}
		retry.Stop()
		if s.MaxSleep > 0 && (ttl < 0 || ttl > s.MaxSleep) {
			ttl = s.MaxSleep
		}
		var ttlUp <-chan time.Time
		if ttl >= 0 {
			retry.Reset(ttl)
			ttlUp = retry.C
		}
		var alsoC <-chan struct{}
		if w.also != nil {
			alsoC = w.also.C()
		}
		select {
		case <-w.sub.C():
			if note := w.sub.Note(); note != "" && w.handoffer != nil {
				ok, herr := w.handoffer.Handoff(ctx, note)
				if ok || herr != nil {
					return herr
				}
			}
		case <-alsoC:
		case <-ttlUp:
		case <-deadline:
			// One last attempt: the lock may have been freed just now.
			expired = true
		case <-ctx.Done():
			return ended(ctx, ctx.Err(), err)
		case <-s.Hub.Done():
			return core.ErrClosed
		}
		again = true
	}
}

// exit reports whether a wait ends after an attempt that found o and
// err, and with what: the wait's and poll's one exit rule. expired: the
// wait's bound has passed, so that this was its last attempt.
func exit(ctx context.Context, s Spec, o Outcome, err error, expired bool) (bool, error) {
	switch {
	case o.Acquired:
		return true, nil
	case err != nil && !transport.Transient(err):
		return true, transport.Ended(ctx, core.ErrNotAcquired, err)
	case !expired:
		return false, nil
	case err != nil:
		return true, fmt.Errorf("%w: gave up after %v: %w", core.ErrNotAcquired, s.Wait, err)
	}
	return true, fmt.Errorf("%w: gave up after %v", core.ErrNotAcquired, s.Wait)
}

// hubClosed reports whether h was closed: its client began to close.
func hubClosed(h *hub.Hub) bool {
	select {
	case <-h.Done():
		return true
	default:
		return false
	}
}

// Bounds of the retry backoff while Redis is unreachable.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
)

// ended maps a failure to subscribe, serr: the caller's end, wrapping
// last, the last attempt's error if it failed, or a closed hub.
func ended(ctx context.Context, serr, last error) error {
	if ctx.Err() != nil {
		return transport.Ended(ctx, core.ErrNotAcquired, last)
	}
	if serr == hub.ErrClosed {
		return core.ErrClosed
	}
	return serr
}
