package fairlock

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// Acquire runs the fair acquire script once; hashlock.Decode reads its
// replies: 1 (acquired), 0 (late), {0, PTTL, foreign} (held),
// {1, ms, foreign} (free, but the queue head goes first), or in the
// non-reentrant mode the error hashlock.Reacquire, which refuses the
// wait. That mode sends a try by an owner that holds
// nothing on this client (hashlock.Claim) as a Try, as package
// nonreentrant does: a hold of the owner's that it finds (a grant
// another call of the owner is about to take, or a hold whose reply was
// lost) is refused, not taken, so a refusal never leaves Redis a hold
// ahead of the client.
func (o *ops) Acquire(ctx context.Context, f hashlock.Field, mode hashlock.Mode, attempt int64) (hashlock.Result, error) {
	reentrant := reentrantArg
	if o.nonReentrant {
		if mode == hashlock.Claim {
			mode = hashlock.Try
		}
		reentrant = nonReentrantArg
	}
	reply, err := o.l.C.T.RunAcquire(ctx, transport.OneReply, &o.acquireCall,
		o.l.LeaseArg(), f.Arg, o.waitArg, mode.Arg(), o.l.C.T.PublishArg(), reentrant, attempt)
	return hashlock.Decode(reply, err, 3, queued)
}

// queued reads the {turn, ms, foreign} of a fair acquire that did not
// take the lock: turn 1 when it is free but the queue head goes first,
// the wait in ms, and whether a waiter ahead is a Redisson client.
func queued(t hashlock.Taken) hashlock.Result {
	return hashlock.Result{Sleep: time.Duration(t[1]) * time.Millisecond, Turn: t[0] == 1, Foreign: t[2] == 1}
}

// nonReentrantArg and reentrantArg are fair_acquire.lua's ARGV[6] in
// the non-reentrant and the reentrant mode, boxed once.
var nonReentrantArg, reentrantArg any = "1", "0"

// Channel is where a relock client's waiters on the lock are told of
// grants and woken: "<prefix>:<client id>", one channel for all of the
// client's waiters, each tagged with its owner number. (Redisson clients
// wake a waiter on its own channel: see Foreign.)
func (o *ops) Channel(field string) (string, string) {
	return o.clientChannel, hashlock.Tag(field)
}

// Foreign is where Redisson clients wake a waiter: its own channel
// (layout.FairWaiterChannel).
func (o *ops) Foreign(field string) string { return layout.FairWaiterChannel(o.l.Name, field) }

func (o *ops) GiveUp(ctx context.Context, f hashlock.Field, holding bool) error {
	_, err := transport.Eval(ctx, o.l.C.Redis, lua.FairGiveUp(), o.keys[:4], f.Arg, o.waitArg, o.l.C.T.PublishArg(), o.l.LeaseArg(), transport.Flag(holding))
	return err
}

func (o *ops) Unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, last bool) (any, error) {
	return o.unlockCall.Run(ctx, rdb, o.l.LeaseArg(), f.Arg, o.l.C.T.PublishArg(), transport.Flag(last))
}

func (o *ops) ForceUnlock(ctx context.Context) (any, error) {
	return transport.Eval(ctx, o.l.C.Redis, lua.FairForceUnlock(), o.keys[:4], o.l.C.T.PublishArg(), o.l.LeaseArg())
}
