package clustertest_test

import (
	"context"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// semaphoreWaiting runs s.Acquire(ctx, 1) in a goroutine and delivers
// when it returned; an error other than ctx's end fails t. The goroutine
// is cancelled and waited for when t ends.
func semaphoreWaiting(t *testing.T, s *semaphore.Semaphore) <-chan time.Time {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Acquire(ctx, 1); err != nil {
			if ctx.Err() == nil {
				t.Errorf("semaphore waiter: %v", err)
			}
			return
		}
		got <- time.Now()
	}()
	t.Cleanup(func() { cancel(); <-done })
	return got
}

// TestSemaphoreShardedWakeUp: on a Redis 7 cluster, with sharded pub/sub
// (PubSubAuto), a semaphore waiter subscribes with SSUBSCRIBE on the
// master that owns its name's slot, where its channel
// redisson_sc:{<name>} also lives, and a release by another client
// (SPUBLISH of the new count) wakes it at once, on every master. A name
// with its own hash tag keeps its channel in the same slot.
func TestSemaphoreShardedWakeUp(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t)
	releaser := newClient(t, c.LockClient(t), nil)
	waiter := newClient(t, c.LockClient(t), nil)
	bg := context.Background()
	names := namesOnEachMaster(t, c, rdb, redistest.Key(t))
	tagged := "{" + redistest.Key(t) + "}:permits"
	names[masterOf(t, rdb, tagged)+" (hash tag)"] = tagged
	for where, name := range names {
		t.Run(where, func(t *testing.T) {
			channel := "redisson_sc:" + name
			if name != tagged {
				channel = "redisson_sc:{" + name + "}"
			}
			if a, b := slotOf(t, rdb, name), slotOf(t, rdb, channel); a != b {
				t.Fatalf("%s in slot %d, its channel %s in slot %d", name, a, channel, b)
			}
			master := masterOf(t, rdb, name)
			node := c.Node(master).Client(t)
			acquired := semaphoreWaiting(t, semaphore.New(waiter, name, nil))
			redistest.Eventually(t, wait, "waiter subscribed on "+master, func() bool {
				return node.PubSubShardNumSub(bg, channel).Val()[channel] == 1
			})
			for _, s := range c.Live() {
				if n := s.Client(t).PubSubNumSub(bg, channel).Val()[channel]; n != 0 {
					t.Fatalf("%d global subscriptions to %s on %s: the client is not in sharded mode", n, channel, s.Addr)
				}
			}
			time.Sleep(50 * time.Millisecond) // let the waiter's attempt after subscribing land
			released := time.Now()
			if err := semaphore.New(releaser, name, nil).Release(bg, 1); err != nil {
				t.Fatal(err)
			}
			handoff(t, acquired, released)
			if v := node.Get(bg, name).Val(); v != "0" {
				t.Fatalf("count on %s after the waiter acquired = %q, want 0", master, v)
			}
			redistest.Eventually(t, wait, "subscription dropped", func() bool {
				return node.PubSubShardNumSub(bg, channel).Val()[channel] == 0
			})
			rdb.Del(bg, name)
		})
	}
}

// TestSemaphoreSentinel: through failover clients (a master with two
// replicas behind three sentinels), permits are set, taken (the acquire
// waits for the replicas, SyncAuto), waited for on the master's channel
// and handed on by a release that wakes the waiter at once.
func TestSemaphoreSentinel(t *testing.T) {
	s := redistest.StartSentinel(t)
	bg := context.Background()
	holder := semaphore.New(newClient(t, s.Client(t), nil), redistest.Key(t), nil)
	name := holder.Name()
	waiter := semaphore.New(newClient(t, s.Client(t), nil), name, nil)
	master, err := s.MasterAddr(bg)
	if err != nil {
		t.Fatal(err)
	}
	node := s.Node(master).Client(t)
	count := func(want string) {
		t.Helper()
		if v := node.Get(bg, name).Val(); v != want {
			t.Fatalf("count on the master %s = %q, want %q", master, v, want)
		}
	}

	if ok, err := holder.TrySetPermits(bg, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if err := holder.Acquire(bg, 1); err != nil {
		t.Fatal(err)
	}
	count("0")
	replicated := 0
	for _, d := range s.Data {
		if d.Addr != master && d.Client(t).Get(bg, name).Val() == "0" {
			replicated++
		}
	}
	if replicated == 0 {
		t.Fatal("no replica had the acquire when it returned")
	}

	channel := "redisson_sc:{" + name + "}"
	acquired := semaphoreWaiting(t, waiter)
	redistest.Eventually(t, wait, "waiter subscribed on the master", func() bool {
		return node.PubSubNumSub(bg, channel).Val()[channel] == 1
	})
	time.Sleep(50 * time.Millisecond) // let the waiter's attempt after subscribing land
	released := time.Now()
	if err := holder.Release(bg, 1); err != nil {
		t.Fatal(err)
	}
	handoff(t, acquired, released)
	count("0")
	if err := waiter.Release(bg, 1); err != nil {
		t.Fatal(err)
	}
	count("1")
	node.Del(bg, name)
}
