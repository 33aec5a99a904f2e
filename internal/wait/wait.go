// Package wait is the acquire loop every lock type shares: try, subscribe,
// retry, then sleep until a wake-up, the lock's TTL or the caller's end.
//
// The subscription is in place before the retry, so a release that
// happens between a failed attempt and the wait is never missed: either
// the retry sees the lock free, or the release's message arrives after
// the subscription. A waiter sends no Redis command while it sleeps.
package wait

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/pubsub"
)

// An Attempt tries once to acquire. It reports acquired, or the time
// after which the lock may be free on its own (negative: no expiry, wait
// for a wake-up). An error ends the wait.
type Attempt func() (ttl time.Duration, acquired bool, err error)

// A Spec describes one acquire.
type Spec struct {
	Hub     *pubsub.Hub
	Channel string  // where releases are announced
	Attempt Attempt // one acquire script call
	// GiveUp, if set, undoes what failed attempts left in Redis (a fair
	// lock's queue entry) when the wait ends without the lock.
	GiveUp func() error
	// Wait bounds the wait: 0 means a single attempt, negative means
	// until ctx ends.
	Wait time.Duration
	// MaxSleep, if positive, caps each sleep between attempts.
	MaxSleep time.Duration
}

// Acquire runs the loop. It returns nil once an attempt acquired; an
// error matching core.ErrNotAcquired (and ctx.Err() when ctx ended) when
// it gave up; core.ErrClosed when the client closed; or an attempt's
// error when Redis rejected the call (connection errors are retried, but
// for a single attempt).
func Acquire(ctx context.Context, s Spec) (err error) {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", core.ErrNotAcquired, ctx.Err())
	}
	defer func() {
		// A single attempt leaves nothing to undo.
		if err != nil && s.GiveUp != nil && s.Wait != 0 {
			if gerr := s.GiveUp(); gerr != nil {
				err = fmt.Errorf("%w (leaving the queue failed: %v)", err, gerr)
			}
		}
	}()
	_, ok, err := s.Attempt()
	switch {
	case ok:
		return nil
	case err != nil && (s.Wait == 0 || !transient(err)):
		return err
	case s.Wait == 0:
		return core.ErrNotAcquired
	}

	var deadline <-chan time.Time
	if s.Wait > 0 {
		t := time.NewTimer(s.Wait)
		defer t.Stop()
		deadline = t.C
	}
	sub, err := s.Hub.Subscribe(ctx, s.Channel)
	if err != nil {
		return ended(ctx, err)
	}
	defer sub.Close()

	expired := false
	retry := time.NewTimer(0)
	defer retry.Stop()
	backoff := minBackoff
	for {
		var ttl time.Duration
		ttl, ok, err = s.Attempt()
		switch {
		case ok:
			return nil
		case err != nil && (expired || !transient(err)):
			return err
		case err != nil:
			// Redis is unreachable (a restart, a failover): keep
			// waiting, retrying with backoff; the hub also wakes every
			// waiter when its connection comes back.
			ttl, backoff = backoff, min(2*backoff, maxBackoff)
		default:
			backoff = minBackoff
		}
		if expired {
			return fmt.Errorf("%w: gave up after %v", core.ErrNotAcquired, s.Wait)
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
		select {
		case <-sub.C():
		case <-ttlUp:
		case <-deadline:
			// One last attempt: the lock may have been freed just now.
			expired = true
		case <-ctx.Done():
			return ended(ctx, ctx.Err())
		case <-s.Hub.Done():
			return core.ErrClosed
		}
	}
}

// Bounds of the retry backoff while Redis is unreachable.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
)

// transient reports an error of the connection, not of Redis's reply: the
// same attempt may succeed once the server is back.
func transient(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// ended maps a failure to subscribe: the caller's end, or a closed hub.
func ended(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", core.ErrNotAcquired, ctx.Err())
	}
	if err == pubsub.ErrClosed {
		return core.ErrClosed
	}
	return err
}
