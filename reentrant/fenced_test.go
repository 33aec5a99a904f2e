package reentrant_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestFencedSameOwnerWaiters: a fenced waiter is woken to try, never
// handed the lock, so each of its acquires counts a hold. Two calls of
// one owner that wait for a lock another client holds both hold it once
// it is released, and Redis counts two holds, as the client does (it
// counted three when the second call took the first call's new hold for
// a grant, and then re-entered on top); two Unlocks free it.
func TestFencedSameOwnerWaiters(t *testing.T) {
	redistest.Parallel(t)
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	opts := &reentrant.Options{Fencing: true}
	holder := reentrant.New(newClient(t, nil), name, opts)
	mu := reentrant.New(newClient(t, nil), name, opts)
	registry := "relock_lock_waiters:{" + name + "}"
	for round := range 50 {
		hctx := redistest.Lock(t, holder, bg)
		owner := relock.WithNewOwner(bg)
		held := make(chan context.Context, 2)
		for range 2 {
			go func() {
				ctx, err := mu.Lock(owner)
				if err != nil {
					t.Error(err)
				}
				held <- ctx
			}()
		}
		redistest.Eventually(t, 5*time.Second, "the waiters registered", func() bool {
			return raw.Exists(bg, registry).Val() == 1
		})
		redistest.Unlock(t, holder, hctx)
		a, b := <-held, <-held
		if a == nil || b == nil {
			t.FailNow()
		}
		if n, err := mu.HoldCount(owner); err != nil || n != 2 {
			t.Fatalf("round %d: Redis counts %d holds (%v) of the owner, whose 2 calls hold the lock", round, n, err)
		}
		redistest.Unlock(t, mu, a)
		redistest.Unlock(t, mu, b)
		if err := mu.Unlock(b); !errors.Is(err, relock.ErrNotHeld) {
			t.Fatalf("round %d: a third Unlock = %v, want ErrNotHeld", round, err)
		}
		if n := raw.Exists(bg, name).Val(); n != 0 {
			t.Fatalf("round %d: lock left after both Unlocks", round)
		}
	}
}
