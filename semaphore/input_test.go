package semaphore_test

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
	"github.com/relock-go/relock/semaphore"
)

// calls runs every method of s once and returns each one's error.
func calls(s *semaphore.Semaphore) map[string]error {
	bg := context.Background()
	_, trySet := s.TrySetPermits(bg, 1)
	_, available := s.AvailablePermits(bg)
	_, drain := s.DrainPermits(bg)
	return map[string]error{
		"Acquire":          s.Acquire(bg, 1),
		"TryAcquire":       s.TryAcquire(bg, 1, time.Second),
		"Release":          s.Release(bg, 1),
		"TrySetPermits":    trySet,
		"AddPermits":       s.AddPermits(bg, 1),
		"AvailablePermits": available,
		"DrainPermits":     drain,
	}
}

// TestBadInput: bad input is reported by every method as an error
// matching its sentinel, never a panic, and sends nothing to Redis.
func TestBadInput(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	var typedNil *relock.Client
	for _, tc := range []struct {
		what string
		rc   *relock.Client
		name string
		opts *semaphore.Options
		want error
	}{
		{"nil client", nil, "ok", nil, relock.ErrInvalidArgument},
		{"typed nil client", typedNil, "ok", nil, relock.ErrInvalidArgument},
		{"empty name", rc, "", nil, relock.ErrInvalidName},
		{"open brace only", rc, "a{b", nil, relock.ErrInvalidName},
		{"empty hash tag", rc, "a{}b", nil, relock.ErrInvalidName},
		{"close brace only", rc, "a}b", nil, relock.ErrInvalidName},
		{"negative TTL", rc, "ok", &semaphore.Options{TTL: -time.Second}, relock.ErrInvalidArgument},
		{"TTL below 1ms", rc, "ok", &semaphore.Options{TTL: time.Microsecond}, relock.ErrInvalidArgument},
	} {
		t.Run(tc.what, func(t *testing.T) {
			s := semaphore.New(tc.rc, tc.name, tc.opts)
			for method, err := range calls(s) {
				if !errors.Is(err, tc.want) {
					t.Errorf("%s = %v, want %v", method, err, tc.want)
				}
			}
			if s.Name() != tc.name {
				t.Errorf("Name() = %q, want %q", s.Name(), tc.name)
			}
		})
	}
	if n := raw.Exists(context.Background(), "ok").Val(); n != 0 {
		t.Fatal("bad input reached Redis")
	}
}

// TestBadPermits: a count of permits to take or return below 1, any
// count beyond relock.MaxCount in magnitude (which a Lua number would
// round), and a negative wait are ErrInvalidArgument, name the package
// and the count, and change nothing.
func TestBadPermits(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	s := semaphore.New(newClient(t, nil), name, nil)
	for _, tc := range []struct {
		n      int64
		signed bool // also bad as a count to set or add
	}{
		{0, false},
		{-1, false},
		{-relock.MaxCount, false},
		{relock.MaxCount + 1, true},
		{-relock.MaxCount - 1, true},
		{math.MaxInt64, true},
		{math.MinInt64, true},
	} {
		calls := map[string]func() error{
			"Acquire":    func() error { return s.Acquire(bg, tc.n) },
			"TryAcquire": func() error { return s.TryAcquire(bg, tc.n, 0) },
			"Release":    func() error { return s.Release(bg, tc.n) },
		}
		if tc.signed {
			calls["TrySetPermits"] = func() error { _, err := s.TrySetPermits(bg, tc.n); return err }
			calls["AddPermits"] = func() error { return s.AddPermits(bg, tc.n) }
		}
		for method, call := range calls {
			err := call()
			if !errors.Is(err, relock.ErrInvalidArgument) {
				t.Errorf("%s(%d) = %v, want ErrInvalidArgument", method, tc.n, err)
				continue
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "semaphore: ") || !strings.Contains(msg, strconv.FormatInt(tc.n, 10)) {
				t.Errorf("%s(%d) = %q, want the package and the count in the text", method, tc.n, msg)
			}
		}
	}
	if err := s.TryAcquire(bg, 1, -time.Second); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("TryAcquire with a negative wait = %v, want ErrInvalidArgument", err)
	}
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("bad permits reached Redis")
	}
}

// TestClosedClient: every method of a semaphore on a closed client fails
// with ErrClosed.
func TestClosedClient(t *testing.T) {
	rc := newClient(t, nil)
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	for method, err := range calls(semaphore.New(rc, redistest.Key(t), nil)) {
		if !errors.Is(err, relock.ErrClosed) {
			t.Errorf("%s = %v, want ErrClosed", method, err)
		}
	}
}
