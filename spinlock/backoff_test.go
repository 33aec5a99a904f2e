package spinlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/spinlock"
)

// TestExponential: Redisson's default sequence. The first sleep is 1ms,
// the second 2ms (the jitter of a second sleep is below 1ms: none), each
// next one twice the previous plus less than one millisecond per earlier
// sleep, until 128ms, where it stays.
func TestExponential(t *testing.T) {
	var b spinlock.Exponential
	for range 100 { // the jitter is random: draw the sequence many times
		var prev time.Duration
		for n := 1; n <= 20; n++ {
			d := b.Sleep(n, prev)
			lo, hi := 2*prev, 2*prev+time.Duration(n-2)*time.Millisecond
			switch {
			case n == 1:
				lo, hi = time.Millisecond, time.Millisecond
			case 2*prev >= 128*time.Millisecond:
				lo = 128 * time.Millisecond
			}
			hi = min(hi, 128*time.Millisecond)
			if d < lo || d > hi {
				t.Fatalf("Sleep(%d, %v) = %v, want %v..%v", n, prev, d, lo, hi)
			}
			prev = d
		}
		if prev != 128*time.Millisecond {
			t.Fatalf("sleep after 20 attempts %v, want the 128ms cap", prev)
		}
	}
	custom := spinlock.Exponential{Initial: 10 * time.Millisecond, Max: 25 * time.Millisecond, Multiplier: 3}
	if d := custom.Sleep(1, 0); d != 10*time.Millisecond {
		t.Fatalf("first sleep %v, want Initial", d)
	}
	if d := custom.Sleep(2, 10*time.Millisecond); d != 25*time.Millisecond {
		t.Fatalf("second sleep %v, want Max (30ms capped)", d)
	}
	if d := (spinlock.Exponential{Initial: time.Second}).Sleep(1, 0); d != 128*time.Millisecond {
		t.Fatalf("first sleep with Initial above Max = %v, want Max", d)
	}
}

// TestConstant: Delay, 64ms by default, whatever the attempt.
func TestConstant(t *testing.T) {
	for n := 1; n <= 5; n++ {
		if d := (spinlock.Constant{}).Sleep(n, time.Duration(n)); d != 64*time.Millisecond {
			t.Fatalf("default Sleep(%d) = %v, want 64ms", n, d)
		}
		if d := (spinlock.Constant{Delay: 5 * time.Millisecond}).Sleep(n, 0); d != 5*time.Millisecond {
			t.Fatalf("Sleep(%d) = %v, want 5ms", n, d)
		}
	}
}

// backoffFunc is a Backoff of the caller's own.
type backoffFunc func(n int, prev time.Duration) time.Duration

func (f backoffFunc) Sleep(n int, prev time.Duration) time.Duration { return f(n, prev) }

// TestBadBackoff: a backoff with a negative field, or a nil one of a
// pointer or func type, is bad input that every method reports.
func TestBadBackoff(t *testing.T) {
	rc := newClient(t, nil)
	bg := context.Background()
	name := redistest.Key(t)
	for what, b := range map[string]spinlock.Backoff{
		"negative Initial":    spinlock.Exponential{Initial: -time.Millisecond},
		"negative Max":        &spinlock.Exponential{Max: -time.Millisecond},
		"negative Multiplier": spinlock.Exponential{Multiplier: -1},
		"negative Delay":      spinlock.Constant{Delay: -time.Millisecond},
		"nil *Exponential":    (*spinlock.Exponential)(nil),
		"nil func":            backoffFunc(nil),
	} {
		mu := spinlock.New(rc, name, &spinlock.Options{Backoff: b})
		calls := map[string]func() error{
			"Lock":        func() error { _, err := mu.Lock(bg); return err },
			"TryLock":     func() error { _, err := mu.TryLock(bg, time.Second); return err },
			"Unlock":      func() error { return mu.Unlock(relock.WithNewOwner(bg)) },
			"ForceUnlock": func() error { _, err := mu.ForceUnlock(bg); return err },
			"IsLocked":    func() error { _, err := mu.IsLocked(bg); return err },
			"TTL":         func() error { _, err := mu.TTL(bg); return err },
		}
		for method, call := range calls {
			if err := call(); !errors.Is(err, relock.ErrInvalidArgument) {
				t.Errorf("%s: %s = %v, want ErrInvalidArgument", what, method, err)
			}
		}
	}
	if n := srv.Client(t).Exists(bg, name).Val(); n != 0 {
		t.Fatal("bad input wrote a lock")
	}
}

