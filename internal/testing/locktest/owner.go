package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/internal/transport"
)

// reentrancyFollowsContext: a call chain that passes the returned context
// re-enters; a context without that owner, or one from WithNewOwner,
// waits; a goroutine handed the context shares the owner. A
// non-reentrant kind refuses the re-entry instead (reentryRefused).
func reentrancyFollowsContext(t *testing.T, e *env) {
	if e.k.Reentry != nil {
		reentryRefused(t, e)
		return
	}
	mu := e.k.New(e.client(t, nil), redistest.Key(t), 0)

	inner := func(ctx context.Context) int {
		ctx = redistest.Lock(t, mu, ctx)
		defer redistest.Unlock(t, mu, ctx)
		return holdCount(t, mu, ctx)
	}
	outer := func(ctx context.Context) int {
		ctx = redistest.Lock(t, mu, ctx)
		defer redistest.Unlock(t, mu, ctx)
		return inner(ctx)
	}
	if n := outer(context.Background()); n != 2 {
		t.Fatalf("hold count in nested call = %d, want 2", n)
	}

	ctx := redistest.Lock(t, mu, context.Background())
	defer redistest.Unlock(t, mu, ctx)
	for what, other := range map[string]context.Context{
		"context without owner": context.Background(),
		"WithNewOwner":          relock.WithNewOwner(ctx),
	} {
		_, err := mu.TryLock(other, 100*time.Millisecond)
		if !errors.Is(err, relock.ErrNotAcquired) {
			t.Errorf("%s: TryLock = %v, want ErrNotAcquired", what, err)
		}
	}
	done := make(chan error)
	go func() {
		gctx, err := mu.TryLock(ctx, 0)
		if err == nil {
			err = mu.Unlock(gctx)
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatalf("goroutine with the owner's context: %v", err)
	}
	e.assertOnlyHolder(t, mu, ctx)
}

// unlockByNonOwner: ErrNotHeld, and the lock is untouched.
func unlockByNonOwner(t *testing.T, e *env) {
	bg := context.Background()
	name := redistest.Key(t)
	mu := e.k.New(e.client(t, nil), name, 0)
	ctx := redistest.Lock(t, mu, bg)
	defer redistest.Unlock(t, mu, ctx)
	raw := e.redis(t)
	before := raw.HGetAll(bg, name).Val()

	other := e.k.New(e.client(t, nil), name, 0)
	for _, tc := range []struct {
		what string
		mu   Lock
		ctx  context.Context
	}{
		{"no owner", other, bg},
		{"new owner", other, relock.WithNewOwner(bg)},
		{"holder's owner on another client", other, ctx},
		{"new owner on the holder's client", mu, relock.WithNewOwner(ctx)},
	} {
		if err := tc.mu.Unlock(tc.ctx); !errors.Is(err, relock.ErrNotHeld) {
			t.Errorf("%s: Unlock = %v, want ErrNotHeld", tc.what, err)
		}
	}
	after := raw.HGetAll(bg, name).Val()
	delete(before, "mode") // a read/write lock's mode field
	delete(after, "mode")
	if len(after) != len(before) || len(after) != 1 {
		t.Fatalf("lock changed by failed unlocks: %v -> %v", before, after)
	}
	for f, v := range before {
		if after[f] != v {
			t.Fatalf("lock changed by failed unlocks: %v -> %v", before, after)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("holder's context cancelled by a failed unlock")
	}
}

// unlockCancelledContext: Unlock works with a cancelled context and with
// one past its deadline: it releases the lock within CleanupGrace, or,
// when Redis does not answer in that time (a loaded machine), says so
// with the context's error and releases it in the background.
func unlockCancelledContext(t *testing.T, e *env) {
	raw := e.redis(t)
	name := redistest.Key(t)
	mu := e.k.New(e.client(t, nil), name, 0)
	parent, cancel := context.WithCancel(context.Background())
	ctx := redistest.Lock(t, mu, parent)
	cancel()
	if ctx.Err() == nil {
		t.Fatal("lock context survived its parent's cancellation")
	}
	unlockDone(t, raw, mu, ctx, name, "a cancelled context")

	dl, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(50*time.Millisecond))
	defer cancel2()
	ctx = redistest.Lock(t, mu, dl)
	<-ctx.Done()
	unlockDone(t, raw, mu, ctx, name, "a context past its deadline")
}

// unlockDone unlocks mu with ctx, which is done, and fails t unless the
// lock's key is gone from Redis within the background's OpTimeout.
func unlockDone(t *testing.T, raw redis.UniversalClient, mu relock.Locker, ctx context.Context, key, what string) {
	t.Helper()
	// The grace has a deadline of its own, so a cancelled ctx's Unlock
	// may end with DeadlineExceeded too.
	err := mu.Unlock(ctx)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Unlock with %s: %v", what, err)
	}
	for deadline := time.Now().Add(transport.OpTimeout); raw.Exists(context.Background(), key).Val() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("Unlock with %s left the lock for %v", what, transport.OpTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// contextCancelledByUnlock: the last Unlock cancels the returned context
// (plain cancellation, not ErrLockLost); inner Unlocks, where the kind
// re-enters, do not.
func contextCancelledByUnlock(t *testing.T, e *env) {
	mu := e.k.New(e.client(t, nil), redistest.Key(t), 0)
	ctx := redistest.Lock(t, mu, context.Background())
	if e.k.Reentry == nil {
		inner := redistest.Lock(t, mu, ctx)
		redistest.Unlock(t, mu, inner)
		if ctx.Err() != nil {
			t.Fatal("inner Unlock cancelled the outer lock context")
		}
	}
	redistest.Unlock(t, mu, ctx)
	if !errors.Is(ctx.Err(), context.Canceled) || errors.Is(context.Cause(ctx), relock.ErrLockLost) {
		t.Fatalf("after the last Unlock: err %v cause %v, want plain cancellation", ctx.Err(), context.Cause(ctx))
	}
	if err := mu.Unlock(ctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("extra Unlock = %v, want ErrNotHeld", err)
	}
}

// forceUnlock: deletes whoever holds the lock, reports whether there was
// one, and the holder on another client learns of it (at once: see
// forceUnlockTellsHolder; here at its next renewal at the latest).
func forceUnlock(t *testing.T, e *env) {
	bg := context.Background()
	rc := e.client(t, &relock.Options{WatchdogTimeout: time.Second})
	mu := e.k.New(rc, redistest.Key(t), 0)
	ctx := redistest.Lock(t, mu, bg)
	other := e.k.New(e.client(t, nil), mu.Name(), 0)
	if ok, err := other.ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("ForceUnlock of a held lock = %v, %v; want true", ok, err)
	}
	if locked, err := mu.IsLocked(bg); err != nil || locked {
		t.Fatalf("IsLocked after ForceUnlock = %v, %v", locked, err)
	}
	redistest.Eventually(t, 3*time.Second, "holder told", func() bool { return ctx.Err() != nil })
	if !errors.Is(context.Cause(ctx), relock.ErrLockLost) {
		t.Fatalf("holder's cause %v, want ErrLockLost", context.Cause(ctx))
	}
	if ok, err := other.ForceUnlock(bg); err != nil || ok {
		t.Fatalf("ForceUnlock of a free lock = %v, %v; want false", ok, err)
	}
	if err := mu.Unlock(ctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Unlock after ForceUnlock = %v, want ErrNotHeld", err)
	}

	// A holder on the forcing client is told at once.
	ctx = redistest.Lock(t, mu, bg)
	if ok, err := mu.ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("ForceUnlock by the holder's client = %v, %v; want true", ok, err)
	}
	if !errors.Is(context.Cause(ctx), relock.ErrLockLost) {
		t.Fatalf("local holder's cause right after ForceUnlock = %v, want ErrLockLost", context.Cause(ctx))
	}
}

