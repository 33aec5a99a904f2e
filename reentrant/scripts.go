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
// the lock's PTTL; with fencing, {1, token} or {0, PTTL}. A reentrant
// acquire never queues, so queue does not matter.
func (m *Mutex) acquire(ctx context.Context, field string, _ bool) (hashlock.Result, error) {
	c := m.l.C
	if !m.fencing {
		reply, err := c.EvalAcquire(ctx, core.NilReply, scripts.Acquire, []string{m.l.Name}, m.l.LeaseMillis(), field)
		if err != nil || reply == nil {
			return hashlock.Result{Acquired: err == nil}, err
		}
		ttl, ok := reply.(int64)
		if !ok {
			return hashlock.Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
		}
		return hashlock.Result{Sleep: time.Duration(ttl) * time.Millisecond}, nil
	}
	reply, err := c.EvalAcquire(ctx, fencedAcquired, scripts.FencedAcquire, []string{m.l.Name, m.tokenKey}, m.l.LeaseMillis(), field)
	if err != nil {
		return hashlock.Result{}, err
	}
	pair, ok := reply.([]any)
	if !ok || len(pair) != 2 {
		return hashlock.Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	acquired, _ := pair[0].(int64)
	n, _ := pair[1].(int64)
	if acquired == 1 {
		return hashlock.Result{Acquired: true, Token: n}, nil
	}
	return hashlock.Result{Sleep: time.Duration(n) * time.Millisecond}, nil
}

func (m *Mutex) unlock(ctx context.Context, rdb redis.Scripter, field string) (any, error) {
	return core.Eval(ctx, rdb, scripts.Unlock, []string{m.l.Name, m.channel},
		m.l.LeaseMillis(), field, m.l.C.Publish)
}

func (m *Mutex) forceUnlock(ctx context.Context) (any, error) {
	return core.Eval(ctx, m.l.C.Redis, scripts.ForceUnlock, []string{m.l.Name, m.channel}, m.l.C.Publish)
}

// fencedAcquired reports whether a fenced acquire's reply is {1, token}.
func fencedAcquired(reply any) bool {
	pair, ok := reply.([]any)
	return ok && len(pair) == 2 && pair[0] == int64(1)
}
