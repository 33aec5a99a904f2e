package relocktest_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/relocktest"
)

// ExpireNow on a name without a lease is an error, not a silent no-op.
func TestExpireNowNothing(t *testing.T) {
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		l := latch.New(k.Client(), k.Name("import"), nil)
		_, err := l.TrySetCount(ctx, 1)
		must(t, err)
		for _, name := range []string{l.Name(), k.Name("absent")} {
			if err := k.ExpireNow(ctx, name); err == nil {
				t.Errorf("ExpireNow(%q) = nil, want an error", name)
			}
		}
	})
}

// On a server of REDIS_ADDR, Advance is refused: its clock is not the
// Kit's.
func TestAdvanceNotEmbedded(t *testing.T) {
	if os.Getenv(relocktest.AddrEnv) == "" {
		t.Skip("redis-server is not installed")
	}
	t.Parallel()
	k := relocktest.New(t, nil)
	if err := k.Advance(1); !errors.Is(err, relocktest.ErrNotEmbedded) {
		t.Fatalf("Advance = %v, want ErrNotEmbedded", err)
	}
}

// Close releases what the Kit's clients hold and, on a server of
// REDIS_ADDR, deletes every key derived from the Kit's names (a fair
// lock's queue and timeouts, here), and nothing else.
func TestCloseCleans(t *testing.T) {
	addr := os.Getenv(relocktest.AddrEnv)
	if addr == "" {
		t.Skip("redis-server is not installed")
	}
	t.Parallel()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	bystander := t.Name() + ":bystander"
	must(t, rdb.Set(ctx, bystander, "1", 0).Err())
	defer rdb.Del(ctx, bystander)

	k, err := relocktest.Start(nil)
	must(t, err)
	name := k.Name("printer")
	mu := fair.New(k.Client(), name, nil)
	_, err = mu.Lock(ctx)
	must(t, err)
	peer, err := k.NewClient(nil)
	must(t, err)
	_, err = fair.New(peer, name, nil).TryLock(ctx, 0) // queues, and gives up
	if err == nil {
		t.Fatal("a second owner took a held fair lock")
	}
	prefix := name[:strings.LastIndex(strings.TrimSuffix(name, ":printer"), ":")+1]
	must(t, k.Close())
	keys, err := rdb.Keys(ctx, "*"+prefix+"*").Result()
	must(t, err)
	if len(keys) != 0 {
		t.Fatalf("Close left %v", keys)
	}
	if n, err := rdb.Exists(ctx, bystander).Result(); err != nil || n != 1 {
		t.Fatalf("Close deleted another key: %d, %v", n, err)
	}
}
