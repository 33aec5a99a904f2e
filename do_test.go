package relock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
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
	if !errors.Is(err, relock.ErrLockLost) || !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Do whose lock was deleted under fn = %v, want ErrLockLost and ErrNotHeld", err)
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

// TestDoForceUnlocked: a lock force-unlocked while fn runs, fn returning
// nil, makes Do's error match relock.ErrLockLost (and ErrNotHeld, what
// the Unlock found), whether the ForceUnlock was this client's (the hold
// ended at once), another client's (fn returns before its notice can
// arrive: the Unlock finds the lock gone), or a DEL of the key, and
// whatever the lock type.
func TestDoForceUnlocked(t *testing.T) {
	srv := redistest.Start(t)
	rc := redistest.Relock(t, srv.LockClient(t), nil)
	other := redistest.Relock(t, srv.LockClient(t), nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)

	type forcer interface {
		relock.Locker
		ForceUnlock(ctx context.Context) (bool, error)
	}
	kinds := map[string]func(rc *relock.Client) forcer{
		"reentrant": func(rc *relock.Client) forcer { return reentrant.New(rc, name+"-reentrant", nil) },
		"fair":      func(rc *relock.Client) forcer { return fair.New(rc, name+"-fair", nil) },
		"rwlock":    func(rc *relock.Client) forcer { return rwlock.New(rc, name+"-rw", nil).Writer() },
	}
	for kind, mk := range kinds {
		for by, force := range map[string]func(l forcer) error{
			"here": func(l forcer) error { _, err := mk(rc).ForceUnlock(bg); return err },
			"elsewhere": func(l forcer) error {
				_, err := mk(other).ForceUnlock(bg)
				return err
			},
			"deleted": func(l forcer) error { return raw.Del(bg, l.Name()).Err() },
		} {
			l := mk(rc)
			ran := false
			err := relock.Do(bg, l, func(ctx context.Context) error {
				ran = true
				return force(l)
			})
			if !ran || !errors.Is(err, relock.ErrLockLost) || !errors.Is(err, relock.ErrNotHeld) {
				t.Errorf("%s, force-unlocked %s under fn: Do = %v (ran %v), want ErrLockLost and ErrNotHeld", kind, by, err, ran)
			}
			if n := raw.Exists(bg, l.Name()).Val(); n != 0 {
				t.Errorf("%s, force-unlocked %s under fn: lock left in Redis", kind, by)
			}
		}
	}

	// Not lost: Do's error is fn's alone, and nothing says the lock was.
	mu := reentrant.New(rc, name, nil)
	errWork := errors.New("work failed")
	if err := relock.Do(bg, mu, func(context.Context) error { return errWork }); errors.Is(err, relock.ErrLockLost) || errors.Is(err, relock.ErrNotHeld) {
		t.Errorf("Do with a failing fn, lock kept = %v, want fn's error alone", err)
	}

	// A MultiLock whose member is force-unlocked under fn.
	m1, m2 := reentrant.New(rc, name+"-m1", nil), reentrant.New(rc, name+"-m2", nil)
	ml := multilock.New(m1, m2)
	err := relock.Do(bg, ml, func(ctx context.Context) error {
		_, err := reentrant.New(other, name+"-m2", nil).ForceUnlock(bg)
		return err
	})
	if !errors.Is(err, relock.ErrLockLost) {
		t.Errorf("MultiLock, member force-unlocked under fn: Do = %v, want ErrLockLost", err)
	}
}
