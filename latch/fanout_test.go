package latch_test

import (
	"context"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
)

// TestThousandAwaiters: 1000 awaiters spread over 10 clients cost one
// subscription per client (PUBSUB NUMSUB 10), a read or two of the count
// per client to fall asleep and, once asleep, no Redis command at all,
// however long they wait; the last CountDown wakes every one of them
// within a bounded time, and they return without reading the count.
func TestThousandAwaiters(t *testing.T) {
	srv.RequireReal(t) // INFO commandstats
	const clients, awaiters = 10, 1000
	bg := context.Background()
	raw := srv.Client(t)
	rcs := make([]*relock.Client, clients)
	for i := range rcs {
		rcs[i] = newClient(t)
	}
	name := redistest.Key(t)
	channel := channelOf(name)
	l := latch.New(rcs[0], name, nil)
	if _, err := l.TrySetCount(bg, 2); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	gets := redistest.CommandCalls(t, raw)["get"]
	out := awaitAll(ctx, rcs, name, awaiters)
	redistest.Eventually(t, time.Minute, "every awaiter asleep", func() bool { return asleep() == awaiters })
	// A client's awaiters share a read before they listen and one after;
	// a third would follow a reconnection.
	if n := redistest.CommandCalls(t, raw)["get"] - gets; n > 3*clients {
		t.Errorf("%d reads of the count to put %d awaiters on %d clients to sleep, want at most %d", n, awaiters, clients, 3*clients)
	}
	if n := raw.PubSubNumSub(bg, channel).Val()[channel]; n != clients {
		t.Fatalf("PUBSUB NUMSUB %s = %d, want %d: one subscription per client", channel, n, clients)
	}
	// A CountDown that leaves the latch closed publishes nothing and
	// wakes nobody.
	if err := l.CountDown(bg); err != nil {
		t.Fatal(err)
	}

	before := redistest.CommandCalls(t, raw)
	time.Sleep(time.Second)
	after := redistest.CommandCalls(t, raw)
	for cmd, n := range after {
		switch d := n - before[cmd]; {
		case cmd == "info" && d == 1: // CommandCalls's own, the first one
		case cmd == "ping" && d <= clients:
			// A hub's health check of a connection silent for 15s: per
			// client, not per awaiter.
		case d != 0:
			t.Errorf("%d %s calls while %d awaiters waited", d, cmd, awaiters)
		}
	}
	if asleep() != awaiters {
		t.Fatal("awaiters woke while nothing happened")
	}

	gets = redistest.CommandCalls(t, raw)["get"]
	if err := latch.New(rcs[clients-1], name, nil).CountDown(bg); err != nil {
		t.Fatal(err)
	}
	opened := time.Now()
	last := collect(t, out, awaiters, 30*time.Second)
	if n := redistest.CommandCalls(t, raw)["get"] - gets; n != 0 {
		t.Errorf("%d reads of the count after the CountDown that opened the latch, want 0: its message says so", n)
	}
	woken := last.Sub(opened)
	t.Logf("%d awaiters on %d clients all returned %v after the last CountDown", awaiters, clients, woken)
	if woken > 10*time.Second {
		t.Fatalf("the last awaiter returned %v after the last CountDown, want within 10s", woken)
	}
}
