package rwlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/scripts"
	"github.com/relock-go/relock/watchdog"
)

// upgradeReply is rw_write_acquire.lua's reply to a reader.
const upgradeReply = -3

// timeoutPrefix is the prefix of a reader's per-hold timeout keys.
func (s *Side) timeoutPrefix(readerField string) string {
	return s.tagged + ":" + readerField + ":rwlock_timeout"
}

// readerOf returns the reader field of an owner field of either side.
func (s *Side) readerOf(field string) string {
	if s.readers {
		return field
	}
	return field[:len(field)-len(":write")]
}

func (s *Side) acquire(ctx context.Context, f hashlock.Field, _ hashlock.Mode) (hashlock.Result, error) {
	c, lease, field := s.l.C, s.l.LeaseArg(), f.S
	var reply any
	var err error
	if s.readers {
		reply, err = c.EvalAcquire(ctx, core.NilReply, scripts.RWReadAcquire, []string{s.l.Name, s.timeoutPrefix(field)},
			lease, f.Arg, writerField(field))
	} else {
		reply, err = c.EvalAcquire(ctx, core.NilReply, scripts.RWWriteAcquire, []string{s.l.Name},
			lease, f.Arg, s.readerOf(field))
	}
	if err != nil || reply == nil {
		return hashlock.Result{Acquired: err == nil}, err
	}
	ttl, ok := reply.(int64)
	switch {
	case !ok:
		return hashlock.Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
	case ttl == upgradeReply:
		return hashlock.Result{Refused: fmt.Errorf("owner holds the read lock: %w", relock.ErrUpgrade)}, nil
	}
	return hashlock.Result{Sleep: time.Duration(ttl) * time.Millisecond}, nil
}

func (s *Side) unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, _ bool) (any, error) {
	pub := s.l.C.PublishArg
	if s.readers {
		return core.Eval(ctx, rdb, scripts.RWReadUnlock,
			[]string{s.l.Name, s.keys[1], s.timeoutPrefix(f.S), s.tagged}, f.Arg, pub)
	}
	return core.Eval(ctx, rdb, scripts.RWWriteUnlock, s.keys, s.l.LeaseArg(), f.Arg, pub)
}

func (s *Side) forceScript(ctx context.Context, mode string) (any, error) {
	return core.Eval(ctx, s.l.C.Redis, scripts.RWForceUnlock, []string{s.l.Name, s.keys[1], s.tagged}, mode, s.l.C.Publish)
}

func (s *Side) readRenewal(f hashlock.Field) watchdog.Renewal {
	return watchdog.Renewal{
		Script: scripts.RWReadRenew,
		Keys:   []string{s.l.Name, s.timeoutPrefix(f.S)},
		Args:   []any{core.Millis(s.l.C.WatchdogTimeout), f.Arg},
	}
}
