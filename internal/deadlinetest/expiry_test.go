package deadlinetest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/watchdog"
)

// expiryLease is the lease of the holders whose server freezes: short,
// so that the test takes seconds, and long enough that its tenth (the
// default margin) is well above a loaded machine's timer delays.
const expiryLease = 1500 * time.Millisecond

// expiryWait bounds the wait for a lock context to end past the lease:
// far above what a loaded machine needs, so only a bug exhausts it.
const expiryWait = 5 * time.Second

// TestLossBeforeExpiry freezes (SIGSTOP) a holder's server right after
// its acquire, so that no renewal gets through, and checks that the
// holder's lock context is cancelled with ErrLockLost before the server
// could expire the lock: before the instant the acquire was called plus
// the lease (the acquire was sent after it, and the server set the lease
// after that), and before the expiry the server itself recorded
// (PEXPIRETIME, read just before the freeze: the same host's wall
// clock). Then the server runs again, past that expiry, and the lock is
// gone: Redis expires keys by its wall clock, which ran on while the
// process was stopped.
func TestLossBeforeExpiry(t *testing.T) {
	redistest.SkipShort(t, "freezes five servers for a lease each")
	for _, tc := range []struct {
		name   string
		do     bool          // through relock.Do rather than Lock
		lease  time.Duration // the lock's fixed lease; 0: the watchdog's
		margin time.Duration // Options.LeaseMargin
		// want is the margin in effect: the context must not end
		// before the lease less it.
		want time.Duration
	}{
		{name: "Lock/watchdog", want: expiryLease / 10},
		{name: "Lock/watchdog_margin", margin: 400 * time.Millisecond, want: 400 * time.Millisecond},
		{name: "Lock/fixed", lease: expiryLease, margin: 300 * time.Millisecond, want: 300 * time.Millisecond},
		{name: "Do/watchdog", do: true, want: expiryLease / 10},
		{name: "Do/fixed", do: true, lease: expiryLease, margin: 300 * time.Millisecond, want: 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t)
			s.RequireReal(t)
			raw := s.Client(t)
			rc := redistest.Relock(t, s.LockClient(t), &relock.Options{
				WatchdogTimeout: expiryLease,
				LeaseMargin:     tc.margin,
				Logger:          quiet,
			})
			// Cleanups run last first: the server answers again before
			// the client closes.
			t.Cleanup(func() { _ = s.Resume() })
			name := redistest.Key(t)
			mu := reentrant.New(rc, name, &reentrant.Options{Lease: tc.lease})

			// freeze reads the lock's expiry on the server, in its
			// clock, then stops the server.
			var expires time.Time
			freeze := func(ctx context.Context) {
				ms, err := raw.PExpireTime(ctx, name).Result()
				if err != nil {
					t.Errorf("PEXPIRETIME: %v", err)
				}
				expires = time.UnixMilli(ms.Milliseconds())
				if err := s.Pause(); err != nil {
					t.Fatal(err)
				}
			}
			// hold waits, bounded, for the lock context to end, and
			// returns when it did and why.
			hold := func(lctx context.Context) (time.Time, error) {
				select {
				case <-lctx.Done():
					return time.Now(), context.Cause(lctx)
				case <-time.After(expiryLease + expiryWait):
					return time.Time{}, errors.New("lock context not cancelled")
				}
			}

			var told time.Time
			var cause error
			called := time.Now()
			if tc.do {
				err := relock.Do(context.Background(), mu, func(lctx context.Context) error {
					freeze(lctx)
					told, cause = hold(lctx)
					return cause
				})
				if !errors.Is(err, relock.ErrLockLost) {
					t.Errorf("Do returned %v, want ErrLockLost", err)
				}
			} else {
				lctx, err := mu.Lock(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if tc.lease > 0 {
					dl, ok := lctx.Deadline()
					if want := called.Add(tc.lease - tc.want); !ok || dl.Before(want) || dl.After(time.Now().Add(tc.lease-tc.want)) {
						t.Errorf("deadline %v after Lock was called (set %v), want the lease less the margin, %v", dl.Sub(called), ok, tc.lease-tc.want)
					}
				}
				freeze(lctx)
				told, cause = hold(lctx)
			}
			if told.IsZero() {
				t.Fatal(cause)
			}
			lease := max(tc.lease, expiryLease)
			t.Logf("told %v after the call, %v before call + lease, %v before the server's expiry; cause: %v",
				told.Sub(called).Round(time.Millisecond), called.Add(lease).Sub(told).Round(time.Millisecond),
				expires.Sub(told).Round(time.Millisecond), cause)
			if !errors.Is(cause, relock.ErrLockLost) {
				t.Errorf("cause %v, want ErrLockLost", cause)
			}
			if tc.lease == 0 && !errors.Is(cause, watchdog.ErrExpired) {
				t.Errorf("cause %v, want watchdog.ErrExpired", cause)
			}
			if !told.Before(called.Add(lease)) {
				t.Errorf("told %v after the call, not before the lease of %v", told.Sub(called), lease)
			}
			if !told.Before(expires) {
				t.Errorf("told %v after the server's expiry", told.Sub(expires))
			}
			if early := called.Add(lease - tc.want); told.Before(early) {
				t.Errorf("told %v before the lease less the margin", early.Sub(told))
			}
			if tc.margin > 0 && tc.lease == 0 {
				// The margin set is the one used, give or take a loaded
				// machine's delays (half of it).
				if late := called.Add(lease - tc.margin/2); told.After(late) {
					t.Errorf("told %v after the lease less half the margin", told.Sub(late))
				}
			}

			// Past the server's expiry, the server runs again: the lock
			// is expired by its wall clock, and the renewals that waited
			// in its sockets find it gone.
			time.Sleep(time.Until(expires.Add(100 * time.Millisecond)))
			if err := s.Resume(); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			keys, err := raw.DBSize(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			n, err := raw.Exists(ctx, name).Result()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("after SIGCONT: DBSIZE %d (keys not yet reclaimed count), EXISTS %d", keys, n)
			if n != 0 {
				t.Errorf("lock key still there after its expiry")
			}
			other := reentrant.New(redistest.Relock(t, s.LockClient(t), &relock.Options{Logger: quiet}), name, nil)
			octx, err := other.TryLock(ctx, 0)
			if err != nil {
				t.Fatalf("another client's TryLock after the expiry: %v", err)
			}
			if err := other.Unlock(octx); err != nil {
				t.Error(err)
			}
		})
	}
}
