package faulttest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
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
	const lease = 2 * time.Second
	bg := context.Background()
	holderRC := newClient(t, x.Addr, &relock.Options{WatchdogTimeout: lease, Logger: quiet})
	otherRC := newClient(t, srv.Addr, nil)
	toldFirst(t, trials, lease, cut, heal, func(trial int) contest {
		name := redistest.Key(t)
		holder := reentrant.New(holderRC, name, nil)
		other := reentrant.New(otherRC, name, nil)
		hctx, err := holder.Lock(bg)
		if err != nil {
			t.Fatalf("trial %d: holder Lock: %v", trial, err)
		}
		return contest{
			held: hctx,
			try: func() (func() error, error) {
				octx, err := other.TryLock(bg, 0)
				return func() error { return other.Unlock(octx) }, err
			},
			after: func() {
				if err := holder.Unlock(hctx); !errors.Is(err, relock.ErrNotHeld) {
					t.Errorf("trial %d: holder Unlock after the loss: %v, want relock.ErrNotHeld", trial, err)
				}
			},
		}
	})
}
