package latch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/wait"
)

// Await waits until the latch is open: its count reached zero, was
// deleted, or was never set. It returns nil then; an error matching
// ctx.Err() when ctx ends first; relock.ErrClosed when the client
// closes. A wait leaves nothing in Redis.
func (l *Latch) Await(ctx context.Context) error {
	_, err := l.await(ctx, -1)
	return err
}

// TryAwait is Await waiting at most wait; 0 means one look at the count.
// It reports whether the latch was open; running out of time is false
// with a nil error.
func (l *Latch) TryAwait(ctx context.Context, wait time.Duration) (bool, error) {
	if wait < 0 {
		return false, fmt.Errorf("latch: negative wait %v: %w", wait, relock.ErrInvalidArgument)
	}
	return l.await(ctx, wait)
}

// await runs internal/wait's loop with the latch's opening as the thing
// acquired, waiting at most bound (negative: until ctx ends). The loop
// is what guarantees that no opening is missed: the waiter's
// subscription to the channel is in place before the read of the count
// that decides to sleep, so the message of any CountDown or Delete after
// that read reaches it; every message on a latch's channel wakes every
// waiter (pubsub.WakeAll), and a woken waiter reads the count again.
// Nothing is acquired, so there is nothing to give up.
func (l *Latch) await(ctx context.Context, bound time.Duration) (bool, error) {
	if err := l.check(); err != nil {
		return false, err
	}
	err := wait.Acquire(ctx, wait.Spec{
		Hub:      l.c.Hub,
		Channel:  l.channel,
		Acquirer: &awaiter{l: l, ctx: ctx},
		Wait:     bound,
		Done:     l.c.StartAcquire(ctx, "latch", l.name),
	})
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		return false, l.errorf("await", ctx.Err())
	case errors.Is(err, core.ErrNotAcquired):
		return false, nil // the wait ran out
	}
	return false, l.errorf("await", err)
}

// An awaiter is one wait on a latch, as internal/wait's loop drives it.
type awaiter struct {
	l   *Latch
	ctx context.Context
}

// Attempt reads the count: the latch is "acquired" when it is open. A
// closed latch has no time limit: only a message ends the sleep.
func (a *awaiter) Attempt(bool) (wait.Outcome, error) {
	n, err := a.l.count(a.ctx)
	return wait.Outcome{Acquired: err == nil && n <= 0, TTL: -1}, err
}

// Handoff is never called: a latch's messages carry no tags.
func (a *awaiter) Handoff(string) (bool, error) { return false, nil }

// GiveUp is never called: a wait leaves nothing to undo.
func (a *awaiter) GiveUp() error { return nil }
