package hub_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestShardedUnsubscribesForgotten: a sharded hub keeps nothing for a
// channel once its unsubscribe is acknowledged. Every distinct channel
// used and left once used to leave its count of unsubscribes in flight
// behind, 100 to 200 B a name, until its link reconnected; 10 000 more
// names must now leave the heap where it was, within a quarter of that.
func TestShardedUnsubscribesForgotten(t *testing.T) {
	c := redistest.StartCluster(t)
	rdb := c.Client(t)
	h := hub.New(rdb, true, nil)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("hub Close: %v", err)
		}
	})
	prefix := redistest.Key(t) + ":"
	ctx := context.Background()
	var nodes []*redis.Client
	for _, s := range c.Nodes {
		nodes = append(nodes, s.Client(t))
	}
	churn := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			s, err := h.Subscribe(ctx, prefix+strconv.Itoa(i), hub.WakeOne)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
		}
		redistest.Eventually(t, wait, "every channel unsubscribed", func() bool {
			for _, n := range nodes {
				if len(n.PubSubShardChannels(ctx, prefix+"*").Val()) > 0 {
					return false
				}
			}
			return true
		})
	}
	const names = 10_000
	churn(0, 1000) // warm the links and pools
	before := redistest.Heap()
	churn(1000, 1000+names)
	// The last acknowledgements may still be on their way to the hub:
	// the servers have forgotten the channels when they send them.
	grown := redistest.HeapBack(t, before, names*100/4, names, wait)
	t.Logf("heap %+d B after %d more names", grown, names)
	if waiters, channels := h.Stats(); waiters != 0 || channels != 0 {
		t.Fatalf("Stats() = %d waiters, %d channels after every subscription closed", waiters, channels)
	}
}
