package nonreentrant

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// Acquire runs the acquire script once; hashlock.Decode reads its
// replies: 1 (acquired), 0 (late), {PTTL, foreign}, or the error
// hashlock.Reacquire, which refuses the wait. A listening waiter registers (hashlock.Join); one whose owner holds
// nothing on this client takes a grant it finds (hashlock.Queued); a Try
// leaves nothing behind. A try by such an owner (hashlock.Claim) is sent
// as a Try, which refuses the owner's hold it finds (a hold whose reply
// was lost, or a grant another call of the owner is about to take): a
// refusal counts no hold, so it cannot leave Redis a hold ahead of the
// client, which is all Claim is for.
func (o *ops) Acquire(ctx context.Context, f hashlock.Field, mode hashlock.Mode, attempt int64) (hashlock.Result, error) {
	if mode == hashlock.Claim {
		mode = hashlock.Try
	}
	reply, err := o.l.C.T.RunAcquire(ctx, transport.OneReply, &o.acquireCall, o.l.LeaseArg(), f.Arg, mode.Arg(), attempt)
	return hashlock.Decode(reply, err, 2, hashlock.Waiting)
}

// Channel is where a relock client's waiters on the lock are woken one
// at a time, as for the reentrant lock: "<lock channel>:<client id>",
// each waiter tagged with its owner number (waiters_prelude.lua).
func (o *ops) Channel(field string) (string, string) {
	return o.clientChannel, hashlock.Tag(field)
}

// Foreign is where Redisson's releases wake waiters: the lock channel
// itself.
func (o *ops) Foreign(string) string { return o.keys[1] }

func (o *ops) GiveUp(ctx context.Context, f hashlock.Field, holding bool) error {
	_, err := transport.Eval(ctx, o.l.C.Redis, lua.GiveUp(), o.keys[:], f.Arg, o.l.C.T.PublishArg(), o.l.LeaseArg(),
		transport.Flag(holding), transport.Flag(false))
	return err
}

func (o *ops) Unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, last bool) (any, error) {
	return o.unlockCall.Run(ctx, rdb, o.l.LeaseArg(), f.Arg, o.l.C.T.PublishArg(), transport.Flag(last))
}

func (o *ops) ForceUnlock(ctx context.Context) (any, error) {
	return transport.Eval(ctx, o.l.C.Redis, lua.ForceUnlock(), o.keys[:], o.l.C.T.PublishArg(), o.l.LeaseArg())
}
