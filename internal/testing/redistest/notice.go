package redistest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
)

// NoticeChannel is the channel on which relock client id is told of
// force-unlocks of locks it holds: "relock_client:{<id>}", a message
// being the lock's name. It is spelt out here, not taken from relock, so
// that the tests pin the wire layout.
func NoticeChannel(id string) string { return "relock_client:{" + id + "}" }

// AwaitListening waits until relock client rc listens on its notice
// channel, which it subscribes in the background once it holds its
// first lock. raw is a client of the deployment as the default user; on
// a cluster every node is asked (a client with global pub/sub subscribes
// on any node of it, one with sharded pub/sub on the channel's master).
func AwaitListening(tb testing.TB, raw redis.UniversalClient, rc *relock.Client) {
	tb.Helper()
	ch := NoticeChannel(rc.ID())
	Eventually(tb, 5*time.Second, "client "+rc.ID()+" listening on "+ch, func() bool {
		return subscriptions(tb, raw, ch) > 0
	})
}

// subscriptions counts the subscriptions to channel, global or sharded,
// on every node of raw's deployment.
func subscriptions(tb testing.TB, raw redis.UniversalClient, channel string) int64 {
	tb.Helper()
	ctx := context.Background()
	cc, cluster := raw.(*redis.ClusterClient)
	var total atomic.Int64 // ForEachShard asks the nodes concurrently
	count := func(ctx context.Context, node *redis.Client) error {
		n := node.PubSubNumSub(ctx, channel).Val()[channel]
		if cluster {
			n += node.PubSubShardNumSub(ctx, channel).Val()[channel]
		}
		total.Add(n)
		return nil
	}
	if cluster {
		if err := cc.ForEachShard(ctx, count); err != nil {
			tb.Fatal(err)
		}
		return total.Load()
	}
	if err := count(ctx, raw.(*redis.Client)); err != nil {
		tb.Fatal(err)
	}
	return total.Load()
}
