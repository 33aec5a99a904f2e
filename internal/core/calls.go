package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/relock-go/relock/internal/transport"
)

// A call's time belongs to its caller. Every Redis round trip a lock
// makes for a caller runs under the caller's deadline (OpContext), on
// clients that cut a call off there (transport.Transport.Scripts, Redis). What must
// still happen after the caller gave up (an unlock, leaving a wait queue,
// undoing an acquire whose reply was lost) gets Grace on the caller's
// time and goes on in the background after that (Settle, Detach, Outlive),
// bounded by OpTimeout (transport.OpTimeout, as in every comment of
// this package); what it cannot finish is left to the lease.

// Grace is how long past its caller's deadline (or cancellation) a call
// may run to finish what must not be left half done: an unlock, leaving a
// queue, undoing an acquire. A healthy server answers well within it;
// against a server that does not answer, the call returns after Grace and
// the work goes on in the background.
const Grace = 25 * time.Millisecond

// OpContext returns the context for one Redis call made on behalf of ctx:
// ctx itself when its deadline bounds the call, or when the client's own
// timeouts bound each round trip within OpTimeout (bounded); otherwise
// ctx bounded by OpTimeout. A call cut off at the deadline may have run:
// the caller undoes it (Settle, Outlive).
//
// A ctx that can be cancelled but has no deadline needs no timer of its
// own on a bounded client: go-redis cuts off reads and writes at a
// context's deadline only, never at its cancellation, so OpTimeout's
// timer would bound them no closer than the client's timeouts do, and
// the pool wait and the dial, which do heed cancellation, see ctx's.
func (c *Client) OpContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || c.bounded {
		return ctx, noop
	}
	return context.WithTimeout(ctx, transport.OpTimeout)
}

// CleanupContext returns the context for a call that must run even when
// ctx is done, an unlock or a clean-up: ctx's values, not its
// cancellation (a lock context cancelled while its unlock is under way,
// by a lost member of a MultiLock, say, must not cut the unlock short),
// with ctx's deadline when that is at least Grace away, Grace from now
// when ctx is done or its deadline nearer, and OpTimeout from now when it
// has none (but, as with OpContext, no deadline when the client's
// timeouts bound each round trip).
func (c *Client) CleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	now := time.Now()
	switch {
	case transport.Over(ctx) || ok && d.Sub(now) < Grace:
		d = now.Add(Grace)
	case ok:
	case c.bounded:
		return context.WithoutCancel(ctx), noop
	default:
		d = now.Add(transport.OpTimeout)
	}
	return context.WithDeadline(context.WithoutCancel(ctx), d)
}

func noop() {}

// Settle runs f, a clean-up that is safe to send twice (an unlock of an
// owner's last hold, leaving a queue, undoing an acquire by its owner's
// field), on CleanupContext(ctx), once the clean-ups of key under way in
// the background are done: a give-up sent before the undo it follows
// could run before the late acquire that undo guards against, and leave
// what that acquire registers. When f gets no answer in that time, or
// those clean-ups are not done by then, it is sent in the background
// after them (Detach), and the error says so; the next acquire of key
// waits for it.
func (c *Client) Settle(ctx context.Context, key HoldKey, f func(ctx context.Context) error) error {
	cctx, cancel := c.CleanupContext(ctx)
	err := c.AwaitPending(cctx, key)
	if err == nil {
		err = f(cctx)
	} else {
		err = fmt.Errorf("an earlier clean-up still under way: %w", err)
	}
	cancel()
	if err == nil || !transport.Transient(err) {
		return err
	}
	if c.Detach(ctx, key, func(ctx context.Context) { _ = transport.Retry(ctx, f) }) {
		return fmt.Errorf("%w (sent again in the background, for up to %v; the lease bounds what it cannot do)", err, transport.OpTimeout)
	}
	return err
}

// ErrInBackground is what Outlive's error wraps when the caller left
// before f returned: late, not the caller, deals with f's result.
var ErrInBackground = errors.New("the call goes on in the background")

// Outlive runs f, a call whose effect must not be lost to the caller's
// deadline (a semaphore's acquire, whose permits nobody else could give
// back, or its release, which must not be sent twice), so that the
// caller still gets its time back: f runs on a context of its own
// (BackgroundContext: ctx's values, bounded by OpTimeout and Shutdown's
// cut-off) in a goroutine the client owns, while the caller waits for it
// until ctx ends, and Grace after that. When f has not returned by then,
// Outlive returns an error wrapping context.Cause(ctx) (ctx.Err() unless
// ctx was cancelled with a cause of its own, which it then matches
// instead) and ErrInBackground, and once f returns late (when not nil)
// is called with its result, in the background. After Shutdown began it
// runs nothing and returns ErrClosed.
//
// A ctx without a deadline runs f on the caller's goroutine instead, on
// ctx's values and not its cancellation (OpContext: bounded by
// OpTimeout, or by the client's own timeouts when they bound each round
// trip): go-redis cuts a command off at a deadline only, never at a
// cancellation, so such a ctx could not cut f's reply off, and its call
// ends when the server answers or the client's timeouts run out, as
// every call on such a ctx does. This spares the goroutine and its
// scheduling on the path of every acquire and release made with a
// cancellable context.
func (c *Client) Outlive(ctx context.Context, f func(ctx context.Context) (any, error), late func(ctx context.Context, reply any, err error)) (any, error) {
	if _, ok := ctx.Deadline(); !ok {
		octx, cancel := c.OpContext(context.WithoutCancel(ctx))
		defer cancel()
		return f(octx)
	}
	type result struct {
		reply any
		err   error
	}
	done := make(chan result, 1)
	var mu sync.Mutex // guards left
	left := false     // the caller stopped waiting: late gets the result
	ran := c.Background(func() {
		octx, cancel := c.BackgroundContext(ctx)
		defer cancel()
		reply, err := f(octx)
		mu.Lock()
		gone := left
		mu.Unlock()
		if gone {
			if late != nil {
				late(octx, reply, err)
			}
			return
		}
		done <- result{reply, err}
	})
	if !ran {
		return nil, ErrClosed
	}
	var grace <-chan time.Time
	ctxDone := ctx.Done()
	for {
		select {
		case r := <-done:
			return r.reply, r.err
		case <-ctxDone:
			t := time.NewTimer(Grace)
			defer t.Stop()
			grace, ctxDone = t.C, nil
			continue
		case <-grace:
		}
		mu.Lock()
		left = true
		mu.Unlock()
		// f may have finished between the timer and left.
		select {
		case r := <-done:
			if late != nil {
				c.Background(func() {
					lctx, cancel := c.BackgroundContext(ctx)
					defer cancel()
					late(lctx, r.reply, r.err)
				})
			}
		default:
		}
		return nil, fmt.Errorf("%w: %w, for up to %v", context.Cause(ctx), ErrInBackground, transport.OpTimeout)
	}
}
