package reentrant_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestBadInput: every kind of bad input is an error from every method,
// never a panic.
func TestBadInput(t *testing.T) {
	rc := newClient(t, nil)
	closed, err := relock.New(srv.Client(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	name := redistest.Key(t)

	for _, tc := range []struct {
		what string
		mu   *reentrant.Mutex
		want error
	}{
		{"empty name", reentrant.New(rc, "", nil), relock.ErrInvalidName},
		{"empty hash tag", reentrant.New(rc, "a{}b", nil), relock.ErrInvalidName},
		{"unclosed hash tag", reentrant.New(rc, "a{b", nil), relock.ErrInvalidName},
		{"closing brace without a tag", reentrant.New(rc, "a}b", nil), relock.ErrInvalidName},
		{"negative lease", reentrant.New(rc, name, &reentrant.Options{Lease: -time.Second}), relock.ErrInvalidArgument},
		{"sub-millisecond lease", reentrant.New(rc, name, &reentrant.Options{Lease: time.Microsecond}), relock.ErrInvalidArgument},
		{"nil client", reentrant.New(nil, name, nil), relock.ErrInvalidArgument},
		{"closed client", reentrant.New(closed, name, nil), relock.ErrClosed},
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
				"Token":       func() error { _, err := tc.mu.Token(ctx); return err },
			}
			for method, call := range calls {
				if err := call(); !errors.Is(err, tc.want) {
					t.Errorf("%s = %v, want %v", method, err, tc.want)
				}
			}
		})
	}
	if srv.Client(t).Exists(context.Background(), name).Val() != 0 {
		t.Fatal("bad input wrote a lock")
	}

	mu := reentrant.New(rc, name, nil)
	if _, err := mu.TryLock(context.Background(), -time.Second); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("TryLock(-1s) = %v, want ErrInvalidArgument", err)
	}
	if _, err := mu.Token(relock.WithNewOwner(context.Background())); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("Token without Fencing = %v, want ErrInvalidArgument", err)
	}
}

// TestNewBadInput: relock.New refuses bad clients and options.
func TestNewBadInput(t *testing.T) {
	rdb := srv.Client(t)
	for _, tc := range []struct {
		what string
		rdb  redis.UniversalClient
		opts *relock.Options
	}{
		{"nil client", nil, nil},
		{"negative watchdog timeout", rdb, &relock.Options{WatchdogTimeout: -time.Second}},
		{"tiny watchdog timeout", rdb, &relock.Options{WatchdogTimeout: time.Millisecond}},
		{"sharded pub/sub without a cluster", rdb, &relock.Options{PubSub: relock.PubSubSharded}},
		{"unknown pub/sub mode", rdb, &relock.Options{PubSub: relock.PubSubMode(42)}},
	} {
		if rc, err := relock.New(tc.rdb, tc.opts); !errors.Is(err, relock.ErrInvalidArgument) || rc != nil {
			t.Errorf("%s: New = %v, %v; want nil, ErrInvalidArgument", tc.what, rc, err)
		}
	}
}

// TestClose: Close is idempotent, fails waiting Locks with ErrClosed and
// cancels held locks' contexts with cause ErrClosed.
func TestClose(t *testing.T) {
	rc, err := relock.New(srv.Client(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	name := redistest.Key(t)
	holder := reentrant.New(newClient(t, nil), name, nil)
	hctx := lockT(t, holder, context.Background())
	defer unlockT(t, holder, hctx)

	held := lockT(t, reentrant.New(rc, redistest.Key(t), nil), context.Background())
	errc := make(chan error)
	go func() {
		_, err := reentrant.New(rc, name, nil).Lock(context.Background())
		errc <- err
	}()
	raw := srv.Client(t)
	eventually(t, 2*time.Second, "waiter subscribed", func() bool { return numSub(t, raw, channelOf(name)) == 1 })
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
}
