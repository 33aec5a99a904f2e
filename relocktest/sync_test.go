package relocktest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/relocktest"
	"github.com/relock-go/relock/semaphore"
)

// bound is the wait bound of the tests' TryAcquire and TryAwait, by which
// a waiter whose wake-up was dropped looks again.
const bound = 2 * time.Second

// settle is how long a test lets a waiter whose subscription the server
// has confirmed take its look after that, before changing what it looks
// at: a round trip on a loopback connection, with room for a loaded
// machine.
const settle = 250 * time.Millisecond

// A semaphore's waiter whose grant message is dropped takes the permit
// granted to it when its bound ends.
func TestSemaphoreDropWakeups(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out a lease for the waiter's fallback (TestReentrantDropWakeups runs)")
	}
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		peer, err := k.NewClient(nil)
		must(t, err)
		name := k.Name("exports")
		other := semaphore.New(peer, name, nil)
		_, err = other.TrySetPermits(ctx, 1)
		must(t, err)
		must(t, other.Acquire(ctx, 1))

		sem := semaphore.New(k.Client(), name, nil)
		waiting := result(func() error { return sem.TryAcquire(ctx, 1, bound) })
		registered(t, k, layout.SemaphoreWaiters(name))
		k.DropWakeups(1)
		must(t, other.Release(ctx, 1))
		must(t, await(t, waiting))
		if n := k.Counts().Dropped; n != 1 {
			t.Fatalf("dropped %d wake-ups, want 1", n)
		}
		if n, err := sem.AvailablePermits(ctx); err != nil || n != 0 {
			t.Fatalf("AvailablePermits = %d, %v; want 0: the waiter holds the permit", n, err)
		}
	})
}

// Advance past a semaphore's TTL removes it, as its expiry would.
func TestSemaphoreAdvance(t *testing.T) {
	embedded(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		sem := semaphore.New(k.Client(), k.Name("exports"), &semaphore.Options{TTL: time.Minute})
		_, err := sem.TrySetPermits(ctx, 3)
		must(t, err)
		must(t, k.Advance(2*time.Minute))
		if n, err := sem.AvailablePermits(ctx); err != nil || n != 0 {
			t.Fatalf("AvailablePermits = %d, %v after its TTL; want 0", n, err)
		}
	})
}

// ExpireNow takes a held permit back: its context is cancelled with
// ErrLockLost, and the permit is available again.
func TestPermitsExpireNow(t *testing.T) {
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		sem := permits.New(k.Client(), k.Name("exports"), nil)
		_, err := sem.TrySetPermits(ctx, 1)
		must(t, err)
		p, err := sem.Acquire(ctx)
		must(t, err)
		must(t, k.ExpireNow(ctx, sem.Name()))
		if cause := cancelled(t, p.Context()); !errors.Is(cause, relock.ErrLockLost) {
			t.Fatalf("cause %v, want ErrLockLost", cause)
		}
		if n, err := sem.AvailablePermits(ctx); err != nil || n != 1 {
			t.Fatalf("AvailablePermits = %d, %v; want 1", n, err)
		}
	})
}

// Advance past a fixed lease expires the permit on the server's clock,
// which permits read: another acquire gets it at once.
func TestPermitsAdvance(t *testing.T) {
	embedded(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		sem := permits.New(k.Client(), k.Name("exports"), &permits.Options{Lease: time.Minute})
		_, err := sem.TrySetPermits(ctx, 1)
		must(t, err)
		_, err = sem.Acquire(ctx)
		must(t, err)
		if _, err := sem.TryAcquire(ctx, 0); !errors.Is(err, relock.ErrNotAcquired) {
			t.Fatalf("second permit: %v, want ErrNotAcquired", err)
		}
		must(t, k.Advance(2*time.Minute))
		p, err := sem.TryAcquire(ctx, 0)
		must(t, err)
		must(t, p.Release(ctx))
	})
}

// A latch's waiters wait for its messages: one whose opening message is
// dropped sleeps until its bound (Await would wait until its context
// ends), and then TryAwait's last look reads the count, sees the latch
// open and reports true; so does a look after that.
func TestLatchDropWakeups(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out a lease for the waiter's fallback (TestReentrantDropWakeups runs)")
	}
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		peer, err := k.NewClient(nil)
		must(t, err)
		name := k.Name("import")
		done := latch.New(peer, name, nil)
		_, err = done.TrySetCount(ctx, 1)
		must(t, err)

		l := latch.New(k.Client(), name, nil)
		opened := make(chan bool, 1)
		waiting := result(func() error {
			ok, err := l.TryAwait(ctx, bound)
			opened <- ok
			return err
		})
		// The hub counts a waiter as it asks for the subscription; the
		// server confirms it a round trip later, and the waiter looks at
		// the count once more then. A CountDown before that look would
		// be read, not missed.
		redistest.Eventually(t, patience, "the waiter subscribed", func() bool {
			if k.Client().Stats().Waiters != 1 {
				return false
			}
			n, err := k.Redis().PubSubNumSub(ctx, layout.LatchChannel(name)).Result()
			return err == nil && n[layout.LatchChannel(name)] == 1
		})
		time.Sleep(settle)
		k.DropWakeups(1)
		start := time.Now()
		must(t, done.CountDown(ctx))
		must(t, await(t, waiting))
		if n := k.Counts().Dropped; n != 1 {
			t.Fatalf("dropped %d wake-ups, want 1", n)
		}
		if !<-opened {
			t.Fatal("TryAwait reported the opened latch closed: its last look did not read the count")
		}
		if d := time.Since(start); d < bound/2 {
			t.Fatalf("TryAwait returned %v after the opening: its dropped message woke it", d)
		}
		if ok, err := l.TryAwait(ctx, 0); err != nil || !ok {
			t.Fatalf("TryAwait(0) = %v, %v after the opening; want true", ok, err)
		}
	})
}

// ExpireNow on an election ends the leadership with ErrLockLost, and the
// next candidate is elected.
func TestElectionExpireNow(t *testing.T) {
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		name := k.Name("billing")
		lead, err := election.New(k.Client(), name, nil).Campaign(ctx, "a")
		must(t, err)
		must(t, k.ExpireNow(ctx, name))
		if cause := cancelled(t, lead); !errors.Is(cause, relock.ErrLockLost) {
			t.Fatalf("cause %v, want ErrLockLost", cause)
		}
		peer, err := k.NewClient(nil)
		must(t, err)
		e := election.New(peer, name, nil)
		_, err = e.TryCampaign(ctx, "b", patience)
		must(t, err)
		must(t, e.Resign(ctx))
	})
}
