package relock

import (
	"context"
	"errors"
	"fmt"

	"github.com/relock-go/relock/internal/transport"
)

// Do locks l for ctx's owner (a new one if ctx carries none), runs fn
// with the context Lock returned, and unlocks: also when fn panics, in
// which case the panic goes on once the lock is released. It returns
// fn's error joined with Unlock's: a lock lost while fn ran (its lease
// ran out, or it was force-unlocked or deleted) shows up there, as an
// error matching ErrLockLost, and fn's context was cancelled with that
// cause. When Lock fails, fn does not run and Do returns Lock's error.
//
// fn should watch its context: it is cancelled when the lock is lost
// (Options.LeaseMargin before the server could let someone else in,
// which is fn's time to stop), or when the Client closes.
func Do(ctx context.Context, l Locker, fn func(ctx context.Context) error) (err error) {
	if transport.IsNil(l) || fn == nil {
		return fmt.Errorf("relock: Do with a nil Locker or func: %w", ErrInvalidArgument)
	}
	lctx, err := l.Lock(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if uerr := l.Unlock(lctx); uerr != nil {
			err = errors.Join(err, lost(lctx, uerr))
		}
	}()
	return fn(lctx)
}

// lost is uerr, the error of an Unlock with lctx, with the cause of
// lctx's end when that was the lock's loss (the Unlock found no hold, or
// the notice of a ForceUnlock ended it first): the Unlock's own error
// would say only that nothing was held.
func lost(lctx context.Context, uerr error) error {
	cause := context.Cause(lctx)
	if !errors.Is(cause, ErrLockLost) || errors.Is(uerr, ErrLockLost) {
		return uerr
	}
	return fmt.Errorf("%w (%w)", uerr, cause)
}