// sameOwnerWaiters: two calls of one owner wait for a lock another
// client holds. Once it is released, both hold it (the second re-enters
// the hold the first took) promptly, not at their timers (the lease is
// 30s); a non-reentrant kind refuses the second call instead. One Unlock
// each then frees the lock, leaving nothing behind.
func sameOwnerWaiters(t *testing.T, e *env) {
	bg := context.Background()
	name := redistest.Key(t)
	holder := e.k.New(e.client(t, nil), name, 0)
	hctx := redistest.Lock(t, holder, bg)
	mu := e.k.New(e.client(t, nil), name, 0)
	owner := relock.WithNewOwner(bg)
	type result struct {
		ctx context.Context
		err error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			ctx, err := mu.Lock(owner)
			results <- result{ctx, err}
		}()
	}
	// Both wait: neither can return while the holder holds.
	select {
	case r := <-results:
		t.Fatalf("Lock returned while another client held the lock: %v", r.err)
	case <-time.After(300 * time.Millisecond):
	}
	redistest.Unlock(t, holder, hctx)
	released := time.Now()
	var held []context.Context
	for range 2 {
		select {
		case r := <-results:
			switch {
			case r.err == nil:
				held = append(held, r.ctx)
			case e.k.Reentry == nil || !errors.Is(r.err, e.k.Reentry):
				t.Fatalf("Lock = %v", r.err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("a call of the owner still waited 5s after the release (%d returned)", len(held))
		}
	}
	t.Logf("both calls returned %v after the release", time.Since(released))
	want := 2
	if e.k.Reentry != nil {
		want = 1
	}
	if len(held) != want {
		t.Fatalf("%d calls hold the lock, want %d", len(held), want)
	}
	if n := holdCount(t, mu, held[0]); n != want {
		t.Fatalf("hold count %d, want %d", n, want)
	}
	for _, ctx := range held {
		redistest.Unlock(t, mu, ctx)
	}
	if locked, err := holder.IsLocked(bg); err != nil || locked {
		t.Fatalf("IsLocked after both Unlocks = %v, %v; want false", locked, err)
	}
	e.assertNoResidue(t, name)
}
