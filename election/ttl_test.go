package election_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// lockKey is the election's fair lock, whose TTL is the leader's lease.
func lockKey(name string) string { return "relock_election:{" + name + "}" }

// TestKilledLeaderTTL: with a TTL of 1 s, a leader's process killed with
// SIGKILL is succeeded within the TTL (+ 2 s of slack), though its
// client renews on the default 30 s WatchdogTimeout: the election's TTL,
// not the client's timeout, bounds the failover.
func TestKilledLeaderTTL(t *testing.T) {
	redistest.Parallel(t)
	srv.RequireReal(t)
	bg := context.Background()
	name := redistest.Key(t)
	const ttl = time.Second
	child, line := redistest.StartChild(t, "lead", srv.Addr, name, "0", strconv.FormatInt(ttl.Milliseconds(), 10))
	term, err := strconv.ParseInt(line, 10, 64)
	if err != nil {
		t.Fatalf("child printed %q, not its term", line)
	}
	raw := srv.Client(t)
	if d := raw.PTTL(bg, lockKey(name)).Val(); d <= 0 || d > ttl {
		t.Fatalf("the child's lock has PTTL %v, want its TTL %v at most", d, ttl)
	}
	next := election.New(newClient(t, nil), name, &election.Options{TTL: ttl})
	got := make(chan context.Context, 1)
	go func() {
		lctx, err := next.Campaign(bg, "next")
		if err != nil {
			t.Error(err)
			lctx = nil
		}
		got <- lctx
	}()
	queue := "redisson_lock_queue:" + lockKey(name)
	redistest.Eventually(t, 5*time.Second, "the next candidate queues", func() bool { return raw.LLen(bg, queue).Val() == 1 })
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case lctx := <-got:
		if lctx == nil {
			return
		}
		took := time.Since(killed)
		t.Logf("new leader %v after the kill (TTL %v, the child's WatchdogTimeout %v)", took, ttl, relock.DefaultWatchdogTimeout)
		if took > ttl+2*time.Second {
			t.Fatalf("new leader %v after the kill, over TTL + 2s", took)
		}
		if n := termT(t, lctx); n <= term {
			t.Fatalf("term %d after the killed leader's %d", n, term)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no new leader 10s after the kill")
	}
	if err := next.Resign(bg); err != nil {
		t.Fatal(err)
	}
}

// TestTTLKeepsLeadership: a live leader with a TTL of 1 s, on a client
// with the default 30 s WatchdogTimeout, keeps its leadership across five
// TTLs: its context stays alive, and the lock's PTTL stays within the
// TTL, renewed to it rather than to the client's timeout, and never runs
// out.
func TestTTLKeepsLeadership(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: holds a leadership for five seconds")
	}
	bg := context.Background()
	name := redistest.Key(t)
	const ttl = time.Second
	e := election.New(newClient(t, nil), name, &election.Options{TTL: ttl})
	lctx := campaignT(t, e, bg, "leader")
	raw := srv.Client(t)
	start := time.Now()
	lowest := ttl
	for time.Since(start) < 5*ttl {
		if lctx.Err() != nil {
			t.Fatalf("leadership ended %v after the election: %v", time.Since(start), context.Cause(lctx))
		}
		d, err := raw.PTTL(bg, lockKey(name)).Result()
		if err != nil || d <= 0 || d > ttl {
			t.Fatalf("lock's PTTL %v (%v) %v after the election, want in (0, %v]", d, err, time.Since(start), ttl)
		}
		lowest = min(lowest, d)
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("lowest PTTL over %v: %v", 5*ttl, lowest)
	if l, err := e.Leader(bg); err != nil || l.Value != "leader" {
		t.Fatalf("Leader = %+v, %v; want this leader", l, err)
	}
	if err := e.Resign(bg); err != nil {
		t.Fatal(err)
	}
}
