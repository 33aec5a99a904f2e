package spinlock

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/transport"
)

// Acquire runs the acquire script once. The mode does not matter: a spin
// lock's waiters neither register nor listen, so every attempt is a
// plain try.
func (o *ops) Acquire(ctx context.Context, f hashlock.Field, _ hashlock.Mode, attempt int64) (hashlock.Result, error) {
	reply, err := o.l.C.T.RunAcquire(ctx, transport.OneReply, &o.acquireCall, o.l.LeaseArg(), f.Arg, attempt)
	if err != nil || transport.OneReply(reply) {
		return hashlock.Result{Acquired: err == nil}, err
	}
	return hashlock.PTTL(reply)
}

func (o *ops) Unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, last bool) (any, error) {
	return o.unlockCall.Run(ctx, rdb, o.l.LeaseArg(), f.Arg, transport.Flag(last))
}

// ForceUnlock deletes the hash, as Redisson's spin lock does with a DEL,
// and replies its holders (spin_force_unlock.lua).
func (o *ops) ForceUnlock(ctx context.Context) (any, error) {
	return o.forceCall.Run(ctx, o.l.C.Redis)
}
