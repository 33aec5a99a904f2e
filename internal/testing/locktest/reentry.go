package locktest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// reentryRefused, for a non-reentrant kind (Kind.Reentry): the owner
// holding the lock is refused at once by Lock and TryLock, through the
// returned context or one derived from it, in another goroutine, and
// through another lock value on the same client; the lock keeps one hold
// and the holder's context lives on; other owners still wait; once
// unlocked, the owner may lock again. Owners racing for a free lock with
// the same context end with one hold: every other call is refused, none
// waits.
func reentryRefused(t *testing.T, e *env) {
	bg := context.Background()
	rc := e.client(t, nil)
	name := redistest.Key(t)
	mu := e.k.New(rc, name, 0)
	owner := relock.WithNewOwner(bg)
	ctx := redistest.Lock(t, mu, owner)

	derived, cancel := context.WithCancel(ctx)
	defer cancel()
	inGoroutine := func() error {
		errc := make(chan error, 1)
		go func() {
			_, err := mu.Lock(ctx)
			errc <- err
		}()
		return <-errc
	}
	for _, tc := range []struct {
		what string
		call func() error
	}{
		{"Lock", func() error { _, err := mu.Lock(ctx); return err }},
		{"TryLock(0)", func() error { _, err := mu.TryLock(ctx, 0); return err }},
		{"TryLock(1m)", func() error { _, err := mu.TryLock(ctx, time.Minute); return err }},
		{"Lock with a derived context", func() error { _, err := mu.Lock(derived); return err }},
		{"Lock with the owner's context", func() error { _, err := mu.Lock(owner); return err }},
		{"Lock in another goroutine", inGoroutine},
		{"Lock through another value", func() error { _, err := e.k.New(rc, name, 0).Lock(ctx); return err }},
	} {
		start := time.Now()
		err := tc.call()
		took := time.Since(start)
		if !errors.Is(err, e.k.Reentry) {
			t.Errorf("%s by the holder = %v, want %v", tc.what, err, e.k.Reentry)
		}
		// At once: the lease is 30s, and a refusal takes no wait.
		if took > time.Second {
			t.Errorf("%s by the holder took %v: it waited", tc.what, took)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("refused re-entries ended the holder's context: %v", context.Cause(ctx))
	}
	e.assertOnlyHolder(t, mu, ctx)

	for what, other := range map[string]context.Context{
		"context without owner": bg,
		"WithNewOwner":          relock.WithNewOwner(ctx),
	} {
		if _, err := mu.TryLock(other, 100*time.Millisecond); !errors.Is(err, relock.ErrNotAcquired) {
			t.Errorf("%s: TryLock = %v, want ErrNotAcquired", what, err)
		}
	}
	redistest.Unlock(t, mu, ctx)
	redistest.Unlock(t, mu, redistest.Lock(t, mu, owner))

	const rounds, racers = 10, 8
	for range rounds {
		owner := relock.WithNewOwner(bg)
		held := make(chan context.Context, racers)
		var wg sync.WaitGroup
		for range racers {
			wg.Go(func() {
				lctx, err := e.k.New(rc, name, 0).Lock(owner)
				switch {
				case err == nil:
					held <- lctx
				case !errors.Is(err, e.k.Reentry):
					t.Errorf("racing Lock = %v, want %v or the lock", err, e.k.Reentry)
				}
			})
		}
		wg.Wait()
		close(held)
		if len(held) != 1 {
			t.Fatalf("%d of %d racing Locks of one owner took the lock, want 1", len(held), racers)
		}
		lctx := <-held
		e.assertOnlyHolder(t, mu, lctx)
		redistest.Unlock(t, mu, lctx)
	}
	if n := e.redis(t).Exists(bg, name).Val(); n != 0 {
		t.Fatal("lock left after the last Unlock")
	}
}