// TestBackoffPaces: a waiting Lock tries once, then once after each of
// its backoff's sleeps, never more often: with a constant 50ms, at most
// 12 attempts in 500ms; a backoff of the caller's own is asked with the
// count of failed attempts.
func TestBackoffPaces(t *testing.T) {
	redistest.Parallel(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := spinlock.New(newClient(t, nil), name, nil)
	hctx := redistest.Lock(t, holder, bg)
	defer redistest.Unlock(t, holder, hctx)

	for what, b := range map[string]spinlock.Backoff{
		"constant": spinlock.Constant{Delay: 50 * time.Millisecond},
		"own": backoffFunc(func(n int, prev time.Duration) time.Duration {
			if n > 1 && prev != 50*time.Millisecond {
				t.Errorf("Sleep(%d, %v): prev is not the last sleep", n, prev)
			}
			return 50 * time.Millisecond
		}),
	} {
		calls := &redistest.ScriptCounter{}
		mu := spinlock.New(srv.Counted(t, calls), name, &spinlock.Options{Backoff: b})
		_, err := mu.TryLock(bg, 500*time.Millisecond)
		if !errors.Is(err, relock.ErrNotAcquired) {
			t.Fatalf("%s: TryLock = %v, want ErrNotAcquired", what, err)
		}
		// 0, 50, ..., 500ms after the sleeps (the wait's bound and the
		// sleeps start together, after the first attempt, so the tenth
		// sleep may end just before the bound does), and the last when
		// the bound ends.
		if n := calls.N(); n < 2 || n > 12 {
			t.Fatalf("%s: %d attempts in a 500ms wait, want 2 to 12", what, n)
		}
	}
}

// TestWaitEnds: a waiting Lock, even in a long sleep, ends at once when
// its context does and when the client closes, and leaves nothing in
// Redis.
func TestWaitEnds(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := spinlock.New(newClient(t, nil), name, nil)
	hctx := redistest.Lock(t, holder, bg)
	defer redistest.Unlock(t, holder, hctx)
	// Sleeps as long as the lock's 30s TTL.
	slow := &spinlock.Options{Backoff: spinlock.Constant{Delay: time.Hour}}

	for _, tc := range []struct {
		what string
		want error
		end  func(cancel context.CancelFunc, rc *relock.Client)
	}{
		{"context cancelled", context.Canceled, func(cancel context.CancelFunc, _ *relock.Client) { cancel() }},
		{"client closed", relock.ErrClosed, func(_ context.CancelFunc, rc *relock.Client) { rc.Close() }},
	} {
		calls := &redistest.ScriptCounter{}
		rc := srv.Counted(t, calls)
		mu := spinlock.New(rc, name, slow)
		ctx, cancel := context.WithCancel(bg)
		got := make(chan error, 1)
		go func() {
			_, err := mu.Lock(ctx)
			got <- err
		}()
		redistest.Eventually(t, 5*time.Second, "waiter's first attempt", func() bool { return calls.N() >= 1 })
		time.Sleep(50 * time.Millisecond) // into its sleep
		ended := time.Now()
		tc.end(cancel, rc)
		select {
		case err := <-got:
			if !errors.Is(err, tc.want) {
				t.Fatalf("%s: Lock = %v, want %v", tc.what, err, tc.want)
			}
			if took := time.Since(ended); took > 2*time.Second {
				t.Fatalf("%s: Lock returned %v later", tc.what, took)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: Lock still waiting 2s later", tc.what)
		}
		cancel()
		if fields := raw.HGetAll(bg, name).Val(); len(fields) != 1 {
			t.Fatalf("%s: lock fields %v, want the holder's only", tc.what, fields)
		}
		if n := calls.N(); n != 1 {
			t.Fatalf("%s: %d script calls, want the first attempt only", tc.what, n)
		}
	}
}
