package reentrant

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// Acquire runs the acquire script once. Its replies: 1 (acquired) or
// {PTTL, foreign}; with fencing, {1, token} or {0, PTTL, foreign}. A
// listening waiter registers (hashlock.Join); an owner that holds nothing
// on this client takes a grant it finds as it is (hashlock.Queued, and
// Claim for a try), but for a fenced one, which is never granted the lock
// (its Ops have no Grants, so it is sent Try and Join only); a Try leaves
// nothing behind.
func (o *ops) Acquire(ctx context.Context, f hashlock.Field, mode hashlock.Mode, attempt int64) (hashlock.Result, error) {
	c := o.l.C
	if !o.fencing {
		reply, err := c.T.RunAcquire(ctx, transport.OneReply, &o.acquireCall, o.l.LeaseArg(), f.Arg, mode.Arg(), attempt)
		return hashlock.Decode(reply, err, 2, hashlock.Waiting)
	}
	reply, err := c.T.RunAcquire(ctx, fencedAcquired, &o.acquireCall, o.l.LeaseArg(), f.Arg, mode.Arg(), attempt)
	if err == nil && fencedAcquired(reply) {
		token, _ := reply.([]any)[1].(int64)
		return hashlock.Result{Acquired: true, Token: token}, nil
	}
	return hashlock.Decode(reply, err, 3, fencedWaiting)
}

// fencedWaiting reads the {0, PTTL, foreign} of a fenced acquire that
// did not take the lock as hashlock.Waiting reads acquire.lua's.
func fencedWaiting(t hashlock.Taken) hashlock.Result {
	return hashlock.Waiting(hashlock.Taken{t[1], t[2]})
}

// Channel is where a relock client's waiters on the lock are woken one
// at a time: "<lock channel>:<client id>", each waiter tagged with its
// owner number (waiters_prelude.lua).
func (o *ops) Channel(field string) (string, string) {
	return o.clientChannel, hashlock.Tag(field)
}

// Foreign is where Redisson's releases wake waiters: the lock channel
// itself.
func (o *ops) Foreign(string) string { return o.keys[1] }

func (o *ops) GiveUp(ctx context.Context, f hashlock.Field, holding bool) error {
	_, err := transport.Eval(ctx, o.l.C.Redis, lua.GiveUp(), o.keys[:], f.Arg, o.l.C.T.PublishArg(), o.l.LeaseArg(),
		transport.Flag(holding), transport.Flag(o.fencing))
	return err
}

func (o *ops) Unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, last bool) (any, error) {
	return o.unlockCall.Run(ctx, rdb, o.l.LeaseArg(), f.Arg, o.l.C.T.PublishArg(), transport.Flag(last))
}

func (o *ops) ForceUnlock(ctx context.Context) (any, error) {
	return transport.Eval(ctx, o.l.C.Redis, lua.ForceUnlock(), o.keys[:], o.l.C.T.PublishArg(), o.l.LeaseArg())
}

// fencedAcquired reports whether a fenced acquire's reply is {1, token}.
func fencedAcquired(reply any) bool {
	pair, ok := reply.([]any)
	return ok && len(pair) == 2 && pair[0] == int64(1)
}
