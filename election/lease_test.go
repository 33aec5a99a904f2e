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

// TestKilledLeaderLease: with an election's WatchdogTimeout of 1 s, a
// leader's process killed with SIGKILL is succeeded within that lease
// (+ 2 s of slack), though its client renews on the default 30 s
// WatchdogTimeout: the election's lease, not the client's, bounds the
// failover.
func TestKilledLeaderLease(t *testing.T) {
	redistest.Parallel(t)
	srv.RequireReal(t)
	bg := context.Background()
	name := redistest.Key(t)
	const lease = time.Second
	child, line := redistest.StartChild(t, "lead", srv.Addr, name, "0", strconv.FormatInt(lease.Milliseconds(), 10))
	term, err := strconv.ParseInt(line, 10, 64)
	if err != nil {
		t.Fatalf("child printed %q, not its term", line)
	}
	raw := srv.Client(t)
	if d := raw.PTTL(bg, lockKey(name)).Val(); d <= 0 || d > lease {
		t.Fatalf("the child's lock has PTTL %v, want its lease %v at most", d, lease)
	}
	next := election.New(newClient(t, nil), name, &election.Options{WatchdogTimeout: lease})
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
		t.Logf("new leader %v after the kill (lease %v, the child's client's WatchdogTimeout %v)", took, lease, relock.DefaultWatchdogTimeout)
		if took > lease+2*time.Second {
			t.Fatalf("new leader %v after the kill, over the lease + 2s", took)
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

// TestLeaseKeepsLeadership: a live leader with an election's
// WatchdogTimeout of 1 s, on a client with the default 30 s, keeps its
// leadership across five leases: its context stays alive, and the lock's
// PTTL stays within the lease, renewed to it rather than to the client's,
// and never runs out.
func TestLeaseKeepsLeadership(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: holds a leadership for five seconds")
	}
	bg := context.Background()
	name := redistest.Key(t)
	const lease = time.Second
	e := election.New(newClient(t, nil), name, &election.Options{WatchdogTimeout: lease})
	lctx := campaignT(t, e, bg, "leader")
	raw := srv.Client(t)
	start := time.Now()
	lowest := lease
	for time.Since(start) < 5*lease {
		if lctx.Err() != nil {
			t.Fatalf("leadership ended %v after the election: %v", time.Since(start), context.Cause(lctx))
		}
		d, err := raw.PTTL(bg, lockKey(name)).Result()
		if err != nil || d <= 0 || d > lease {
			t.Fatalf("lock's PTTL %v (%v) %v after the election, want in (0, %v]", d, err, time.Since(start), lease)
		}
		lowest = min(lowest, d)
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("lowest PTTL over %v: %v", 5*lease, lowest)
	if l, err := e.Leader(bg); err != nil || l.Value != "leader" {
		t.Fatalf("Leader = %+v, %v; want this leader", l, err)
	}
	if err := e.Resign(bg); err != nil {
		t.Fatal(err)
	}
}
