package redistest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
)

// A ScriptCounter is a go-redis hook that counts the script calls (EVAL,
// EVALSHA) made through the client it is added to. relock sends its
// scripts through the caller's client when that has retries off and
// deadlines on (MaxRetries -1, ContextTimeoutEnabled), so a counter on
// such a client sees every one.
type ScriptCounter struct{ n atomic.Int64 }

// N reports the script calls counted so far.
func (s *ScriptCounter) N() int64 { return s.n.Load() }

// IsScript reports whether cmd runs a script.
func IsScript(cmd redis.Cmder) bool { return cmd.Name() == "evalsha" || cmd.Name() == "eval" }

// DialHook is part of redis.Hook.
func (s *ScriptCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook is part of redis.Hook.
func (s *ScriptCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if IsScript(cmd) {
			s.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook is part of redis.Hook.
func (s *ScriptCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if IsScript(cmd) {
				s.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// Watch adds s to rdb where it sees every script call: on a cluster
// client, to each node's client (relock sends an acquire that waits for
// replicas straight to the slot's master), which every call through the
// cluster client passes too; on others, to rdb itself. Call it before
// rdb is used.
func (s *ScriptCounter) Watch(rdb redis.UniversalClient) {
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		cc.OnNewNode(func(node *redis.Client) { node.AddHook(s) })
		return
	}
	rdb.AddHook(s)
}

// Counted returns a relock client on s, as the limited user, whose script
// calls c counts: its go-redis client has retries off and deadlines on,
// so relock sends every script through it rather than through a copy of
// its own. Both close when tb ends.
func (s *Server) Counted(tb testing.TB, c *ScriptCounter) *relock.Client {
	tb.Helper()
	o := s.LockOptions()
	o.MaxRetries, o.ContextTimeoutEnabled = -1, true
	rdb := redis.NewClient(o)
	tb.Cleanup(func() { rdb.Close() })
	c.Watch(rdb)
	return Relock(tb, rdb, nil)
}
