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
	"github.com/relock-go/relock/reentrant"
)

// TestPartitionedHolderToldFirst: a holder cut off from Redis has its
// lock context cancelled with relock.ErrLockLost before anyone else can
// take the lock, in each of 20 trials per kind of partition.
//
// The holder's client goes through a proxy, with a 2s watchdog; the
// other client is connected directly and tries the lock every 2ms once
// the partition starts. Each trial partitions at a random phase of the
// renewal interval. Both timestamps are recorded: when the holder's
// context was cancelled (as seen by context.AfterFunc, a little after
// the fact) and when the successful TryLock was called (a little before
// the server granted it), so the margin logged underestimates the real
// one. The watchdog reports a loss a tenth of the lease before the
// server may expire it, so the margin should be about 200ms. That tenth
// is all that absorbs the delay of the watchdog's timer and goroutines:
// with an 800ms lease (80ms) on this 2-core machine, shared with other
// test runs, 2 trials in 20 saw the holder told a few ms after the other
// client's successful TryLock was called, and the expirable permits'
// twin of this test once failed with a 1.5s lease (150ms) under -race
// on a loaded machine, so the lease here is longer.
//
// The assertion does not depend on goroutine wake-ups: the holder's
// context is already done (Err, read synchronously) when the TryLock
// that gets the lock is called, so the cancellation came before the
// grant. The margin logged is the time from the earlier of the AfterFunc
// and the first poll that saw the context done, to that TryLock's call.
//
// Two kinds of partition: a black hole (connections stay open and hear
// nothing: renewals hang until their round's deadline), and a refusal
// (the proxy stops: connections close, new ones are refused: renewals
// fail at once and are retried).
func TestPartitionedHolderToldFirst(t *testing.T) {
	requireReal(t)
	t.Run("black hole", func(t *testing.T) {
		x := newProxy(t)
		partitionTrials(t, x, 20, func() error { return x.Partition() }, x.Heal)
	})
	t.Run("refused", func(t *testing.T) {
		x := newProxy(t)
		partitionTrials(t, x, 10, func() error { x.Down(); return nil }, x.Up)
	})
}

func partitionTrials(t *testing.T, x *proxy, trials int, cut, heal func() error) {
	const (
		lease = 2 * time.Second
		poll  = 2 * time.Millisecond
	)
	bg := context.Background()
	holderRC := newClient(t, x.Addr, &relock.Options{WatchdogTimeout: lease, Logger: quiet})
	otherRC := newClient(t, srv.Addr, nil)
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)

	var margins, toldAfter []time.Duration
	for trial := range trials {
		name := redistest.Key(t)
		holder := reentrant.New(holderRC, name, nil)
		other := reentrant.New(otherRC, name, nil)
		hctx, err := holder.Lock(bg)
		if err != nil {
			t.Fatalf("trial %d: holder Lock: %v", trial, err)
		}
		told := make(chan time.Time, 1)
		context.AfterFunc(hctx, func() { told <- time.Now() })
		time.Sleep(time.Duration(r.Int63n(int64(lease / 3))))
		must(t, cut())
		cutAt := time.Now()

		var octx context.Context
		var granted, seen time.Time // seen: first poll that found the holder told
		for deadline := cutAt.Add(3 * lease); ; {
			toldBefore := hctx.Err() != nil
			call := time.Now()
			if toldBefore && seen.IsZero() {
				seen = call
			}
			octx, err = other.TryLock(bg, 0)
			if err == nil {
				granted = call
				if !toldBefore {
					t.Errorf("trial %d: the TryLock that got the lock was called while the holder's context was live", trial)
				}
				// The server granted it before TryLock returned: the
				// holder must have been told by now.
				if hctx.Err() == nil {
					t.Fatalf("trial %d: another client got the lock %v after the partition while the holder's context was live",
						trial, time.Since(cutAt))
				}
				break
			}
			if !errors.Is(err, relock.ErrNotAcquired) {
				t.Fatalf("trial %d: TryLock: %v", trial, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("trial %d: nobody got the lock within %v of the partition", trial, 3*lease)
			}
			time.Sleep(poll)
		}
		var toldAt time.Time
		select {
		case toldAt = <-told:
		case <-time.After(5 * time.Second):
			t.Fatalf("trial %d: holder's context done but AfterFunc did not run", trial)
		}
		// Both are upper bounds of the instant the context was cancelled.
		if !seen.IsZero() && seen.Before(toldAt) {
			toldAt = seen
		}
		if cause := context.Cause(hctx); !errors.Is(cause, relock.ErrLockLost) {
			t.Errorf("trial %d: holder's context cause %v, want relock.ErrLockLost", trial, cause)
		}
		margin := granted.Sub(toldAt)
		t.Logf("trial %2d: holder told %v after the partition, other got the lock %v after it: margin %v",
			trial, toldAt.Sub(cutAt).Round(time.Millisecond), granted.Sub(cutAt).Round(time.Millisecond), margin.Round(100*time.Microsecond))
		margins = append(margins, margin)
		toldAfter = append(toldAfter, toldAt.Sub(cutAt))

		must(t, heal())
		if err := other.Unlock(octx); err != nil {
			t.Errorf("trial %d: other Unlock: %v", trial, err)
		}
		if err := holder.Unlock(hctx); !errors.Is(err, relock.ErrNotHeld) {
			t.Errorf("trial %d: holder Unlock after the loss: %v, want relock.ErrNotHeld", trial, err)
		}
	}
	slices.Sort(margins)
	slices.Sort(toldAfter)
	t.Logf("%d trials, lease %v: margin (holder told -> other's TryLock call) min %v, median %v, max %v; holder told after the partition: min %v, median %v, max %v",
		trials, lease, margins[0].Round(100*time.Microsecond), margins[trials/2].Round(100*time.Microsecond), margins[trials-1].Round(100*time.Microsecond),
		toldAfter[0].Round(time.Millisecond), toldAfter[trials/2].Round(time.Millisecond), toldAfter[trials-1].Round(time.Millisecond))
}
