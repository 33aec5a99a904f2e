package latch_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
)

// Redisson's side is played from its source (RedissonCountDownLatch and
// CountDownLatchPubSub): trySetCount is SET if absent and PUBLISH "1";
// countDown is DECR, DEL at zero or below and PUBLISH "0" at exactly
// zero; delete is DEL and PUBLISH "1"; getCount is GET, nil read as 0;
// its listener decodes messages as numbers and opens its waiters' gate
// on 0.

// TestRedissonWakesRelock: relock's awaiters read a count Redisson set,
// read it again on a "1" that leaves it closed, once per client however
// many wait there, and keep waiting, and return on Redisson's countDown
// to zero.
func TestRedissonWakesRelock(t *testing.T) {
	srv.RequireReal(t) // INFO commandstats
	bg := context.Background()
	raw := srv.Client(t)
	clients := []*relock.Client{newClient(t), newClient(t)}
	name := redistest.Key(t)
	channel := channelOf(name)

	// Redisson's trySetCount(2).
	if err := raw.SetNX(bg, name, 2, 0).Err(); err != nil {
		t.Fatal(err)
	}
	raw.Publish(bg, channel, "1")
	if n, err := latch.New(clients[0], name, nil).Count(bg); err != nil || n != 2 {
		t.Fatalf("Count of Redisson's latch = %d, %v; want 2", n, err)
	}

	out := awaitAll(bg, clients, name, 4)
	redistest.Eventually(t, limit, "awaiters asleep", func() bool { return asleep() == 4 })
	gets := redistest.CommandCalls(t, raw)["get"]

	// Redisson's countDown to 1: no message. Then a "1" (as from a
	// trySetCount elsewhere, refused here): each client reads the count
	// again, once for its two awaiters, and they go back to sleep.
	if n := raw.Decr(bg, name).Val(); n != 1 {
		t.Fatalf("DECR = %d, want 1", n)
	}
	raw.Publish(bg, channel, "1")
	redistest.Eventually(t, limit, "each client reads the count again", func() bool {
		return redistest.CommandCalls(t, raw)["get"] >= gets+2
	})
	redistest.Eventually(t, limit, "awaiters asleep again", func() bool { return asleep() == 4 })
	pending(t, out, 100*time.Millisecond)
	if n := redistest.CommandCalls(t, raw)["get"] - gets; n != 2 {
		t.Fatalf("%d reads of the count after the message, want 2: one per client", n)
	}

	// Redisson's countDown to 0.
	if n := raw.Decr(bg, name).Val(); n != 0 {
		t.Fatalf("DECR = %d, want 0", n)
	}
	raw.Del(bg, name)
	raw.Publish(bg, channel, "0")
	collect(t, out, 4, limit)
}

// TestRedissonDeleteWakesRelock: Redisson's delete ("1" on the channel)
// wakes relock's awaiters, which find the latch open and return.
func TestRedissonDeleteWakesRelock(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	rc := newClient(t)
	name := redistest.Key(t)
	raw.Set(bg, name, 3, 0)
	out := awaitAll(bg, []*relock.Client{rc}, name, 2)
	redistest.Eventually(t, limit, "awaiters asleep", func() bool { return asleep() == 2 })
	raw.Del(bg, name)
	raw.Publish(bg, channelOf(name), "1")
	collect(t, out, 2, limit)
}

// TestRelockWakesRedisson: what relock writes and publishes is what
// Redisson reads: a decimal count that its getCount parses, "1" for a
// count set, and "0", which its listener decodes as the number 0 and
// opens its gate on, for the CountDown that reaches zero.
func TestRelockWakesRedisson(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	l := latch.New(newClient(t), name, nil)
	listener := subscribe(t, raw, channelOf(name))

	number := func() int64 {
		t.Helper()
		msg := receive(t, listener)
		n, err := strconv.ParseInt(msg, 10, 64)
		if err != nil {
			t.Fatalf("message %q is not a number Redisson's LongCodec decodes", msg)
		}
		return n
	}
	if _, err := l.TrySetCount(bg, 2); err != nil {
		t.Fatal(err)
	}
	if n := number(); n != 1 {
		t.Fatalf("TrySetCount published %d, want 1 (Redisson's NEW_COUNT_MESSAGE)", n)
	}
	if n, err := raw.Get(bg, name).Int64(); err != nil || n != 2 {
		t.Fatalf("Redisson's getCount would read %d, %v; want 2", n, err)
	}
	for range 2 {
		if err := l.CountDown(bg); err != nil {
			t.Fatal(err)
		}
	}
	if n := number(); n != 0 {
		t.Fatalf("the CountDown to zero published %d, want 0 (Redisson's ZERO_COUNT_MESSAGE)", n)
	}
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("the CountDown to zero left the count: Redisson's getCount would not read 0")
	}
}
