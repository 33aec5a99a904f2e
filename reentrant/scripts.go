package reentrant

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/scripts"
)

// acquire runs the acquire script once. Its replies: nil (acquired) or
// {PTTL, foreign}; with fencing, {1, token} or {0, PTTL, foreign}. A
// listening waiter registers (hashlock.Join); an owner that holds nothing
// on this client takes a grant it finds as it is (hashlock.Queued, and
// Claim for a try), but for a fenced one, which is never granted the lock
// (its Ops have no Grants, so it is sent Try and Join only); a Try leaves
// nothing behind.
func (m *Mutex) acquire(ctx context.Context, f hashlock.Field, mode hashlock.Mode) (hashlock.Result, error) {
	c := m.l.C
	if !m.fencing {
		reply, err := c.EvalAcquire(ctx, core.NilReply, scripts.Acquire, m.acquireKeys, m.l.LeaseArg(), f.Arg, mode.Arg())
		if err != nil || reply == nil {
			return hashlock.Result{Acquired: err == nil}, err
		}
		return taken(reply, 0)
	}
	reply, err := c.EvalAcquire(ctx, fencedAcquired, scripts.FencedAcquire, m.acquireKeys, m.l.LeaseArg(), f.Arg, mode.Arg())
	if err != nil {
		return hashlock.Result{}, err
	}
	if r, ok := reply.([]any); ok && len(r) == 2 && r[0] == int64(1) {
		token, _ := r[1].(int64)
		return hashlock.Result{Acquired: true, Token: token}, nil
	}
	return taken(reply, 1)
}

// taken reads the {PTTL, foreign} that an acquire replies when the lock
// is taken, from index i of reply.
func taken(reply any, i int) (hashlock.Result, error) {
	r, ok := reply.([]any)
	if !ok || len(r) != i+2 {
		return hashlock.Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	ttl, _ := r[i].(int64)
	foreign, _ := r[i+1].(int64)
	return hashlock.Result{Sleep: time.Duration(ttl) * time.Millisecond, Foreign: foreign == 1}, nil
}

// waitChannel is where a relock client's waiters on the lock are woken
// one at a time: "<lock channel>:<client id>", each waiter tagged with
// its owner number (waiters_prelude.lua). Redisson's releases wake
// waiters on the lock channel itself (Ops.Foreign).
func (m *Mutex) waitChannel(field string) (string, string) {
	return m.clientChannel, hashlock.Tag(field)
}

func (m *Mutex) giveUp(ctx context.Context, f hashlock.Field, holding bool) error {
	_, err := core.Eval(ctx, m.l.C.Redis, scripts.GiveUp, m.keys, f.Arg, m.l.C.PublishArg, m.l.LeaseArg(),
		core.Flag(holding), core.Flag(m.fencing))
	return err
}

func (m *Mutex) unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, last bool) (any, error) {
	return core.Eval(ctx, rdb, scripts.Unlock, m.keys, m.l.LeaseArg(), f.Arg, m.l.C.PublishArg, core.Flag(last))
}

func (m *Mutex) forceUnlock(ctx context.Context) (any, error) {
	return core.Eval(ctx, m.l.C.Redis, scripts.ForceUnlock, m.keys, m.l.C.PublishArg, m.l.LeaseArg())
}

// fencedAcquired reports whether a fenced acquire's reply is {1, token}.
func fencedAcquired(reply any) bool {
	pair, ok := reply.([]any)
	return ok && len(pair) == 2 && pair[0] == int64(1)
}
