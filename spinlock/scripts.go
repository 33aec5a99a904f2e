package spinlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/scripts"
)

// acquire runs the acquire script once. The mode does not matter: a spin
// lock's waiters neither register nor listen, so every attempt is a
// plain try.
func (m *Mutex) acquire(ctx context.Context, f hashlock.Field, _ hashlock.Mode) (hashlock.Result, error) {
	reply, err := m.l.C.EvalAcquire(ctx, core.NilReply, scripts.SpinAcquire, m.keys, m.l.LeaseArg(), f.Arg)
	if err != nil || reply == nil {
		return hashlock.Result{Acquired: err == nil}, err
	}
	ttl, ok := reply.(int64)
	if !ok {
		return hashlock.Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	return hashlock.Result{Sleep: time.Duration(ttl) * time.Millisecond}, nil
}

func (m *Mutex) unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, last bool) (any, error) {
	return core.Eval(ctx, rdb, scripts.SpinUnlock, m.keys, m.l.LeaseArg(), f.Arg, core.Flag(last))
}

// forceUnlock deletes the hash, as Redisson's spin lock does with a DEL,
// and replies its holders (spin_force_unlock.lua).
func (m *Mutex) forceUnlock(ctx context.Context) (any, error) {
	return core.Eval(ctx, m.l.C.Redis, scripts.SpinForceUnlock, m.keys)
}
