package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// What an error says of the call that failed: whether it got an answer,
// whether it ran, whether its caller's time ran out. A command whose
// reply was lost may still run later: core's late.go says what relock
// does about it.

// Transient reports an error of the connection or of the call's time, not
// of Redis's reply: the call may or may not have run, and the same call
// may succeed once the server answers again.
func Transient(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// Ended wraps err, the failure of a call whose caller's context ended
// meanwhile, so that it matches sentinel (nil: none) and ctx's error
// while keeping err, Redis's side of it, in the chain. With ctx not done
// it returns err.
func Ended(ctx context.Context, sentinel, err error) error {
	cerr := ctx.Err()
	if cerr == nil && Over(ctx) {
		// The deadline passed and cut the call off before ctx's own
		// timer fired.
		cerr = context.DeadlineExceeded
	}
	switch {
	case cerr == nil:
		return err
	case err == nil || err == cerr:
		if sentinel == nil {
			return cerr
		}
		return fmt.Errorf("%w: %w", sentinel, cerr)
	case errors.Is(err, cerr):
		// err says more than ctx's error (NotSent's, say): kept whole.
		if sentinel == nil || errors.Is(err, sentinel) {
			return err
		}
		return fmt.Errorf("%w: %w", sentinel, err)
	case sentinel == nil:
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return fmt.Errorf("%w: %w: %w", sentinel, cerr, err)
}

// Over reports whether ctx is done or its deadline has passed (its
// timer may not have fired yet).
func Over(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// Unanswered reports an error of a call that got no answer: a network
// error, or a deadline that ran out. The call may have run.
func Unanswered(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)
}

// IsDialError reports an error from connecting, before anything was
// sent: a call that failed so never ran.
func IsDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// Retry sends f, a clean-up that is safe to send twice, until Redis
// answers it, it fails for another reason than a lost answer (Transient),
// or ctx ends, with a backoff from 5 ms to 250 ms between tries. It is
// for background work (Detach): a clean-up whose answer was lost once
// may lose it again, and what it leaves undone stays for a lease.
func Retry(ctx context.Context, f func(ctx context.Context) error) error {
	backoff := 5 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil || !Transient(err) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		backoff = min(2*backoff, 250*time.Millisecond)
	}
}
