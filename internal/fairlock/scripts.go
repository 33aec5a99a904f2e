package fairlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// Acquire runs the fair acquire script once. Replies: 1 (acquired), 0
// (late: hashlock.Result.Late),
// {0, PTTL, foreign} (held), {1, ms, foreign} (free, but the queue head
// goes first), or in the non-reentrant mode the error hashlock.Reacquire,
// which refuses the wait. That mode sends a try by an owner that holds
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
	if r, ok := hashlock.Reentry(err); ok {
		return r, nil
	}
	if err != nil || transport.OneReply(reply) {
		return hashlock.Result{Acquired: err == nil}, err
	}
	if reply == hashlock.LateReply {
		return hashlock.Result{Late: true}, nil
	}
	r, ok := reply.([]any)
	if !ok || len(r) != 3 {
		return hashlock.Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	turn, _ := r[0].(int64)
	ms, _ := r[1].(int64)
	foreign, _ := r[2].(int64)
	return hashlock.Result{Sleep: time.Duration(ms) * time.Millisecond, Turn: turn == 1, Foreign: foreign == 1}, nil
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
