package relock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestDo: Do runs fn holding the lock, with a context that re-enters it,
// and releases it after fn returns, fails or panics; a Lock that fails
// runs nothing; a lease lost under fn is in Do's error.
func TestDo(t *testing.T) {
	srv := redistest.Start(t)
	rc := redistest.Relock(t, srv.LockClient(t), nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, nil)

	ran := false
	err := relock.Do(bg, mu, func(ctx context.Context) error {
		ran = true
		if n, err := mu.HoldCount(ctx); err != nil || n != 1 {
			t.Errorf("HoldCount inside Do = %d, %v; want 1", n, err)
		}
		return relock.Do(ctx, mu, func(ctx context.Context) error {
			if n, _ := mu.HoldCount(ctx); n != 2 {
				t.Errorf("HoldCount inside a nested Do = %d, want 2 (re-entry)", n)
			}
			return nil
		})
	})
	if err != nil || !ran {
		t.Fatalf("Do = %v, ran %v", err, ran)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("lock left in Redis after Do returned")
	}

	errWork := errors.New("work failed")
	if err := relock.Do(bg, mu, func(context.Context) error { return errWork }); !errors.Is(err, errWork) {
		t.Fatalf("Do with a failing fn = %v, want its error", err)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("lock left in Redis after fn failed")
	}

	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic to go on", r)
			}
		}()
		_ = relock.Do(bg, mu, func(context.Context) error { panic("boom") })
	}()
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("lock left in Redis after fn panicked")
	}

	// Held elsewhere: a Lock that gives up runs nothing.
	other := reentrant.New(redistest.Relock(t, srv.LockClient(t), nil), name, nil)
	hctx, err := other.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(bg)
	cancel()
	ran = false
	if err := relock.Do(cctx, mu, func(context.Context) error { ran = true; return nil }); !errors.Is(err, relock.ErrNotAcquired) || ran {
		t.Fatalf("Do on a held lock with a done context = %v, ran %v; want ErrNotAcquired, not run", err, ran)
	}
	if err := other.Unlock(hctx); err != nil {
		t.Fatal(err)
	}

	// The lock lost under fn: fn's context says so, and Do's error too.
	err = relock.Do(bg, mu, func(ctx context.Context) error {
		raw.Del(bg, name)
		if _, err := mu.HoldCount(ctx); err != nil {
			return err
		}
		// The holder learns at its next renewal, or at Unlock.
		return nil
	})
	if !errors.Is(err, relock.ErrNotHeld) && !errors.Is(err, relock.ErrLockLost) {
		t.Fatalf("Do whose lock was deleted under fn = %v, want ErrNotHeld or ErrLockLost", err)
	}

	for what, l := range map[string]relock.Locker{"nil": nil, "typed nil": (*reentrant.Mutex)(nil)} {
		if err := relock.Do(bg, l, func(context.Context) error { return nil }); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("Do with a %s Locker = %v, want ErrInvalidArgument", what, err)
		}
	}
	if err := relock.Do(bg, mu, nil); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("Do with a nil func = %v, want ErrInvalidArgument", err)
	}
}
