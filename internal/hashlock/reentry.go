package hashlock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
)

// Reacquire is the error reply with which Redisson's non-reentrant
// acquires (RedissonNonReentrantLock's and RedissonNonReentrantFairLock's)
// refuse an owner that holds the lock already. relock's
// (nonreentrant_acquire.lua, fair_acquire.lua's non-reentrant mode)
// reply it too, so that either side's refusal reads the same.
const Reacquire = "NON_REENTRANT_REACQUIRE"

// Reentry reads an acquire's error: when it is the Reacquire reply, a
// Result that refuses the wait with relock.ErrNotReentrant, and true.
func Reentry(err error) (Result, bool) {
	var rerr redis.Error
	if errors.As(err, &rerr) && strings.Contains(rerr.Error(), Reacquire) {
		return Result{Refused: fmt.Errorf("owner holds the lock: %w", relock.ErrNotReentrant)}, true
	}
	return Result{}, false
}

// RefuseHolder is Check for a non-reentrant lock's Lock and TryLock: it
// also returns an error matching relock.ErrNotReentrant, without a round
// trip, when ctx's owner holds the lock on this client. The acquire
// script refuses an owner that holds it in Redis only (a grant another
// call of the owner is about to take, or a hold whose local record went
// with a lost reply).
func (l *Lock) RefuseHolder(ctx context.Context) error {
	if err := l.Check(ctx); err != nil {
		return err
	}
	if key, ok := l.Key(ctx); ok && l.C.Holding(key) {
		return fmt.Errorf("%s: lock %q: %w", l.Pkg, l.shown(), relock.ErrNotReentrant)
	}
	return nil
}
