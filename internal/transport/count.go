package transport

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// MaxCount is the largest count a synchronizer takes: Redis's Lua numbers
// are doubles, which hold integers exactly only up to 2^53, and a script
// comparing a larger count would round it (a semaphore could then hand
// out more permits than it has). relock.MaxCount exports it.
//
// Only arguments are bounded. A count Redis stores may grow past
// MaxCount (releases add up), and stays exact there: the scripts change
// it with INCRBY and DECRBY, which take their argument as a string and
// add in 64 bits, compare it only with an argument of at most MaxCount,
// which rounding cannot cross (see semaphore_acquire.lua), and publish
// and return it as the key's string, never as a Lua number.
const MaxCount = 1 << 53

// CountOK reports whether n's magnitude is at most MaxCount.
func CountOK(n int64) bool { return n >= -MaxCount && n <= MaxCount }

// ReplyInt reads a script's count reply, an integer or, for a count read
// back from its key to stay exact, a decimal string.
func ReplyInt(reply any) (int64, error) {
	switch v := reply.(type) {
	case int64:
		return v, nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("unexpected reply %v", reply)
}

// NoCount returns err, the error of an acquire from the semaphore
// (package semaphore's or permits') whose count is key, saying that the
// semaphore has no count when that is why the acquire gave up: err
// matches Config.NotAcquired, ctx is not done (the wait ran out, not the
// caller), and key is absent (no count was ever set, or it was deleted
// or expired). That costs one GET, on the give-up path only, within
// ctx's deadline or OpTimeout. The acquire scripts read a missing count
// as Redisson's do, as no permit to take.
func (t *Transport) NoCount(ctx context.Context, key string, err error) error {
	if !errors.Is(err, t.cfg.NotAcquired) || ctx.Err() != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, OpTimeout)
		defer cancel()
	}
	if _, set, gerr := OptionalString(t.Redis.Get(ctx, key)); gerr != nil || set {
		return err
	}
	return fmt.Errorf("%w: no permits set (%q has no count: TrySetPermits sets one)", err, key)
}
