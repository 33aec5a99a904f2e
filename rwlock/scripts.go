package rwlock

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/renew"
	"github.com/relock-go/relock/internal/transport"
)

// upgradeReply is rw_write_acquire.lua's reply to a reader.
const upgradeReply = -3

// timeoutPrefix is the prefix of a reader's per-hold timeout keys.
func (s *Side) timeoutPrefix(readerField string) string {
	return layout.ReadTimeoutPrefix(s.l.Name, readerField)
}

// readerOf returns the reader field of an owner field of either side.
func (s *Side) readerOf(field string) string {
	if s.readers {
		return field
	}
	return field[:len(field)-len(":write")]
}

func (o *ops) Acquire(ctx context.Context, f hashlock.Field, _ hashlock.Mode, attempt int64) (hashlock.Result, error) {
	s := (*Side)(o)
	c, lease, field := s.l.C, s.l.LeaseArg(), f.Name
	var reply any
	var err error
	if s.readers {
		reply, err = c.T.EvalAcquire(ctx, transport.OneReply, lua.RWReadAcquire(), []string{s.l.Name, s.timeoutPrefix(field), s.l.Gone, s.tagged},
			lease, f.Arg, writerField(field), attempt)
	} else {
		reply, err = c.T.EvalAcquire(ctx, transport.OneReply, lua.RWWriteAcquire(), s.writeKeys[:],
			lease, f.Arg, s.readerOf(field), attempt)
	}
	switch {
	case err != nil || transport.OneReply(reply):
		return hashlock.Result{Acquired: err == nil}, err
	case reply == int64(upgradeReply):
		return hashlock.Result{Refused: fmt.Errorf("owner holds the read lock: %w", relock.ErrUpgrade)}, nil
	}
	return hashlock.PTTL(reply)
}

func (o *ops) Unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, _ bool) (any, error) {
	s := (*Side)(o)
	pub := s.l.C.T.PublishArg()
	if s.readers {
		return transport.Eval(ctx, rdb, lua.RWReadUnlock(),
			[]string{s.l.Name, s.keys[1], s.timeoutPrefix(f.Name), s.tagged}, f.Arg, pub)
	}
	return transport.Eval(ctx, rdb, lua.RWWriteUnlock(), s.keys, s.l.LeaseArg(), f.Arg, pub)
}

func (s *Side) forceScript(ctx context.Context, mode string) (any, error) {
	return transport.Eval(ctx, s.l.C.Redis, lua.RWForceUnlock(), []string{s.l.Name, s.keys[1], s.tagged}, mode, s.l.C.T.Publish())
}

// Channel is where both sides' waiters are woken, untagged: the lock's
// channel.
func (o *ops) Channel(string) (string, string) { return o.keys[1], "" }

// Renewal renews a writer's hash, and a reader's hash and the timeout
// keys of its holds.
func (o *ops) Renewal(f hashlock.Field) renew.Renewal {
	s := (*Side)(o)
	if !s.readers {
		return s.l.HashRenewal(f)
	}
	return renew.Renewal{
		Script: lua.RWReadRenew(),
		Keys:   []string{s.l.Name, s.timeoutPrefix(f.Name), s.tagged},
		Args:   []any{transport.Millis(s.l.C.WatchdogTimeout), f.Arg},
	}
}
