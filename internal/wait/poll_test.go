package wait_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/wait"
)

// These tests run the polling wait in a testing/synctest bubble, so every
// instant below is exact: an attempt's time is the bubble's fake clock.

// A lock plays a lock type's attempts: it is taken until attempt free (1
// for the first; 0 never), reports ttl, and fails the attempts in errs.
type lock struct {
	t     *testing.T
	start time.Time
	free  int
	ttl   time.Duration
	errs  map[int]error

	at      []time.Duration // when each attempt ran, from start
	gaveUp  int
	heardOf bool // an attempt was told the waiter listens
}

func (l *lock) Attempt(_ context.Context, listening bool) (wait.Outcome, error) {
	l.at = append(l.at, time.Since(l.start))
	l.heardOf = l.heardOf || listening
	n := len(l.at)
	if err := l.errs[n]; err != nil {
		return wait.Outcome{}, err
	}
	if n == l.free {
		return wait.Outcome{Acquired: true}, nil
	}
	return wait.Outcome{TTL: l.ttl}, nil
}

func (l *lock) Handoff(context.Context, string) (bool, error) {
	l.t.Error("a polling wait took a hand-off")
	return false, nil
}

func (l *lock) GiveUp(context.Context) error { l.gaveUp++; return nil }

// doubling is a Backoff from first, doubling, that records its calls.
type doubling struct {
	first time.Duration
	calls [][2]int64 // {n, prev}
}

func (b *doubling) Sleep(n int, prev time.Duration) time.Duration {
	b.calls = append(b.calls, [2]int64{int64(n), int64(prev)})
	if n == 1 {
		return b.first
	}
	return 2 * prev
}

// fixed is a Backoff of constant sleeps.
type fixed time.Duration

func (f fixed) Sleep(int, time.Duration) time.Duration { return time.Duration(f) }

// newHub returns a hub whose client is never dialled: a polling wait uses it
// only for Done. It closes when t ends.
func newHub(t *testing.T) *hub.Hub {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	h := hub.New(rdb, false, slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		h.Close()
		rdb.Close()
	})
	return h
}

// run polls l with b in a bubble and returns Acquire's error.
func run(t *testing.T, l *lock, b wait.Backoff, set func(*wait.Spec)) error {
	t.Helper()
	l.t, l.start = t, time.Now()
	s := wait.Spec{Hub: newHub(t), Acquirer: l, Wait: -1, Poll: b}
	if set != nil {
		set(&s)
	}
	err := wait.Acquire(context.Background(), s)
	if l.heardOf {
		t.Error("an attempt was told the polling waiter listens")
	}
	return err
}

func ms(ds ...int) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = time.Duration(d) * time.Millisecond
	}
	return out
}

// The waiter sleeps what the Backoff says, passing it the failed
// attempt's number and its previous sleep, subscribes to nothing, and
// stops at the attempt that acquires.
func TestPollSleeps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &lock{free: 5, ttl: -1}
		b := &doubling{first: 10 * time.Millisecond}
		h := newHub(t)
		if err := run(t, l, b, func(s *wait.Spec) { s.Hub = h }); err != nil {
			t.Fatal(err)
		}
		if want := ms(0, 10, 30, 70, 150); !slices.Equal(l.at, want) {
			t.Fatalf("attempts at %v, want %v", l.at, want)
		}
		want := [][2]int64{{1, 0}, {2, int64(10 * time.Millisecond)}, {3, int64(20 * time.Millisecond)}, {4, int64(40 * time.Millisecond)}}
		if !slices.Equal(b.calls, want) {
			t.Fatalf("Sleep calls %v, want %v", b.calls, want)
		}
		if n := h.Connections(); n != 0 {
			t.Fatalf("%d subscription connections, want none", n)
		}
		if l.gaveUp != 0 {
			t.Fatal("GiveUp after an acquire")
		}
	})
}

