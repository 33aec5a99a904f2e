package clustertest_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestShardedWakeUp: on a Redis 7 cluster a client left at PubSubAuto
// subscribes its waiters with SSUBSCRIBE on the master that owns the
// lock's slot (seen by PUBSUB SHARDNUMSUB there, and no global
// subscription anywhere), and the holder's unlock (SPUBLISH) wakes the
// waiter at once: far sooner than the holder's 30s lease, which is how
// long a waiter deaf to the release would sleep.
func TestShardedWakeUp(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t)
	holder := newClient(t, c.Client(t), nil) // default 30s watchdog lease
	waiter := newClient(t, c.Client(t), nil)
	bg := context.Background()
	for master, name := range namesOnEachMaster(t, c, rdb, redistest.Key(t)) {
		t.Run(master, func(t *testing.T) {
			// The waiter listens on its client's channel.
			channel := "redisson_lock__channel:{" + name + "}:" + waiter.ID()
			node := c.Node(master).Client(t)
			hmu := reentrant.New(holder, name, nil)
			hctx, err := hmu.Lock(bg)
			if err != nil {
				t.Fatal(err)
			}
			if ttl, _ := hmu.TTL(bg); ttl < 20*time.Second {
				t.Fatalf("holder's lease %v, want the 30s default", ttl)
			}
			acquired := make(chan time.Time, 1)
			wmu := reentrant.New(waiter, name, nil)
			go func() {
				ctx, err := wmu.Lock(bg)
				acquired <- time.Now()
				if err != nil {
					t.Error(err)
					return
				}
				if err := wmu.Unlock(ctx); err != nil {
					t.Error(err)
				}
			}()
			redistest.Eventually(t, wait, "waiter subscribed on "+master, func() bool {
				return node.PubSubShardNumSub(bg, channel).Val()[channel] == 1
			})
			for _, s := range c.Live() {
				if n := s.Client(t).PubSubNumSub(bg, channel).Val()[channel]; n != 0 {
					t.Fatalf("%d global subscriptions to %s on %s: the client is not in sharded mode", n, channel, s.Addr)
				}
			}
			time.Sleep(50 * time.Millisecond) // let the waiter's retry after subscribing land
			released := time.Now()
			if err := hmu.Unlock(hctx); err != nil {
				t.Fatal(err)
			}
			var got time.Time
			select {
			case got = <-acquired:
			case <-time.After(40 * time.Second):
				t.Fatal("waiter never acquired")
			}
			handoff := got.Sub(released)
			t.Logf("%s on %s: acquired %v after the unlock", name, master, handoff)
			if handoff > 2*time.Second {
				t.Fatalf("waiter acquired %v after the unlock: not woken by the sharded release message", handoff)
			}
			redistest.Eventually(t, wait, "subscription dropped", func() bool {
				return node.PubSubShardNumSub(bg, channel).Val()[channel] == 0
			})
		})
	}
}

// renewals counts, per node address, the script calls a cluster client
// sends inside pipelines, and the pipelines and single script calls.
type renewals struct {
	pipes, single atomic.Int64
}

func (r *renewals) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *renewals) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			r.single.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (r *renewals) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.pipes.Add(1)
		return next(ctx, cmds)
	}
}

// scriptCalls sums the EVAL and EVALSHA calls a server has run.
func scriptCalls(t *testing.T, node *redis.Client) int64 {
	t.Helper()
	calls := redistest.CommandCalls(t, node)
	return calls["evalsha"] + calls["eval"]
}

// TestWatchdogAcrossMasters: one client holds 300 locks spread over every
// master, with a 1.5s watchdog lease, for several renewal rounds. Every
// lock stays held and in Redis with a fresh lease; each round is one
// pipeline that go-redis splits by node (each master runs its own locks'
// renewals) and no renewal fails with CROSSSLOT.
func TestWatchdogAcrossMasters(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	// Retries off and deadlines on: relock renews through this client and
	// its hook rather than a copy of its own.
	opts := c.Options()
	opts.MaxRetries, opts.ContextTimeoutEnabled = -1, true
	rdb := redis.NewClusterClient(opts)
	t.Cleanup(func() { rdb.Close() })
	count := &renewals{}
	rdb.AddHook(count)
	const timeout = 1500 * time.Millisecond // a round every 500ms
	rc := newClient(t, rdb, &relock.Options{WatchdogTimeout: timeout})

	masters, err := c.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base := redistest.Key(t)
	const locks = 300
	mus := make([]*reentrant.Mutex, locks)
	ctxs := make([]context.Context, locks)
	perMaster := map[string]int{}
	for i := range mus {
		mus[i] = reentrant.New(rc, fmt.Sprintf("%s:%d", base, i), nil)
		if ctxs[i], err = mus[i].Lock(ctx); err != nil {
			t.Fatal(err)
		}
		perMaster[masterOf(t, rdb, mus[i].Name())]++
	}
	t.Logf("locks per master: %v", perMaster)
	if len(perMaster) != len(masters) {
		t.Fatalf("locks on %d masters, want all %d", len(perMaster), len(masters))
	}
	before := map[string]int64{}
	for _, m := range masters {
		before[m] = scriptCalls(t, c.Node(m).Client(t))
	}
	pipes0, single0 := count.pipes.Load(), count.single.Load()
	const rounds = 5
	time.Sleep(rounds * timeout / 3)
	pipes, single := count.pipes.Load()-pipes0, count.single.Load()-single0
	t.Logf("%v: %d pipelines, %d single script calls", rounds*timeout/3, pipes, single)
	if pipes < rounds-2 || pipes > rounds+2 || single != 0 {
		t.Fatalf("%d pipelines and %d single calls in %d rounds' time: want about one pipeline a round", pipes, single, rounds)
	}
	for _, m := range masters {
		ran := scriptCalls(t, c.Node(m).Client(t)) - before[m]
		t.Logf("%s ran %d scripts for its %d locks", m, ran, perMaster[m])
		// At least three full rounds of its own locks' renewals.
		if ran < int64(3*perMaster[m]) {
			t.Errorf("%s ran %d scripts, want at least 3 rounds of %d renewals", m, ran, perMaster[m])
		}
	}
	for i, mu := range mus {
		if ctxs[i].Err() != nil {
			t.Fatalf("%s lost: %v", mu.Name(), context.Cause(ctxs[i]))
		}
		ttl, err := mu.TTL(ctx)
		if err != nil || ttl <= 0 || ttl > timeout {
			t.Fatalf("%s: TTL %v (%v), want within the %v lease", mu.Name(), ttl, err, timeout)
		}
	}
	for i, mu := range mus {
		if err := mu.Unlock(ctxs[i]); err != nil {
			t.Fatal(err)
		}
	}
}
