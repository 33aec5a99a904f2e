package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// acquiring runs s.Acquire(ctx, n) in a goroutine and delivers its error
// and when it returned.
func acquiring(ctx context.Context, s *semaphore.Semaphore, n int64) <-chan result {
	got := make(chan result, 1)
	go func() {
		err := s.Acquire(ctx, n)
		got <- result{err, time.Now()}
	}()
	return got
}

type result struct {
	err error
	at  time.Time
}

// within returns what got delivers within limit, failing the test if
// nothing comes.
func within(t *testing.T, got <-chan result, limit time.Duration, what string) result {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(limit):
		t.Fatalf("%s: nothing within %v", what, limit)
		return result{}
	}
}

// quiet fails the test if got delivers within d.
func quiet(t *testing.T, got <-chan result, d time.Duration, what string) {
	t.Helper()
	select {
	case r := <-got:
		t.Fatalf("%s returned %v", what, r.err)
	case <-time.After(d):
	}
}

// serverCalls sums the commands the server behind raw has run, but
// INFO's own.
func serverCalls(t *testing.T, raw *redis.Client) int64 {
	t.Helper()
	var n int64
	for cmd, calls := range redistest.CommandCalls(t, raw) {
		if cmd != "info" {
			n += calls
		}
	}
	return n
}

// TestWakeNotPolling: a waiter sends no command while it waits, and a
// release wakes it at once. The test has a server of its own, so that
// nothing else counts.
func TestWakeNotPolling(t *testing.T) {
	redistest.Parallel(t)
	own := redistest.Start(t)
	own.RequireReal(t)
	raw := own.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := semaphore.New(redistest.Relock(t, own.LockClient(t), nil), name, nil)
	waiter := semaphore.New(redistest.Relock(t, own.LockClient(t), nil), name, nil)
	if err := holder.Release(bg, 1); err != nil {
		t.Fatal(err)
	}
	if err := holder.Acquire(bg, 1); err != nil {
		t.Fatal(err)
	}
	got := acquiring(bg, waiter, 1)
	waitSubscribed(t, raw, channelOf(name), 1)
	time.Sleep(50 * time.Millisecond) // let the waiter's attempt after subscribing land
	before := serverCalls(t, raw)
	quiet(t, got, 300*time.Millisecond, "Acquire with no permit")
	if d := serverCalls(t, raw) - before; d != 0 {
		t.Fatalf("%d commands reached Redis while the waiter waited", d)
	}
	released := time.Now()
	if err := holder.Release(bg, 1); err != nil {
		t.Fatal(err)
	}
	r := within(t, got, 5*time.Second, "waiter after the release")
	if r.err != nil {
		t.Fatal(r.err)
	}
	took := r.at.Sub(released)
	t.Logf("waiter acquired %v after the release", took)
	// Nothing but the release's message can wake it: anything near a
	// second means it was not heard.
	if took > time.Second {
		t.Fatalf("waiter acquired %v after the release", took)
	}
	if v := raw.Get(bg, name).Val(); v != "0" {
		t.Fatalf("count after the waiter acquired = %q, want 0", v)
	}
}

// TestReleaseWakesByCount: Release(2) with three waiters of one permit
// each, on one client, lets exactly two of them through; the third waits
// on, and its cancelled wait takes nothing.
func TestReleaseWakesByCount(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	rc := newClient(t, nil)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	got := make(chan result, 3)
	for range 3 {
		go func() {
			err := semaphore.New(rc, name, nil).Acquire(ctx, 1)
			got <- result{err, time.Now()}
		}()
	}
	waitSubscribed(t, raw, channelOf(name), 1) // one subscription per client
	time.Sleep(100 * time.Millisecond)         // every waiter's attempt after subscribing
	if err := semaphore.New(newClient(t, nil), name, nil).Release(bg, 2); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if r := within(t, got, 5*time.Second, "waiter after Release(2)"); r.err != nil {
			t.Fatalf("waiter %d: %v", i, r.err)
		}
	}
	quiet(t, got, 200*time.Millisecond, "third waiter with no permit left")
	cancel()
	r := within(t, got, 2*time.Second, "cancelled waiter")
	if !errors.Is(r.err, relock.ErrNotAcquired) || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled Acquire = %v, want ErrNotAcquired and context.Canceled", r.err)
	}
	if v := raw.Get(bg, name).Val(); v != "0" {
		t.Fatalf("count = %q, want 0", v)
	}
	raw.Del(bg, name)
}

