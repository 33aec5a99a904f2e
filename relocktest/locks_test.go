package relocktest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/nonreentrant"
	"github.com/relock-go/relock/redlock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/relocktest"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/spinlock"
	"github.com/relock-go/relock/watchdog"
)

// ExpireNow cancels a held reentrant lock's context with ErrLockLost,
// and the lock is free for another owner at once.
func TestReentrantExpireNow(t *testing.T) {
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		mu := reentrant.New(k.Client(), k.Name("orders"), nil)
		lctx, err := mu.Lock(ctx)
		must(t, err)
		must(t, k.ExpireNow(ctx, mu.Name()))
		if cause := cancelled(t, lctx); !errors.Is(cause, relock.ErrLockLost) {
			t.Fatalf("cause %v, want ErrLockLost", cause)
		}
		other, err := mu.TryLock(relock.WithNewOwner(ctx), 0)
		must(t, err)
		must(t, mu.Unlock(other))
	})
}

// A waiter whose wake-up is dropped still gets the lock, when the lease
// it saw ends.
func TestReentrantDropWakeups(t *testing.T) {
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		// The fallback comes when the holder's lease ends: a short one
		// under -short.
		holder, err := k.NewClient(&relock.Options{WatchdogTimeout: redistest.Short(relocktest.WatchdogTimeout, 600*time.Millisecond)})
		must(t, err)
		name := k.Name("orders")
		held, err := reentrant.New(holder, name, nil).Lock(ctx)
		must(t, err)

		mu := reentrant.New(k.Client(), name, nil)
		got := make(chan context.Context, 1)
		waiting := result(func() error {
			lctx, err := mu.Lock(ctx)
			got <- lctx
			return err
		})
		registered(t, k, layout.LockWaiters(name))
		k.DropWakeups(1)
		must(t, reentrant.New(holder, name, nil).Unlock(held))
		must(t, await(t, waiting))
		must(t, mu.Unlock(<-got))
		if n := k.Counts().Dropped; n != 1 {
			t.Fatalf("dropped %d wake-ups, want 1", n)
		}
	})
}

// Renewals that keep failing lose a fair lock by the watchdog's own
// deadline: the cause is ErrLockLost, for a lease that may expire.
func TestFairFailRenewals(t *testing.T) {
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		mu := fair.New(k.Client(), k.Name("printer"), nil)
		lctx, err := mu.Lock(context.Background())
		must(t, err)
		k.FailRenewals(100)
		cause := cancelled(t, lctx)
		if !errors.Is(cause, relock.ErrLockLost) || !errors.Is(cause, watchdog.ErrExpired) {
			t.Fatalf("cause %v, want ErrLockLost and watchdog.ErrExpired", cause)
		}
		if k.Counts().Failed == 0 {
			t.Fatal("no renewal failed")
		}
	})
}

// A read lock survives renewals stalled for less than the watchdog's
// margin, and is lost once ExpireNow deletes it with its read holds.
func TestRWLockStallRenewals(t *testing.T) {
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		rw := rwlock.New(k.Client(), k.Name("catalog"), nil)
		rctx, err := rw.RLock(ctx)
		must(t, err)
		k.StallRenewals(2, relocktest.WatchdogTimeout/20)
		redistest.Eventually(t, patience, "two stalled rounds", func() bool { return k.Counts().Stalled == 2 })
		if err := rctx.Err(); err != nil {
			t.Fatalf("read lock lost to short stalls: %v", context.Cause(rctx))
		}
		must(t, k.ExpireNow(ctx, rw.Name()))
		if cause := cancelled(t, rctx); !errors.Is(cause, relock.ErrLockLost) {
			t.Fatalf("cause %v, want ErrLockLost", cause)
		}
		keys, err := k.Redis().Keys(ctx, "*"+rw.Name()+"*").Result()
		must(t, err)
		if len(keys) != 0 {
			t.Fatalf("ExpireNow left %v", keys)
		}
	})
}

