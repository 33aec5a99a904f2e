package nonreentrant

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/scripts"
)

// reacquire is the error Redisson's non-reentrant acquire, and ours,
// replies to an owner that holds the lock.
const reacquire = "NON_REENTRANT_REACQUIRE"

// acquire runs the acquire script once. Its replies: nil (acquired),
// {PTTL, foreign}, or the error reacquire, which refuses the wait. A
// listening waiter registers (hashlock.Join); one whose owner holds
// nothing on this client takes a grant it finds (hashlock.Queued); a Try
// leaves nothing behind. A try by such an owner (hashlock.Claim) is sent
// as a Try, which refuses the owner's hold it finds (a hold whose reply
// was lost, or a grant another call of the owner is about to take): a
// refusal counts no hold, so it cannot leave Redis a hold ahead of the
// client, which is all Claim is for.
func (m *Mutex) acquire(ctx context.Context, f hashlock.Field, mode hashlock.Mode) (hashlock.Result, error) {
	if mode == hashlock.Claim {
		mode = hashlock.Try
	}
	reply, err := m.l.C.EvalAcquire(ctx, core.NilReply, scripts.NonReentrantAcquire, m.acquireKeys, m.l.LeaseArg(), f.Arg, mode.Arg())
	var rerr redis.Error
	switch {
	case errors.As(err, &rerr) && strings.Contains(rerr.Error(), reacquire):
		return hashlock.Result{Refused: fmt.Errorf("owner holds the lock: %w", relock.ErrNotReentrant)}, nil
	case err != nil || reply == nil:
		return hashlock.Result{Acquired: err == nil}, err
	}
	r, ok := reply.([]any)
	if !ok || len(r) != 2 {
		return hashlock.Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	ttl, _ := r[0].(int64)
	foreign, _ := r[1].(int64)
	return hashlock.Result{Sleep: time.Duration(ttl) * time.Millisecond, Foreign: foreign == 1}, nil
}

// waitChannel is where a relock client's waiters on the lock are woken
// one at a time, as for the reentrant lock: "<lock channel>:<client id>",
// each waiter tagged with its owner number (waiters_prelude.lua).
// Redisson's releases wake waiters on the lock channel itself
// (Ops.Foreign).
func (m *Mutex) waitChannel(field string) (string, string) {
	return m.clientChannel, hashlock.Tag(field)
}

func (m *Mutex) giveUp(ctx context.Context, f hashlock.Field, holding bool) error {
	_, err := core.Eval(ctx, m.l.C.Redis, scripts.GiveUp, m.keys, f.Arg, m.l.C.PublishArg, m.l.LeaseArg(),
		core.Flag(holding), core.Flag(false))
	return err
}

func (m *Mutex) unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, last bool) (any, error) {
	return core.Eval(ctx, rdb, scripts.Unlock, m.keys, m.l.LeaseArg(), f.Arg, m.l.C.PublishArg, core.Flag(last))
}

func (m *Mutex) forceUnlock(ctx context.Context) (any, error) {
	return core.Eval(ctx, m.l.C.Redis, scripts.ForceUnlock, m.keys, m.l.C.PublishArg, m.l.LeaseArg())
}