// TestWakeByWants: one client's waiters for 3 and for 1 permit, the
// first waiting longer; a release of 1 wakes the waiter it is enough for,
// not the one that wants 3, which waits on until 3 are available.
func TestWakeByWants(t *testing.T) {
	redistest.Parallel(t)
	bg := context.Background()
	name := redistest.Key(t)
	s := semaphore.New(newClient(t, nil), name, nil)
	if ok, err := s.TrySetPermits(bg, 0); err != nil || !ok {
		t.Fatalf("TrySetPermits(0) = %v, %v", ok, err)
	}
	raw := srv.Client(t)
	big := acquiring(bg, s, 3)
	waitSubscribed(t, raw, channelOf(name), 1)
	quiet(t, big, 100*time.Millisecond, "Acquire(3) of none")
	small := acquiring(bg, s, 1)
	quiet(t, small, 200*time.Millisecond, "Acquire(1) of none")

	other := semaphore.New(newClient(t, nil), name, nil)
	if err := other.Release(bg, 1); err != nil {
		t.Fatal(err)
	}
	if r := within(t, small, 5*time.Second, "Acquire(1) after Release(1)"); r.err != nil {
		t.Fatal(r.err)
	}
	quiet(t, big, 200*time.Millisecond, "Acquire(3) with 1 released")
	if err := other.Release(bg, 3); err != nil {
		t.Fatal(err)
	}
	if r := within(t, big, 5*time.Second, "Acquire(3) after Release(3)"); r.err != nil {
		t.Fatal(r.err)
	}
	if n, err := s.AvailablePermits(bg); err != nil || n != 0 {
		t.Fatalf("AvailablePermits = %d, %v; want 0", n, err)
	}
}

// TestCancelLeavesNothing: an Acquire whose context ends returns an error
// matching ErrNotAcquired and ctx.Err(), leaves the count as it was (an
// absent key absent), and its subscription goes.
func TestCancelLeavesNothing(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	for _, tc := range []struct {
		what  string
		setup func(name string)
		want  string // GET afterwards, "" for absent
	}{
		{"absent", func(string) {}, ""},
		{"too few", func(name string) { raw.Set(bg, name, 1, 0) }, "1"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			name := redistest.Key(t)
			tc.setup(name)
			s := semaphore.New(newClient(t, nil), name, nil)
			ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
			defer cancel()
			err := s.Acquire(ctx, 2)
			if !errors.Is(err, relock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Acquire past its deadline = %v, want ErrNotAcquired and DeadlineExceeded", err)
			}
			if v := raw.Get(bg, name).Val(); v != tc.want {
				t.Fatalf("count after the cancelled wait = %q, want %q", v, tc.want)
			}
			redistest.Eventually(t, redistest.Linger+2*time.Second, "subscription dropped", func() bool {
				return subscribers(raw, channelOf(name)) == 0
			})
			raw.Del(bg, name)
		})
	}
}

// TestTryAcquire: wait 0 is exactly one script call; a wait bound gives
// up after about the bound with ErrNotAcquired; a release within the
// bound is taken.
func TestTryAcquire(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	calls := &redistest.ScriptCounter{}
	s := semaphore.New(srv.Counted(t, calls), name, nil)
	if err := s.TryAcquire(bg, 1, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryAcquire(0) = %v, want ErrNotAcquired", err)
	}
	if n := calls.N(); n != 1 {
		t.Fatalf("TryAcquire(0) made %d script calls, want 1", n)
	}

	start := time.Now()
	err := s.TryAcquire(bg, 1, 300*time.Millisecond)
	took := time.Since(start)
	if !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryAcquire(300ms) = %v, want ErrNotAcquired", err)
	}
	t.Logf("TryAcquire(300ms) gave up after %v", took)
	if took < 300*time.Millisecond || took > 3*time.Second {
		t.Fatalf("TryAcquire(300ms) gave up after %v", took)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("a TryAcquire that gave up created the key")
	}

	other := semaphore.New(newClient(t, nil), name, nil)
	time.AfterFunc(100*time.Millisecond, func() {
		if err := other.Release(bg, 1); err != nil {
			t.Error(err)
		}
	})
	if err := s.TryAcquire(bg, 1, 10*time.Second); err != nil {
		t.Fatalf("TryAcquire(10s) with a release after 100ms: %v", err)
	}
	raw.Del(bg, name)
}

// TestCloseEndsWait: closing the client ends its waits with ErrClosed
// promptly, and every method fails with ErrClosed afterwards.
func TestCloseEndsWait(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	rc := newClient(t, nil)
	s := semaphore.New(rc, name, nil)
	got := acquiring(bg, s, 1)
	waitSubscribed(t, srv.Client(t), channelOf(name), 1)
	closed := time.Now()
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	r := within(t, got, 2*time.Second, "Acquire after Close")
	if !errors.Is(r.err, relock.ErrClosed) {
		t.Fatalf("Acquire ended by Close = %v, want ErrClosed", r.err)
	}
	t.Logf("wait ended %v after Close began", r.at.Sub(closed))
	if err := s.Acquire(bg, 1); !errors.Is(err, relock.ErrClosed) {
		t.Fatalf("Acquire after Close = %v, want ErrClosed", err)
	}
}
