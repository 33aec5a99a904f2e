package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/redlock"
)

// BenchmarkLockUnlock measures an uncontended RedLock Lock+Unlock on the
// five shared masters: the masters are asked at once, so it should cost
// about two round trips, not ten.
func BenchmarkLockUnlock(b *testing.B) {
	rl := redlock.New(clientsOn(b, shared[:], nil), redistest.Key(b), nil)
	b.ReportAllocs()
	for b.Loop() {
		ctx, err := rl.Lock(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if err := rl.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSequentialBaseline is the cost RedLock avoids: the same
// acquire and release scripts sent to the five masters one after another,
// as Redisson's RedissonRedLock does.
func BenchmarkSequentialBaseline(b *testing.B) {
	name := redistest.Key(b)
	keys := []string{name, "redisson_lock__channel:{" + name + "}", "relock_lock_waiters:{" + name + "}"}
	rdbs := make([]*redis.Client, len(shared))
	for i, s := range shared {
		rdbs[i] = s.Client(b)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, rdb := range rdbs {
			if n, err := lua.Acquire().Run(ctx, rdb, []string{name, keys[2]}, 30000, "bench:1", "0").Int64(); n != 1 || err != nil {
				b.Fatalf("acquire: %d, %v", n, err)
			}
		}
		for _, rdb := range rdbs {
			if err := lua.Unlock().Run(ctx, rdb, keys, 30000, "bench:1", "PUBLISH", "1").Err(); err != nil {
				b.Fatalf("unlock: %v", err)
			}
		}
	}
}

// delay is a go-redis hook that adds a fixed latency to every command, a
// stand-in for masters in other racks.
type delay time.Duration

func (d delay) DialHook(next redis.DialHook) redis.DialHook { return next }
func (d delay) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		time.Sleep(time.Duration(d))
		return next(ctx, cmd)
	}
}
func (d delay) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// slowClients returns clients on the shared masters whose every command
// takes 2ms more. With retries off and deadlines on, relock runs its
// scripts through them (and their hook) rather than copies of its own.
func slowClients(b *testing.B) ([]*relock.Client, []*redis.Client) {
	rcs := make([]*relock.Client, len(shared))
	rdbs := make([]*redis.Client, len(shared))
	for i, s := range shared {
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, ContextTimeoutEnabled: true})
		rdb.AddHook(delay(2 * time.Millisecond))
		b.Cleanup(func() { rdb.Close() })
		rc, err := relock.New(rdb, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { rc.Close() })
		rcs[i], rdbs[i] = rc, rdb
	}
	return rcs, rdbs
}

// BenchmarkLockUnlockLatency2ms is BenchmarkLockUnlock with 2ms added to
// every command: about 2 x 2ms when the masters are asked at once.
func BenchmarkLockUnlockLatency2ms(b *testing.B) {
	rcs, _ := slowClients(b)
	rl := redlock.New(rcs, redistest.Key(b), nil)
	for b.Loop() {
		ctx, err := rl.Lock(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if err := rl.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSequentialLatency2ms is BenchmarkSequentialBaseline with 2ms
// added to every command: about 10 x 2ms.
func BenchmarkSequentialLatency2ms(b *testing.B) {
	_, rdbs := slowClients(b)
	name := redistest.Key(b)
	keys := []string{name, "redisson_lock__channel:{" + name + "}", "relock_lock_waiters:{" + name + "}"}
	ctx := context.Background()
	for b.Loop() {
		for _, rdb := range rdbs {
			if n, err := lua.Acquire().Run(ctx, rdb, []string{name, keys[2]}, 30000, "bench:1", "0").Int64(); n != 1 || err != nil {
				b.Fatalf("acquire: %d, %v", n, err)
			}
		}
		for _, rdb := range rdbs {
			if err := lua.Unlock().Run(ctx, rdb, keys, 30000, "bench:1", "PUBLISH", "1").Err(); err != nil {
				b.Fatalf("unlock: %v", err)
			}
		}
	}
}
