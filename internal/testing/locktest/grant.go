package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// Bounds of sameOwnerReentryRacesGrant: rounds (grantRaceShortRounds
// under -short), or time, whichever ends first.
const (
	grantRaceRounds      = 200
	grantRaceShortRounds = 50
	grantRaceTime        = 10 * time.Second
)

// sameOwnerReentryRacesGrant: a call of an owner waits, queued, for a
// lock another client holds, while a second call of the same owner tries
// it again and again (TryLock with no wait). The holder's release grants
// the lock to the owner, and the second call re-enters it about when the
// grant reaches the waiter, before or after the waiter records it. Every
// round, whichever order they take it in, Redis must count the owner's
// holds as the client does (two: both calls hold it), one Unlock must
// leave one hold, the next free the lock, and a third find nothing held.
// For a non-reentrant kind (Kind.Reentry) exactly one of the two calls
// must hold the lock, the other be refused, and Redis count one hold.
// Only kinds whose releases grant the lock (Kind.Grants) are raced.
func sameOwnerReentryRacesGrant(t *testing.T, e *env) {
	if !e.k.Grants {
		t.Skip("the kind's releases grant nothing")
	}
	bg := context.Background()
	raw := e.redis(t)
	name := redistest.Key(t)
	holder := e.k.New(e.client(t, nil), name, 0)
	mu := e.k.New(e.client(t, nil), name, 0)
	// Where a waiter of either kind is queued: the fair lock's queue,
	// the reentrant lock's waiter registry. Nobody else waits.
	queues := []string{"redisson_lock_queue:{" + name + "}", "relock_lock_waiters:{" + name + "}"}
	queued := func() bool {
		for _, q := range queues {
			if raw.Exists(bg, q).Val() == 1 {
				return true
			}
		}
		return false
	}
	type result struct {
		ctx context.Context
		err error
	}
	// recv returns the result c delivers, failing the test after 5s.
	recv := func(what string, c <-chan result) result {
		t.Helper()
		select {
		case r := <-c:
			return r
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still waits 5s after the release", what)
		}
		return result{}
	}
	// await is recv of a call that must hold the lock: its context.
	await := func(what string, c <-chan result) context.Context {
		t.Helper()
		r := recv(what, c)
		if r.err != nil {
			t.Fatalf("%s: %v", what, r.err)
		}
		return r.ctx
	}

	start := time.Now()
	rounds := 0
	maxRounds := redistest.Short(grantRaceRounds, grantRaceShortRounds)
	for ; rounds < maxRounds && time.Since(start) < grantRaceTime; rounds++ {
		hctx := redistest.Lock(t, holder, relock.WithNewOwner(bg))
		owner := relock.WithNewOwner(bg)
		waiter := make(chan result, 1)
		go func() {
			ctx, err := mu.Lock(owner)
			waiter <- result{ctx, err}
		}()
		redistest.Eventually(t, 5*time.Second, "the waiter queued", queued)

		// The re-entry tries until it holds; each try before the
		// release fails at once and leaves nothing behind.
		reentry := make(chan result, 1)
		go func() {
			for {
				ctx, err := mu.TryLock(owner, 0)
				if err == nil || !errors.Is(err, relock.ErrNotAcquired) {
					reentry <- result{ctx, err}
					return
				}
			}
		}()
		redistest.Unlock(t, holder, hctx)
		if e.k.Reentry != nil {
			oneRefused(t, e, mu, owner, rounds, recv("the queued Lock", waiter), recv("the re-entering TryLock", reentry))
			e.assertNoResidue(t, name)
			continue
		}
		wctx := await("the queued Lock", waiter)
		rctx := await("the re-entering TryLock", reentry)

		if n := holdCount(t, mu, owner); n != 2 {
			t.Fatalf("round %d: Redis counts %d holds of the owner, whose 2 calls hold the lock", rounds, n)
		}
		redistest.Unlock(t, mu, rctx)
		if n := holdCount(t, mu, owner); n != 1 {
			t.Fatalf("round %d: Redis counts %d holds after one of 2 Unlocks, want 1", rounds, n)
		}
		redistest.Unlock(t, mu, wctx)
		if locked, err := mu.IsLocked(bg); err != nil || locked {
			t.Fatalf("round %d: IsLocked after both Unlocks = %v, %v; want false", rounds, locked, err)
		}
		if err := mu.Unlock(wctx); !errors.Is(err, relock.ErrNotHeld) {
			t.Fatalf("round %d: a third Unlock = %v, want ErrNotHeld", rounds, err)
		}
		e.assertNoResidue(t, name)
	}
	t.Logf("%d rounds in %v", rounds, time.Since(start).Round(time.Millisecond))
}

// oneRefused checks a round of sameOwnerReentryRacesGrant for a
// non-reentrant kind: of the queued Lock (w) and the re-entering TryLock
// (r), one holds the lock and the other was refused; Redis counts one
// hold, which one Unlock frees.
func oneRefused(t *testing.T, e *env, mu Lock, owner context.Context, round int, w, r struct {
	ctx context.Context
	err error
}) {
	t.Helper()
	held, refused := w, r
	if w.err != nil {
		held, refused = r, w
	}
	if held.err != nil || !errors.Is(refused.err, e.k.Reentry) {
		t.Fatalf("round %d: the queued Lock = %v, the re-entering TryLock = %v; want one to hold, the other %v",
			round, w.err, r.err, e.k.Reentry)
	}
	if n := holdCount(t, mu, owner); n != 1 {
		t.Fatalf("round %d: Redis counts %d holds of the owner, want 1", round, n)
	}
	redistest.Unlock(t, mu, held.ctx)
	if locked, err := mu.IsLocked(context.Background()); err != nil || locked {
		t.Fatalf("round %d: IsLocked after the Unlock = %v, %v; want false", round, locked, err)
	}
}
