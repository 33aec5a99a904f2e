package latch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
)

// TestOpen: a latch without a count is open, as in Redisson: Await and
// TryAwait return at once, without subscribing.
func TestOpen(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	l := latch.New(newClient(t), name, nil)
	if err := l.Await(bg); err != nil {
		t.Fatalf("Await on an open latch: %v", err)
	}
	for _, wait := range []time.Duration{0, time.Hour} {
		if ok, err := l.TryAwait(bg, wait); err != nil || !ok {
			t.Fatalf("TryAwait(%v) on an open latch = %v, %v; want true", wait, ok, err)
		}
	}
	if n := raw.PubSubNumSub(bg, channelOf(name)).Val()[channelOf(name)]; n != 0 {
		t.Fatalf("%d subscribers after waits on an open latch, want 0", n)
	}
}

// TestCountDownWakes: awaiters on two clients return once the last
// CountDown reaches zero, and not before.
func TestCountDownWakes(t *testing.T) {
	bg := context.Background()
	clients := []*relock.Client{newClient(t), newClient(t)}
	name := redistest.Key(t)
	l := latch.New(clients[0], name, nil)
	if ok, err := l.TrySetCount(bg, 2); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	out := awaitAll(bg, clients, name, 6)
	redistest.Eventually(t, limit, "awaiters asleep", func() bool { return asleep() == 6 })
	if err := latch.New(clients[1], name, nil).CountDown(bg); err != nil {
		t.Fatal(err)
	}
	pending(t, out, 200*time.Millisecond)
	if err := l.CountDown(bg); err != nil {
		t.Fatal(err)
	}
	collect(t, out, 6, limit)
}

// TestDeleteWakes: a Delete opens the latch; relock's awaiters, woken
// by its "1", read the count, find none and return.
func TestDeleteWakes(t *testing.T) {
	bg := context.Background()
	rc := newClient(t)
	name := redistest.Key(t)
	l := latch.New(rc, name, nil)
	if _, err := l.TrySetCount(bg, 5); err != nil {
		t.Fatal(err)
	}
	out := awaitAll(bg, []*relock.Client{rc}, name, 3)
	redistest.Eventually(t, limit, "awaiters asleep", func() bool { return asleep() == 3 })
	if ok, err := l.Delete(bg); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	collect(t, out, 3, limit)
}

// TestTryAwait: TryAwait reports false, with no error, when the latch
// stays closed for its wait, true when it opens within it, and false at
// once for a wait of 0 on a closed latch.
func TestTryAwait(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	l := latch.New(newClient(t), name, nil)
	if _, err := l.TrySetCount(bg, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.TryAwait(bg, 0); err != nil || ok {
		t.Fatalf("TryAwait(0) on a closed latch = %v, %v; want false", ok, err)
	}
	start := time.Now()
	if ok, err := l.TryAwait(bg, 100*time.Millisecond); err != nil || ok {
		t.Fatalf("TryAwait(100ms) on a closed latch = %v, %v; want false", ok, err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("TryAwait(100ms) gave up after %v", d)
	}
	time.AfterFunc(50*time.Millisecond, func() {
		if err := l.CountDown(bg); err != nil {
			t.Error(err)
		}
	})
	if ok, err := l.TryAwait(bg, limit); err != nil || !ok {
		t.Fatalf("TryAwait with a CountDown within the wait = %v, %v; want true", ok, err)
	}
}

// TestAwaitEnds: an Await whose context ends returns an error matching
// ctx.Err(), leaves the latch as it was, and drops its subscription.
func TestAwaitEnds(t *testing.T) {
	redistest.Parallel(t)
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	l := latch.New(newClient(t), name, nil)
	if _, err := l.TrySetCount(bg, 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	time.AfterFunc(100*time.Millisecond, cancel)
	if err := l.Await(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Await with a cancelled context = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	if err := l.Await(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Await past its deadline = %v, want context.DeadlineExceeded", err)
	}
	if _, err := l.TryAwait(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TryAwait with an ended context = %v, want context.DeadlineExceeded", err)
	}
	if v := raw.Get(bg, name).Val(); v != "1" {
		t.Fatalf("count after ended waits: %q, want 1", v)
	}
	if keys := raw.Keys(bg, "*"+name+"*").Val(); len(keys) != 1 {
		t.Fatalf("keys naming the latch: %v, want only the count", keys)
	}
	// The channel lingers for redistest.Linger, then goes.
	redistest.Eventually(t, limit, "subscription dropped", func() bool {
		return raw.PubSubNumSub(bg, channelOf(name)).Val()[channelOf(name)] == 0
	})
}

// TestCloseEndsAwait: closing the client ends its Awaits with
// relock.ErrClosed at once, and later calls fail with it.
func TestCloseEndsAwait(t *testing.T) {
	bg := context.Background()
	rc := newClient(t)
	name := redistest.Key(t)
	l := latch.New(rc, name, nil)
	if _, err := l.TrySetCount(bg, 1); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Await(bg) }()
	redistest.Eventually(t, limit, "awaiter asleep", func() bool { return asleep() == 1 })
	within := time.After(2 * time.Second)
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, relock.ErrClosed) {
			t.Fatalf("Await ended by Close = %v, want relock.ErrClosed", err)
		}
	case <-within:
		t.Fatal("Await still waiting 2s after Close began")
	}
	if err := l.Await(bg); !errors.Is(err, relock.ErrClosed) {
		t.Fatalf("Await after Close = %v, want relock.ErrClosed", err)
	}
}

// TestReconnectRereads: a message lost while the subscription's
// connection is down (here, the count deleted without one, then the
// connection killed) does not strand the awaiters: the hub wakes them
// when the connection breaks, and they read the count again.
func TestReconnectRereads(t *testing.T) {
	s := redistest.Start(t)
	s.RequireReal(t) // CLIENT KILL
	bg := context.Background()
	raw := s.Client(t)
	rc := redistest.Relock(t, s.LockClient(t), nil)
	name := redistest.Key(t)
	if _, err := latch.New(rc, name, nil).TrySetCount(bg, 1); err != nil {
		t.Fatal(err)
	}
	out := awaitAll(bg, []*relock.Client{rc}, name, 3)
	redistest.Eventually(t, limit, "awaiters asleep", func() bool { return asleep() == 3 })
	raw.Del(bg, name)
	pending(t, out, 100*time.Millisecond)
	if err := raw.Do(bg, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	collect(t, out, 3, limit)
}
