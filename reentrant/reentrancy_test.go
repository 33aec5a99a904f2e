package reentrant_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestReentrancyFollowsContext: a call chain that passes the returned
// context re-enters; a context without that owner, or one from
// WithNewOwner, waits.
func TestReentrancyFollowsContext(t *testing.T) {
	rc := newClient(t, nil)
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, nil)

	inner := func(ctx context.Context) int {
		ctx = lockT(t, mu, ctx)
		defer unlockT(t, mu, ctx)
		n, err := mu.HoldCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	outer := func(ctx context.Context) int {
		ctx = lockT(t, mu, ctx)
		defer unlockT(t, mu, ctx)
		return inner(ctx)
	}
	if n := outer(context.Background()); n != 2 {
		t.Fatalf("hold count in nested call = %d, want 2", n)
	}

	ctx := lockT(t, mu, context.Background())
	defer unlockT(t, mu, ctx)
	for what, other := range map[string]context.Context{
		"context without owner": context.Background(),
		"WithNewOwner":          relock.WithNewOwner(ctx),
	} {
		_, err := mu.TryLock(other, 100*time.Millisecond)
		if !errors.Is(err, relock.ErrNotAcquired) {
			t.Errorf("%s: TryLock = %v, want ErrNotAcquired", what, err)
		}
	}
	// A goroutine handed the context shares the owner.
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
}

// TestUnlockByNonOwner: ErrNotHeld, and the lock is untouched.
func TestUnlockByNonOwner(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, nil)
	ctx := lockT(t, mu, bg)
	defer unlockT(t, mu, ctx)
	before := raw.HGetAll(bg, name).Val()

	other := reentrant.New(newClient(t, nil), name, nil)
	for what, c := range map[string]context.Context{
		"no owner":             bg,
		"new owner":            relock.WithNewOwner(bg),
		"owner, other client":  ctx,
		"new owner, same lock": relock.WithNewOwner(ctx),
	} {
		m := other
		if what == "new owner, same lock" {
			m = mu
		}
		if err := m.Unlock(c); !errors.Is(err, relock.ErrNotHeld) {
			t.Errorf("%s: Unlock = %v, want ErrNotHeld", what, err)
		}
	}
	after := raw.HGetAll(bg, name).Val()
	if len(after) != 1 || after[firstKey(before)] != "1" {
		t.Fatalf("lock changed by failed unlocks: %v -> %v", before, after)
	}
	if ctx.Err() != nil {
		t.Fatal("holder's context cancelled by a failed unlock")
	}
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

// TestUnlockCancelledContext: Unlock works with a done context.
func TestUnlockCancelledContext(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, nil)
	parent, cancel := context.WithCancel(context.Background())
	ctx := lockT(t, mu, parent)
	cancel()
	if ctx.Err() == nil {
		t.Fatal("lock context survived its parent's cancellation")
	}
	unlockT(t, mu, ctx)
	if n := raw.Exists(context.Background(), name).Val(); n != 0 {
		t.Fatal("Unlock with a cancelled context left the lock")
	}

	dl, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(50*time.Millisecond))
	defer cancel2()
	ctx = lockT(t, mu, dl)
	<-ctx.Done()
	unlockT(t, mu, ctx)
	if n := raw.Exists(context.Background(), name).Val(); n != 0 {
		t.Fatal("Unlock past the deadline left the lock")
	}
}

// TestLockContextCancelledByUnlock: the last Unlock cancels the returned
// context (plain cancellation, not ErrLockLost); inner Unlocks do not.
func TestLockContextCancelledByUnlock(t *testing.T) {
	rc := newClient(t, nil)
	mu := reentrant.New(rc, redistest.Key(t), nil)
	ctx := lockT(t, mu, context.Background())
	inner := lockT(t, mu, ctx)
	unlockT(t, mu, inner)
	if ctx.Err() != nil {
		t.Fatal("inner Unlock cancelled the outer lock context")
	}
	unlockT(t, mu, ctx)
	if !errors.Is(ctx.Err(), context.Canceled) || errors.Is(context.Cause(ctx), relock.ErrLockLost) {
		t.Fatalf("after the last Unlock: err %v cause %v, want plain cancellation", ctx.Err(), context.Cause(ctx))
	}
	if err := mu.Unlock(ctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("extra Unlock = %v, want ErrNotHeld", err)
	}
}
