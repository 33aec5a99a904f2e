package faulttest_test

import (
	"context"
	"errors"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
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
// machine, so the lease is twice the locks' test's and the trials fewer.
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
	const (
		lease = 3 * time.Second
		poll  = 2 * time.Millisecond
	)
	bg := context.Background()
	holderRC := newClient(t, x.Addr, &relock.Options{WatchdogTimeout: lease, Logger: quiet})
	otherRC := newClient(t, srv.Addr, nil)
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)

	var margins []time.Duration
	for trial := range trials {
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
		hctx := p.Context()
		told := make(chan time.Time, 1)
		context.AfterFunc(hctx, func() { told <- time.Now() })
		time.Sleep(time.Duration(r.Int63n(int64(lease / 3))))
		must(t, cut())
		cutAt := time.Now()

		var q *permits.Permit
		var granted, seen time.Time // seen: first poll that found the holder told
		for deadline := cutAt.Add(3 * lease); ; {
			toldBefore := hctx.Err() != nil
			call := time.Now()
			if toldBefore && seen.IsZero() {
				seen = call
			}
			q, err = other.TryAcquire(bg, 0)
			if err == nil {
				granted = call
				if !toldBefore {
					t.Errorf("trial %d: the TryAcquire that got the permit was called while the holder's context was live", trial)
				}
				if hctx.Err() == nil {
					t.Fatalf("trial %d: another client got the permit %v after the partition while the holder's context was live",
						trial, time.Since(cutAt))
				}
				break
			}
			if !errors.Is(err, relock.ErrNotAcquired) {
				t.Fatalf("trial %d: TryAcquire: %v", trial, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("trial %d: nobody got the permit within %v of the partition", trial, 3*lease)
			}
			time.Sleep(poll)
		}
		var toldAt time.Time
		select {
		case toldAt = <-told:
		case <-time.After(5 * time.Second):
			t.Fatalf("trial %d: holder's context done but AfterFunc did not run", trial)
		}
		if !seen.IsZero() && seen.Before(toldAt) {
			toldAt = seen
		}
		if cause := context.Cause(hctx); !errors.Is(cause, relock.ErrLockLost) {
			t.Errorf("trial %d: holder's context cause %v, want relock.ErrLockLost", trial, cause)
		}
		margin := granted.Sub(toldAt)
		t.Logf("trial %2d: holder told %v after the partition, other got the permit %v after it: margin %v",
			trial, toldAt.Sub(cutAt).Round(time.Millisecond), granted.Sub(cutAt).Round(time.Millisecond), margin.Round(100*time.Microsecond))
		margins = append(margins, margin)

		must(t, heal())
		if err := q.Release(bg); err != nil {
			t.Errorf("trial %d: other Release: %v", trial, err)
		}
		if err := p.Release(bg); !errors.Is(err, relock.ErrNotHeld) {
			t.Errorf("trial %d: holder Release after the loss: %v, want relock.ErrNotHeld", trial, err)
		}
		if n, err := other.AvailablePermits(bg); err != nil || n != 1 {
			t.Errorf("trial %d: AvailablePermits = %d, %v; want the one permit back", trial, n, err)
		}
	}
	slices.Sort(margins)
	t.Logf("%d trials, lease %v: margin (holder told -> other's TryAcquire call) min %v, median %v, max %v",
		trials, lease, margins[0].Round(100*time.Microsecond), margins[trials/2].Round(100*time.Microsecond), margins[trials-1].Round(100*time.Microsecond))
}
