package permits_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// TestBadInput: every kind of bad input is an error from every method,
// never a panic, and writes nothing.
func TestBadInput(t *testing.T) {
	rc := newClient(t, nil)
	closed, err := relock.New(srv.LockClient(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	name := redistest.Key(t)
	id := strings.Repeat("ab", 16)

	for _, tc := range []struct {
		what string
		s    *permits.Semaphore
		want error
	}{
		{"empty name", permits.New(rc, "", nil), relock.ErrInvalidName},
		{"empty hash tag", permits.New(rc, "a{}b", nil), relock.ErrInvalidName},
		{"unclosed hash tag", permits.New(rc, "a{b", nil), relock.ErrInvalidName},
		{"closing brace without a tag", permits.New(rc, "a}b", nil), relock.ErrInvalidName},
		{"negative lease", permits.New(rc, name, &permits.Options{Lease: -time.Second}), relock.ErrInvalidArgument},
		{"sub-millisecond lease", permits.New(rc, name, &permits.Options{Lease: time.Microsecond}), relock.ErrInvalidArgument},
		{"nil client", permits.New(nil, name, nil), relock.ErrInvalidArgument},
		{"typed nil client", permits.New((*relock.Client)(nil), name, nil), relock.ErrInvalidArgument},
		{"closed client", permits.New(closed, name, nil), relock.ErrClosed},
	} {
		t.Run(tc.what, func(t *testing.T) {
			ctx := context.Background()
			calls := map[string]func() error{
				"TrySetPermits":    func() error { _, err := tc.s.TrySetPermits(ctx, 1); return err },
				"AddPermits":       func() error { return tc.s.AddPermits(ctx, 1) },
				"AvailablePermits": func() error { _, err := tc.s.AvailablePermits(ctx); return err },
				"Acquire":          func() error { _, err := tc.s.Acquire(ctx); return err },
				"TryAcquire":       func() error { _, err := tc.s.TryAcquire(ctx, time.Second); return err },
				"Release":          func() error { return tc.s.Release(ctx, id) },
				"TryRelease":       func() error { _, err := tc.s.TryRelease(ctx, id); return err },
				"UpdateLease":      func() error { _, err := tc.s.UpdateLease(ctx, id, time.Second); return err },
			}
			for method, call := range calls {
				if err := call(); !errors.Is(err, tc.want) {
					t.Errorf("%s = %v, want %v", method, err, tc.want)
				}
			}
		})
	}

	bg := context.Background()
	s := permits.New(rc, name, nil)
	// Counts: negative to set, or beyond relock.MaxCount in magnitude,
	// which a Lua number would round.
	set := func(n int64) error { _, err := s.TrySetPermits(bg, n); return err }
	add := func(n int64) error { return s.AddPermits(bg, n) }
	for _, tc := range []struct {
		method string
		call   func(int64) error
		n      int64
	}{
		{"TrySetPermits", set, -1},
		{"TrySetPermits", set, relock.MaxCount + 1},
		{"TrySetPermits", set, math.MaxInt64},
		{"AddPermits", add, relock.MaxCount + 1},
		{"AddPermits", add, -relock.MaxCount - 1},
		{"AddPermits", add, math.MaxInt64},
		{"AddPermits", add, math.MinInt64},
	} {
		err := tc.call(tc.n)
		if !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("%s(%d) = %v, want ErrInvalidArgument", tc.method, tc.n, err)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "permits: ") || !strings.Contains(msg, strconv.FormatInt(tc.n, 10)) {
			t.Errorf("%s(%d) = %q, want the package and the count in the text", tc.method, tc.n, msg)
		}
	}
	if _, err := s.TryAcquire(bg, -time.Second); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
	}
	for _, bad := range []string{"", "xyz", strings.Repeat("ab", 15), strings.Repeat("ab", 17), strings.Repeat("zz", 16)} {
		if err := s.Release(bg, bad); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("Release(%q) = %v, want ErrInvalidArgument", bad, err)
		}
		if _, err := s.TryRelease(bg, bad); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("TryRelease(%q) = %v, want ErrInvalidArgument", bad, err)
		}
		if _, err := s.UpdateLease(bg, bad, time.Second); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("UpdateLease(%q) = %v, want ErrInvalidArgument", bad, err)
		}
	}
	for _, lease := range []time.Duration{0, -time.Second, time.Microsecond} {
		if _, err := s.UpdateLease(bg, id, lease); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("UpdateLease(%v) = %v, want ErrInvalidArgument", lease, err)
		}
	}
	raw := srv.Client(t)
	if n := raw.Exists(bg, name, timeoutOf(name)).Val(); n != 0 {
		t.Fatal("bad input wrote the semaphore")
	}

	// A permit this client holds keeps its lease: UpdateLease refuses it,
	// also in upper case.
	s = newSemaphore(t, rc, name, 1, nil)
	p := acquireT(t, s)
	defer releaseT(t, p)
	for _, pid := range []string{p.ID(), strings.ToUpper(p.ID())} {
		if _, err := s.UpdateLease(bg, pid, time.Second); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("UpdateLease of a permit this client holds = %v, want ErrInvalidArgument", err)
		}
	}
	checkPermits(t, raw, name, relock.DefaultWatchdogTimeout, time.Second, p.ID())
	if ok, err := s.TryRelease(bg, id); err != nil || ok {
		t.Errorf("TryRelease of an unknown permit = %v, %v; want false", ok, err)
	}
	if err := s.Release(bg, id); !errors.Is(err, relock.ErrNotHeld) {
		t.Errorf("Release of an unknown permit = %v, want ErrNotHeld", err)
	}
	checkCount(t, raw, name, "0")
}

// TestReleaseByIDEndsLocalHold: Semaphore.Release of a permit this client
// holds, by its id (any case), ends the Permit's hold: its context is
// cancelled and its own Release finds nothing.
func TestReleaseByIDEndsLocalHold(t *testing.T) {
	bg := context.Background()
	s := newSemaphore(t, newClient(t, nil), redistest.Key(t), 1, nil)
	p := acquireT(t, s)
	if err := s.Release(bg, strings.ToUpper(p.ID())); err != nil {
		t.Fatal(err)
	}
	if err := p.Context().Err(); err == nil {
		t.Fatal("permit context live after its release by id")
	}
	if err := p.Release(bg); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Release after the release by id = %v, want ErrNotHeld", err)
	}
	if n := availableT(t, s); n != 1 {
		t.Fatalf("AvailablePermits = %d, want 1", n)
	}
}
