package relock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestReentriesFreed: a re-entry's Unlock frees what its Lock kept (its
// context, a child of the hold's, and its cancel func), where everything
// used to stay until the hold's last Unlock, about 170 B a re-entry: a
// long hold re-entered for each item of its work grew without end. The
// re-entry's context ends with its Unlock, with cause relock.ErrUnlocked,
// and the hold's goes on. Owners the Lock made (tracked for forgotten
// unlocks) and owners of the caller's (relock.WithNewOwner) alike; an
// inner Unlock given the hold's first context ends the latest re-entry.
func TestReentriesFreed(t *testing.T) {
	srv := redistest.Start(t)
	rc := redistest.Relock(t, srv.LockClient(t), nil)
	const pairs = 10_000
	for _, tc := range []struct {
		name       string
		owner      func() context.Context
		unlockWith func(lctx, ictx context.Context) context.Context
	}{
		{"tracked", context.Background, func(_, ictx context.Context) context.Context { return ictx }},
		{"caller's owner", func() context.Context { return relock.WithNewOwner(context.Background()) },
			func(_, ictx context.Context) context.Context { return ictx }},
		{"unlocked with the first context", context.Background, func(lctx, _ context.Context) context.Context { return lctx }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu := reentrant.New(rc, redistest.Key(t), nil)
			lctx, err := mu.Lock(tc.owner())
			if err != nil {
				t.Fatal(err)
			}
			reenter := func(n int) {
				t.Helper()
				for range n {
					ictx, err := mu.Lock(lctx)
					if err != nil {
						t.Fatal(err)
					}
					if err := mu.Unlock(tc.unlockWith(lctx, ictx)); err != nil {
						t.Fatal(err)
					}
					select {
					case <-ictx.Done():
					default:
						t.Fatal("a re-entry's context outlived its Unlock")
					}
					if cause := context.Cause(ictx); !errors.Is(cause, relock.ErrUnlocked) {
						t.Fatalf("a re-entry's context ended with %v, want relock.ErrUnlocked", cause)
					}
				}
			}
			reenter(100)
			before := redistest.Heap()
			reenter(pairs)
			grown := redistest.HeapBack(t, before, pairs*170/4, pairs, 5*time.Second)
			t.Logf("heap %+d B after %d re-entries", grown, pairs)
			if err := lctx.Err(); err != nil {
				t.Fatalf("the hold's context ended with its re-entries: %v", context.Cause(lctx))
			}
			if err := mu.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			if cause := context.Cause(lctx); !errors.Is(cause, relock.ErrUnlocked) {
				t.Fatalf("the hold's context after its last Unlock: %v, want relock.ErrUnlocked", cause)
			}
		})
	}
}
