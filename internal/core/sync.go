package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// EvalAcquire runs an acquire script like Eval and, when the client has
// SyncReplicas, sends WAIT right behind it on the same connection, so the
// replicas counted are those that have this very acquire. The script's
// first key picks the node on a cluster.
//
// When the reply is one that acquired reports as an acquire and fewer
// replicas confirm within SyncTimeout, the reply is returned together
// with an error matching ErrNotAcquired: the acquire did happen on the
// master, and the caller must undo it.
func (c *Client) EvalAcquire(ctx context.Context, acquired func(reply any) bool, s *redis.Script, keys []string, args ...any) (any, error) {
	if c.SyncReplicas == 0 {
		return Eval(ctx, c.Scripts, s, keys, args...)
	}
	var rdb redis.Cmdable = c.Scripts
	if cc, ok := c.Scripts.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(ctx, keys[0])
		if err != nil {
			return nil, err
		}
		rdb = node
	}
	reply, acked, err := evalWait(ctx, rdb, s, keys, args, c.SyncReplicas, c.SyncTimeout.Milliseconds())
	if err != nil {
		return nil, err
	}
	if acked < int64(c.SyncReplicas) && acquired(reply) {
		return reply, fmt.Errorf("%w: %d of %d replicas confirmed the acquire within %v",
			ErrNotAcquired, acked, c.SyncReplicas, c.SyncTimeout)
	}
	return reply, nil
}

// evalWait pipelines the script and WAIT on one connection. It sends the
// script as EVAL: an EVALSHA answered NOSCRIPT would still cost a full
// WAIT before the retry.
func evalWait(ctx context.Context, rdb redis.Cmdable, s *redis.Script, keys []string, args []any, replicas int, timeoutMs int64) (any, int64, error) {
	pipe := rdb.Pipeline()
	cmd := s.Eval(ctx, pipe, keys, args...)
	wait := pipe.Do(ctx, "wait", replicas, timeoutMs)
	_, _ = pipe.Exec(ctx)
	reply, err := cmd.Result()
	if errors.Is(err, redis.Nil) {
		reply, err = nil, nil
	}
	if err != nil {
		return nil, 0, err
	}
	acked, err := wait.Int64()
	return reply, acked, err
}

// NilReply reports a nil reply, an acquire script's "acquired".
func NilReply(reply any) bool { return reply == nil }
