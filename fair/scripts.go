package fair

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/scripts"
)

// acquire runs the fair acquire script once. Replies: nil (acquired),
// {0, PTTL, foreign} (held), {1, ms, foreign} (free, but the queue head
// goes first).
func (m *Mutex) acquire(ctx context.Context, f hashlock.Field, mode hashlock.Mode) (hashlock.Result, error) {
	reply, err := m.l.C.EvalAcquire(ctx, core.NilReply, scripts.FairAcquire, m.keys,
		m.l.LeaseArg(), f.Arg, m.waitArg, mode.Arg(), m.l.C.PublishArg)
	if err != nil || reply == nil {
		return hashlock.Result{Acquired: err == nil}, err
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

// channel is where a relock client's waiters on the lock are told of
// grants and woken: "<prefix>:<client id>", one channel for all of the
// client's waiters, each tagged with its owner number. (Redisson clients
// wake a waiter on its own channel, "<prefix>:<owner field>": see Ops.Foreign.)
func (m *Mutex) channel(field string) (string, string) {
	return m.clientChannel, hashlock.Tag(field)
}

func (m *Mutex) giveUp(ctx context.Context, f hashlock.Field, holding bool) error {
	_, err := core.Eval(ctx, m.l.C.Redis, scripts.FairGiveUp, m.keys, f.Arg, m.waitArg, m.l.C.PublishArg, m.l.LeaseArg(), core.Flag(holding))
	return err
}

func (m *Mutex) unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, last bool) (any, error) {
	return core.Eval(ctx, rdb, scripts.FairUnlock, m.keys, m.l.LeaseArg(), f.Arg, m.l.C.PublishArg, core.Flag(last))
}

func (m *Mutex) forceUnlock(ctx context.Context) (any, error) {
	return core.Eval(ctx, m.l.C.Redis, scripts.FairForceUnlock, m.keys, m.l.C.PublishArg, m.l.LeaseArg())
}
