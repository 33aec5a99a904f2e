package latch_test

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
	"github.com/relock-go/relock/latch"
)

// TestBadInput: every kind of bad input is an error from every method
// that can meet it, never a panic, and writes nothing.
func TestBadInput(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	rc := newClient(t)
	closed, err := relock.New(srv.LockClient(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	name := redistest.Key(t)

	for _, tc := range []struct {
		what string
		l    *latch.Latch
		want error
	}{
		{"empty name", latch.New(rc, "", nil), relock.ErrInvalidName},
		{"empty hash tag", latch.New(rc, "a{}b", nil), relock.ErrInvalidName},
		{"unclosed hash tag", latch.New(rc, "a{b", nil), relock.ErrInvalidName},
		{"closing brace without a tag", latch.New(rc, "a}b", nil), relock.ErrInvalidName},
		{"nil client", latch.New(nil, name, nil), relock.ErrInvalidArgument},
		{"typed nil client", latch.New((*relock.Client)(nil), name, &latch.Options{}), relock.ErrInvalidArgument},
		{"closed client", latch.New(closed, name, nil), relock.ErrClosed},
	} {
		t.Run(tc.what, func(t *testing.T) {
			calls := map[string]func() error{
				"TrySetCount": func() error { _, err := tc.l.TrySetCount(bg, 1); return err },
				"CountDown":   func() error { return tc.l.CountDown(bg) },
				"Count":       func() error { _, err := tc.l.Count(bg); return err },
				"Await":       func() error { return tc.l.Await(bg) },
				"TryAwait":    func() error { _, err := tc.l.TryAwait(bg, time.Second); return err },
				"Delete":      func() error { _, err := tc.l.Delete(bg); return err },
			}
			for method, call := range calls {
				if err := call(); !errors.Is(err, tc.want) {
					t.Errorf("%s = %v, want %v", method, err, tc.want)
				}
			}
		})
	}

	if n := raw.Exists(bg, name, "", "a{}b", "a{b", "a}b").Val(); n != 0 {
		t.Fatalf("bad input wrote %d keys", n)
	}

	// Counts below 1, or beyond relock.MaxCount, which a Lua number
	// would round.
	l := latch.New(rc, name, nil)
	for _, n := range []int64{0, -1, math.MinInt64, relock.MaxCount + 1, math.MaxInt64} {
		ok, err := l.TrySetCount(bg, n)
		if ok || !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("TrySetCount(%d) = %v, %v; want relock.ErrInvalidArgument", n, ok, err)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "latch: ") || !strings.Contains(msg, strconv.FormatInt(n, 10)) {
			t.Errorf("TrySetCount(%d) = %q, want the package and the count in the text", n, msg)
		}
	}
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("a refused TrySetCount wrote the count")
	}
	if _, err := l.TrySetCount(bg, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.TryAwait(bg, -time.Second); ok || !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("TryAwait(-1s) = %v, %v; want relock.ErrInvalidArgument", ok, err)
	}
	if l.Name() != name {
		t.Errorf("Name() = %q, want %q", l.Name(), name)
	}
}
