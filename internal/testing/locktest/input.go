package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// badInput: every kind of bad input is an error from every method, never
// a panic, and writes nothing.
func badInput(t *testing.T, e *env) {
	rc := e.client(t, nil)
	closed, err := relock.New(e.lockRedis(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	name := redistest.Key(t)

	for _, tc := range []struct {
		what string
		mu   Lock
		want error
	}{
		{"empty name", e.k.New(rc, "", 0), relock.ErrInvalidName},
		{"empty hash tag", e.k.New(rc, "a{}b", 0), relock.ErrInvalidName},
		{"unclosed hash tag", e.k.New(rc, "a{b", 0), relock.ErrInvalidName},
		{"closing brace without a tag", e.k.New(rc, "a}b", 0), relock.ErrInvalidName},
		{"negative lease", e.k.New(rc, name, -time.Second), relock.ErrInvalidArgument},
		{"sub-millisecond lease", e.k.New(rc, name, time.Microsecond), relock.ErrInvalidArgument},
		{"nil client", e.k.New(nil, name, 0), relock.ErrInvalidArgument},
		{"closed client", e.k.New(closed, name, 0), relock.ErrClosed},
	} {
		t.Run(tc.what, func(t *testing.T) {
			ctx := context.Background()
			calls := map[string]func() error{
				"Lock":        func() error { _, err := tc.mu.Lock(ctx); return err },
				"TryLock":     func() error { _, err := tc.mu.TryLock(ctx, time.Second); return err },
				"Unlock":      func() error { return tc.mu.Unlock(relock.WithNewOwner(ctx)) },
				"ForceUnlock": func() error { _, err := tc.mu.ForceUnlock(ctx); return err },
				"IsLocked":    func() error { _, err := tc.mu.IsLocked(ctx); return err },
				"IsHeld":      func() error { _, err := tc.mu.IsHeld(ctx); return err },
				"HoldCount":   func() error { _, err := tc.mu.HoldCount(ctx); return err },
				"TTL":         func() error { _, err := tc.mu.TTL(ctx); return err },
			}
			for method, call := range calls {
				if err := call(); !errors.Is(err, tc.want) {
					t.Errorf("%s = %v, want %v", method, err, tc.want)
				}
			}
		})
	}
	if e.redis(t).Exists(context.Background(), name).Val() != 0 {
		t.Fatal("bad input wrote a lock")
	}
	mu := e.k.New(rc, name, 0)
	if _, err := mu.TryLock(context.Background(), -time.Second); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("TryLock(-1s) = %v, want ErrInvalidArgument", err)
	}
}

// closeClient: Close is idempotent, fails waiting Locks with ErrClosed,
// and cancels held locks' contexts with cause ErrClosed.
func closeClient(t *testing.T, e *env) {
	rc, calls := e.countedClient(t, nil)
	name := redistest.Key(t)
	holder := e.k.New(e.client(t, nil), name, 0)
	hctx := redistest.Lock(t, holder, context.Background())
	defer redistest.Unlock(t, holder, hctx)

	heldMu := e.k.New(rc, redistest.Key(t), 0)
	held := redistest.Lock(t, heldMu, context.Background())
	// Another client waits for the held lock: Close releases it.
	type result struct {
		at  time.Time
		err error
	}
	next := make(chan result, 1)
	orc, otherCalls := e.countedClient(t, nil)
	other := e.k.New(orc, heldMu.Name(), 0)
	go func() {
		octx, err := other.Lock(context.Background())
		at := time.Now()
		if err == nil {
			err = other.Unlock(octx)
		}
		next <- result{at, err}
	}()
	errc := make(chan error)
	from := calls.N()
	go func() {
		_, err := e.k.New(rc, name, 0).Lock(context.Background())
		errc <- err
	}()
	raw := e.redis(t)
	e.awaitWaiting(t, name, 1, calls, from)
	e.awaitWaiting(t, heldMu.Name(), 1, otherCalls, 0)
	time.Sleep(50 * time.Millisecond) // their attempts after subscribing
	closed := time.Now()
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := <-errc; !errors.Is(err, relock.ErrClosed) {
		t.Fatalf("waiting Lock after Close = %v, want ErrClosed", err)
	}
	if !errors.Is(context.Cause(held), relock.ErrClosed) {
		t.Fatalf("held lock's cause after Close = %v, want ErrClosed", context.Cause(held))
	}
	if err := heldMu.Unlock(held); !errors.Is(err, relock.ErrClosed) {
		t.Fatalf("Unlock after Close = %v, want ErrClosed", err)
	}
	// The waiter gave up: nothing of it stays in Redis.
	e.assertOnlyHolder(t, holder, hctx)
	// The held lock was released, not left to its 30 s lease.
	select {
	case got := <-next:
		if got.err != nil {
			t.Fatal(got.err)
		}
		took := got.at.Sub(closed)
		t.Logf("a waiter on another client took the lock %v after Close began", took)
		// A release, not the 30 s lease: 1-2 ms on an idle machine; the
		// bound leaves room for a loaded CI machine.
		if took > time.Second {
			t.Fatalf("a waiter on another client took the lock %v after Close began", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("lock held on the closed client not released: TTL %v", raw.PTTL(context.Background(), heldMu.Name()).Val())
	}
}
