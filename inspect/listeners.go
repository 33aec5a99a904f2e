package inspect

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// subscribers counts the subscribers of each channel: PUBSUB NUMSUB on a
// single server; on a cluster, where each node counts only its own
// connections, NUMSUB and SHARDNUMSUB on every master, summed. A node
// that refuses SHARDNUMSUB (a Redis before 7, or a channel of another
// node's slot) adds nothing. The count is a snapshot: a client that is
// reconnecting counts as none.
func subscribers(ctx context.Context, rdb redis.UniversalClient, channels []string) (map[string]int64, error) {
	counts := make(map[string]int64, len(channels))
	if len(channels) == 0 {
		return counts, nil
	}
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		n, err := rdb.PubSubNumSub(ctx, channels...).Result()
		if err != nil {
			return counts, err
		}
		for c, k := range n {
			counts[c] += k
		}
		return counts, nil
	}
	nodes, err := masters(ctx, rdb)
	if err != nil {
		return counts, err
	}
	for _, node := range nodes {
		pipe := node.Pipeline()
		global := pipe.PubSubNumSub(ctx, channels...)
		sharded := make([]*redis.MapStringIntCmd, len(channels))
		for i, c := range channels {
			sharded[i] = pipe.PubSubShardNumSub(ctx, c)
		}
		_, _ = pipe.Exec(ctx)
		n, err := global.Result()
		if err != nil {
			return counts, err
		}
		for c, k := range n {
			counts[c] += k
		}
		for _, cmd := range sharded {
			n, err := cmd.Result()
			var rerr redis.Error
			switch {
			case errors.As(err, &rerr):
				continue
			case err != nil:
				return counts, err
			}
			for c, k := range n {
				counts[c] += k
			}
		}
	}
	return counts, nil
}
