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
// {0, PTTL} (held), {1, ms} (free, but the queue head goes first).
func (m *Mutex) acquire(ctx context.Context, field string, queue bool) (hashlock.Result, error) {
	join := "0"
	if queue {
		join = "1"
	}
	reply, err := m.l.C.EvalAcquire(ctx, core.NilReply, scripts.FairAcquire, m.keys,
		m.l.LeaseMillis(), field, m.waitMs, join)
	if err != nil || reply == nil {
		return hashlock.Result{Acquired: err == nil}, err
	}
	pair, ok := reply.([]any)
	if !ok || len(pair) != 2 {
		return hashlock.Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	turn, _ := pair[0].(int64)
	ms, _ := pair[1].(int64)
	return hashlock.Result{Sleep: time.Duration(ms) * time.Millisecond, Turn: turn == 1}, nil
}

func (m *Mutex) giveUp(ctx context.Context, field string) error {
	_, err := core.Eval(ctx, m.l.C.Redis, scripts.FairGiveUp, m.keys, field, m.waitMs, m.l.C.Publish)
	return err
}

func (m *Mutex) unlock(ctx context.Context, rdb redis.Scripter, field string) (any, error) {
	return core.Eval(ctx, rdb, scripts.FairUnlock, m.keys, m.l.LeaseMillis(), field, m.l.C.Publish)
}

func (m *Mutex) forceUnlock(ctx context.Context) (any, error) {
	return core.Eval(ctx, m.l.C.Redis, scripts.FairForceUnlock, m.keys, m.l.C.Publish)
}
