package permits_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// TestWatchdogKeepsPermit: with a 1s watchdog a held permit outlives
// five leases, its expiry always ahead of the server's clock, and nobody
// else gets it meanwhile.
func TestWatchdogKeepsPermit(t *testing.T) {
	redistest.SkipShort(t, "it holds a permit for five 1s leases")
	raw := srv.Client(t)
	name := redistest.Key(t)
	const timeout = time.Second
	s := newSemaphore(t, newClient(t, &relock.Options{WatchdogTimeout: timeout}), name, 1, nil)
	other := permits.New(newClient(t, nil), name, nil)
	p := acquireT(t, s)
	for range 10 {
		time.Sleep(timeout / 2)
		if err := p.Context().Err(); err != nil {
			t.Fatalf("permit context ended: %v", context.Cause(p.Context()))
		}
		checkPermits(t, raw, name, timeout, timeout-time.Millisecond, p.ID())
		if q, err := other.TryAcquire(context.Background(), 0); !errors.Is(err, relock.ErrNotAcquired) {
			t.Fatalf("another client's TryAcquire while the permit is held = %v, %v", q, err)
		}
	}
	releaseT(t, p)
}

// TestLostPermitRemoved: a permit removed from Redis under its holder
// (and not given back to the count, so nobody else can take it) cancels
// the holder's context with cause ErrLockLost at the next renewal.
func TestLostPermitRemoved(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	const timeout = time.Second
	s := newSemaphore(t, newClient(t, &relock.Options{WatchdogTimeout: timeout}), name, 1, nil)
	p := acquireT(t, s)
	removed := time.Now()
	if n := raw.ZRem(bg, timeoutOf(name), rawID(t, p.ID())).Val(); n != 1 {
		t.Fatal("permit not in the ZSET")
	}
	select {
	case <-p.Context().Done():
	case <-time.After(3 * time.Second):
		t.Fatal("permit context not cancelled after the permit was removed")
	}
	took := time.Since(removed)
	t.Logf("loss signalled %v after the removal (renewal interval %v)", took, timeout/3)
	if took > timeout/3+500*time.Millisecond {
		t.Fatalf("loss signalled after %v, want within about one renewal interval", took)
	}
	if !errors.Is(context.Cause(p.Context()), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(p.Context()))
	}
	if err := p.Release(bg); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Release of a lost permit = %v, want ErrNotHeld", err)
	}
	checkCount(t, raw, name, "0")
}

// TestLostPermitUnreachable: when Redis stops answering, the holder is
// told within the lease of the last renewal that succeeded, so before
// the server's clock can pass the permit's expiry and anyone's reclaim
// hand it on; and once the server answers again the permit comes back to
// others.
func TestLostPermitUnreachable(t *testing.T) {
	redistest.SkipShort(t, "it waits out leases while its server is frozen")
	own := redistest.Start(t)
	own.RequireReal(t)
	bg := context.Background()
	name := redistest.Key(t)
	// The watchdog reports a loss a tenth of the lease early: 200ms to
	// absorb timer and scheduling delay on a loaded machine.
	const timeout = 2 * time.Second
	rc := redistest.Relock(t, own.LockClient(t), &relock.Options{WatchdogTimeout: timeout, Logger: quiet})
	s := newSemaphore(t, rc, name, 1, nil)
	p := acquireT(t, s)
	time.Sleep(timeout / 2) // let a renewal succeed
	if err := own.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	select {
	case <-p.Context().Done():
	case <-time.After(3 * timeout):
		_ = own.Resume()
		t.Fatal("permit context not cancelled while Redis was unreachable")
	}
	// The holder must be told by the send time of the last renewal that
	// succeeded plus the timeout, which precedes the permit's expiry on
	// the server; that renewal was sent before the pause.
	took := time.Since(paused)
	if err := own.Resume(); err != nil {
		t.Fatal(err)
	}
	t.Logf("loss signalled %v after Redis stopped answering (lease %v)", took, timeout)
	if took > timeout {
		t.Fatalf("loss signalled %v after the pause, after the permit could have expired", took)
	}
	if !errors.Is(context.Cause(p.Context()), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(p.Context()))
	}
	other := permits.New(redistest.Relock(t, own.LockClient(t), nil), name, nil)
	q, err := other.TryAcquire(bg, 3*timeout)
	if err != nil {
		t.Fatalf("the lost permit never came back: %v", err)
	}
	releaseT(t, q)
}