// ExpireNow cancels a spin lock's holder too, though a spin lock
// publishes nothing.
func TestSpinlockExpireNow(t *testing.T) {
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		mu := spinlock.New(k.Client(), k.Name("reports"), nil)
		lctx, err := mu.Lock(ctx)
		must(t, err)
		must(t, k.ExpireNow(ctx, mu.Name()))
		if cause := cancelled(t, lctx); !errors.Is(cause, relock.ErrLockLost) {
			t.Fatalf("cause %v, want ErrLockLost", cause)
		}
	})
}

// Renewals stalled past their round's timeout, round after round, lose
// a non-reentrant lock as failures do.
func TestNonreentrantStallRenewals(t *testing.T) {
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		mu := nonreentrant.New(k.Client(), k.Name("payouts"), nil)
		lctx, err := mu.Lock(context.Background())
		must(t, err)
		k.StallRenewals(100, relocktest.WatchdogTimeout)
		cause := cancelled(t, lctx)
		if !errors.Is(cause, relock.ErrLockLost) || !errors.Is(cause, watchdog.ErrExpired) {
			t.Fatalf("cause %v, want ErrLockLost and watchdog.ErrExpired", cause)
		}
	})
}

// Losing one member loses the MultiLock.
func TestMultilockExpireNow(t *testing.T) {
	servers(t, func(t *testing.T, k *relocktest.Kit) {
		ctx := context.Background()
		a := reentrant.New(k.Client(), k.Name("stock:amsterdam"), nil)
		b := fair.New(k.Client(), k.Name("stock:berlin"), nil)
		lctx, err := multilock.New(a, b).Lock(ctx)
		must(t, err)
		must(t, k.ExpireNow(ctx, b.Name()))
		if cause := cancelled(t, lctx); !errors.Is(cause, relock.ErrLockLost) {
			t.Fatalf("cause %v, want ErrLockLost", cause)
		}
	})
}

// A RedLock keeps its lock while a majority of masters hold it: losing
// one of three is survived, losing a second is not. It needs independent
// servers, so it runs on three embedded ones only.
func TestRedlockExpireNow(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts three embedded servers and waits for a majority to be lost")
	}
	t.Parallel()
	ctx := context.Background()
	var kits []*relocktest.Kit
	var clients []*relock.Client
	for range 3 {
		k := relocktest.New(t, &relocktest.Options{Embedded: true})
		kits, clients = append(kits, k), append(clients, k.Client())
	}
	rl := redlock.New(clients, kits[0].Name("payments"), nil)
	lctx, err := rl.Lock(ctx)
	must(t, err)
	must(t, kits[0].ExpireNow(ctx, rl.Name()))
	// Once the lost master's client has let go of its hold, the RedLock
	// has counted the loss.
	redistest.Eventually(t, patience, "the first master's hold ended", func() bool {
		return clients[0].Stats().Holds == 0
	})
	if err := lctx.Err(); err != nil {
		t.Fatalf("lost with a majority left: %v", context.Cause(lctx))
	}
	must(t, kits[1].ExpireNow(ctx, rl.Name()))
	if cause := cancelled(t, lctx); !errors.Is(cause, relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", cause)
	}
}

// Advance past the lease expires a held lock on the server; the
// holder's watchdog finds it gone at its next round.
func TestReentrantAdvance(t *testing.T) {
	embedded(t, func(t *testing.T, k *relocktest.Kit) {
		mu := reentrant.New(k.Client(), k.Name("orders"), nil)
		lctx, err := mu.Lock(context.Background())
		must(t, err)
		must(t, k.Advance(relocktest.WatchdogTimeout+time.Second))
		cause := cancelled(t, lctx)
		if !errors.Is(cause, relock.ErrLockLost) || !errors.Is(cause, watchdog.ErrGone) {
			t.Fatalf("cause %v, want ErrLockLost and watchdog.ErrGone", cause)
		}
	})
}