// A sleep ends at the lock's TTL, when that comes first; MaxSleep caps
// it too; sleeps below MinPoll are raised to it.
func TestPollCaps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ttl      time.Duration
		b        wait.Backoff
		maxSleep time.Duration
		want     []time.Duration
	}{
		{"ttl", 15 * time.Millisecond, fixed(100 * time.Millisecond), 0, ms(0, 15, 30)},
		{"no ttl", -1, fixed(100 * time.Millisecond), 0, ms(0, 100, 200)},
		{"max sleep", -1, fixed(100 * time.Millisecond), 5 * time.Millisecond, ms(0, 5, 10)},
		{"min poll", -1, fixed(0), 0, []time.Duration{0, wait.MinPoll, 2 * wait.MinPoll}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := &lock{free: 3, ttl: tc.ttl}
				if err := run(t, l, tc.b, func(s *wait.Spec) { s.MaxSleep = tc.maxSleep }); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(l.at, tc.want) {
					t.Fatalf("attempts at %v, want %v", l.at, tc.want)
				}
			})
		})
	}
}

// A bounded wait tries once more when its bound runs out, then gives up
// with ErrNotAcquired and GiveUp; a single attempt never sleeps.
func TestPollBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &lock{ttl: -1}
		err := run(t, l, fixed(30*time.Millisecond), func(s *wait.Spec) { s.Wait = 100 * time.Millisecond })
		if !errors.Is(err, core.ErrNotAcquired) {
			t.Fatalf("Acquire = %v, want ErrNotAcquired", err)
		}
		if want := ms(0, 30, 60, 90, 100); !slices.Equal(l.at, want) {
			t.Fatalf("attempts at %v, want %v", l.at, want)
		}
		if l.gaveUp != 1 {
			t.Fatalf("GiveUp called %d times, want 1", l.gaveUp)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		l := &lock{ttl: -1}
		b := &doubling{first: time.Millisecond}
		err := run(t, l, b, func(s *wait.Spec) { s.Wait = 0 })
		if !errors.Is(err, core.ErrNotAcquired) || len(l.at) != 1 || len(b.calls) != 0 || l.gaveUp != 0 {
			t.Fatalf("single attempt: %v, attempts %v, Sleep calls %v, GiveUp %d", err, l.at, b.calls, l.gaveUp)
		}
	})
}

// The caller's end and the client's close end a sleep at once.
func TestPollEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(45*time.Millisecond, cancel)
		l := &lock{t: t, start: time.Now(), ttl: -1}
		err := wait.Acquire(ctx, wait.Spec{Hub: newHub(t), Acquirer: l, Wait: -1, Poll: fixed(30 * time.Millisecond)})
		if !errors.Is(err, core.ErrNotAcquired) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire = %v, want ErrNotAcquired and context.Canceled", err)
		}
		if took := time.Since(l.start); took != 45*time.Millisecond {
			t.Fatalf("returned %v after the start, want at the cancel (45ms)", took)
		}
		if l.gaveUp != 1 {
			t.Fatalf("GiveUp called %d times, want 1", l.gaveUp)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHub(t)
		time.AfterFunc(45*time.Millisecond, func() { h.Close() })
		l := &lock{ttl: -1}
		start := time.Now()
		err := run(t, l, fixed(30*time.Millisecond), func(s *wait.Spec) { s.Hub = h })
		if !errors.Is(err, core.ErrClosed) {
			t.Fatalf("Acquire = %v, want ErrClosed", err)
		}
		if took := time.Since(start); took != 45*time.Millisecond {
			t.Fatalf("returned %v after the start, want at the close (45ms)", took)
		}
	})
}

// An attempt that cannot reach Redis is retried after the listening
// wait's backoff (50ms), which counts as no failed attempt for the
// Backoff; any other error ends the wait.
func TestPollErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &lock{free: 4, ttl: -1, errs: map[int]error{2: io.EOF}}
		b := &doubling{first: 10 * time.Millisecond}
		if err := run(t, l, b, nil); err != nil {
			t.Fatal(err)
		}
		if want := ms(0, 10, 60, 80); !slices.Equal(l.at, want) {
			t.Fatalf("attempts at %v, want %v", l.at, want)
		}
		if len(b.calls) != 2 {
			t.Fatalf("Sleep calls %v, want 2", b.calls)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		l := &lock{ttl: -1, errs: map[int]error{2: boom}}
		if err := run(t, l, fixed(10*time.Millisecond), nil); !errors.Is(err, boom) || len(l.at) != 2 {
			t.Fatalf("Acquire = %v after attempts %v, want boom after 2", err, l.at)
		}
	})
}