// TestFixedLeaseExpires: a permit with a fixed lease is not renewed: its
// context ends at the lease's end with ErrLockLost, the permit comes
// back to others, and releasing it then finds it gone.
func TestFixedLeaseExpires(t *testing.T) {
	redistest.Parallel(t)
	name := redistest.Key(t)
	const lease = 500 * time.Millisecond
	s := newSemaphore(t, newClient(t, nil), name, 1, &permits.Options{Lease: lease})
	p := acquireT(t, s)
	select {
	case <-p.Context().Done():
	case <-time.After(lease + 2*time.Second):
		t.Fatal("fixed-lease permit's context not cancelled at the lease's end")
	}
	if !errors.Is(context.Cause(p.Context()), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(p.Context()))
	}
	other := permits.New(newClient(t, nil), name, nil)
	q, err := other.TryAcquire(context.Background(), 2*time.Second)
	if err != nil {
		t.Fatalf("expired permit not free for others: %v", err)
	}
	defer releaseT(t, q)
	if err := p.Release(context.Background()); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Release of an expired permit = %v, want ErrNotHeld", err)
	}
}

// TestKilledHolder: a process holding a permit is killed with SIGKILL
// (no release, no goodbye); a waiter in this process, already waiting,
// gets the permit within the lease + 1s of the kill, with the watchdog
// (the last renewal's lease runs out) and with a fixed lease. The waiter
// is woken by no message: it retries when the earliest permit expires.
func TestKilledHolder(t *testing.T) {
	redistest.SkipShort(t, "it waits out a killed holder's lease, twice")
	srv.RequireReal(t)
	for _, tc := range []struct {
		name            string
		watchdog, lease time.Duration
	}{
		{"watchdog", time.Second, 0},
		{"fixed lease", 30 * time.Second, 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bg := context.Background()
			raw := srv.Client(t)
			name := redistest.Key(t)
			lease := tc.lease
			if lease == 0 {
				lease = tc.watchdog
			}
			s := newSemaphore(t, newClient(t, nil), name, 1, nil)
			child, id := redistest.StartChild(t, "hold-permit", srv.Addr, name,
				strconv.FormatInt(tc.watchdog.Milliseconds(), 10), strconv.FormatInt(tc.lease.Milliseconds(), 10))
			checkPermits(t, raw, name, lease, lease, id)

			type result struct {
				at  time.Time
				err error
			}
			got := make(chan result, 1)
			go func() {
				p, err := s.Acquire(bg)
				at := time.Now()
				if err == nil {
					err = p.Release(bg)
				}
				got <- result{at, err}
			}()
			waitSubscribed(t, raw, name, 1)
			// Let the watchdog renew a few times first, so that the
			// waiter has seen the expiry move.
			time.Sleep(lease / 2)
			if err := child.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			_ = child.Wait()
			limit := lease + time.Second
			var r result
			select {
			case r = <-got:
			case <-time.After(limit + 5*time.Second):
				t.Fatalf("waiter did not get the permit within %v of the kill", limit+5*time.Second)
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			took := r.at.Sub(killed)
			t.Logf("killed holder (lease %v): waiter got the permit %v after the kill", lease, took.Round(time.Millisecond))
			if took > limit {
				t.Fatalf("waiter got the permit %v after the kill, past lease + 1s = %v", took, limit)
			}
		})
	}
}
