package faulttest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// TestPartitionedPermitHolderToldFirst: a permit holder cut off from
// Redis has its permit's context cancelled with relock.ErrLockLost
// before another client can take the permit, in each trial per kind of
// partition (a black hole, and a refusal: see
// TestPartitionedHolderToldFirst, whose method this follows).
//
// The semaphore has one permit. The holder's client goes through a
// proxy, with a 3s watchdog; the other client, connected directly,
// tries to acquire every 2ms once the partition starts. Each attempt
// first reclaims the permits whose expiry has passed on the server's
// clock, so the attempt that gets the permit is the first after the
// holder's last renewal ran out. The holder's context must already be
// done when that attempt is called: the watchdog reports the loss a
// tenth of the lease before the expiry the last successful renewal set,
// reckoned from that renewal's send time. That tenth (300ms) is what
// absorbs the delay of the watchdog's timer and goroutines on a loaded
// machine, so the lease is longer than the locks' test's and the trials
// fewer.
func TestPartitionedPermitHolderToldFirst(t *testing.T) {
	requireReal(t)
	t.Run("black hole", func(t *testing.T) {
		x := newProxy(t)
		permitPartitionTrials(t, x, 6, func() error { return x.Partition() }, x.Heal)
	})
	t.Run("refused", func(t *testing.T) {
		x := newProxy(t)
		permitPartitionTrials(t, x, 3, func() error { x.Down(); return nil }, x.Up)
	})
}

func permitPartitionTrials(t *testing.T, x *proxy, trials int, cut, heal func() error) {
	const lease = 3 * time.Second
	bg := context.Background()
	holderRC := newClient(t, x.Addr, &relock.Options{WatchdogTimeout: lease, Logger: quiet})
	otherRC := newClient(t, srv.Addr, nil)
	toldFirst(t, trials, lease, cut, heal, func(trial int) contest {
		name := redistest.Key(t)
		other := permits.New(otherRC, name, nil)
		if ok, err := other.TrySetPermits(bg, 1); err != nil || !ok {
			t.Fatalf("trial %d: TrySetPermits = %v, %v", trial, ok, err)
		}
		holder := permits.New(holderRC, name, nil)
		p, err := holder.Acquire(bg)
		if err != nil {
			t.Fatalf("trial %d: holder Acquire: %v", trial, err)
		}
		return contest{
			held: p.Context(),
			try: func() (func() error, error) {
				q, err := other.TryAcquire(bg, 0)
				if err != nil {
					return nil, err
				}
				return func() error { return q.Release(bg) }, nil
			},
			after: func() {
				if err := p.Release(bg); !errors.Is(err, relock.ErrNotHeld) {
					t.Errorf("trial %d: holder Release after the loss: %v, want relock.ErrNotHeld", trial, err)
				}
				if n, err := other.AvailablePermits(bg); err != nil || n != 1 {
					t.Errorf("trial %d: AvailablePermits = %d, %v; want the one permit back", trial, n, err)
				}
			},
		}
	})
}
