package faulttest_test

import (
	"context"
	"errors"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/relock-go/relock"
)

// A contest is one trial of a told-first test: a holder, whose client
// goes through the proxy, and another client, connected directly, that
// wants what the holder has.
type contest struct {
	// held is the holder's context, which must be cancelled with
	// relock.ErrLockLost before the other client gets in.
	held context.Context
	// try is one attempt of the other client: nil when it got in (and
	// then release gives back what it got), an error matching
	// relock.ErrNotAcquired when it did not.
	try func() (release func() error, err error)
	// after runs once the partition has healed and the other client has
	// given back what it got: the holder's own checks (its release must
	// find nothing held).
	after func()
}

// toldFirst runs trials: each takes a contest from start, partitions the
// holder (cut) at a random phase of its renewal interval (a third of
// lease), has the other client try every 2ms, and asserts that the try
// that gets in was called when the holder's context was already done;
// then heals. The assertion does not depend on goroutine wake-ups: the
// context is read synchronously before each call. The margin logged,
// from the first poll (or the AfterFunc, if earlier) that saw the holder
// told to the call that got in, underestimates the real one.
func toldFirst(t *testing.T, trials int, lease time.Duration, cut, heal func() error, start func(trial int) contest) {
	t.Helper()
	const poll = 2 * time.Millisecond
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	var margins, toldAfter []time.Duration
	for trial := range trials {
		c := start(trial)
		told := make(chan time.Time, 1)
		context.AfterFunc(c.held, func() { told <- time.Now() })
		time.Sleep(time.Duration(r.Int63n(int64(lease / 3))))
		must(t, cut())
		cutAt := time.Now()

		var release func() error
		var got, seen time.Time // seen: the first poll that found the holder told
		for deadline := cutAt.Add(3 * lease); ; {
			toldBefore := c.held.Err() != nil
			call := time.Now()
			if toldBefore && seen.IsZero() {
				seen = call
			}
			var err error
			release, err = c.try()
			if err == nil {
				got = call
				if !toldBefore {
					t.Fatalf("trial %d: the other client got in %v after the partition by a call made while the holder's context was live",
						trial, time.Since(cutAt))
				}
				break
			}
			if !errors.Is(err, relock.ErrNotAcquired) {
				t.Fatalf("trial %d: the other client's try: %v", trial, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("trial %d: the other client did not get in within %v of the partition", trial, 3*lease)
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
		if cause := context.Cause(c.held); !errors.Is(cause, relock.ErrLockLost) {
			t.Errorf("trial %d: holder's context cause %v, want relock.ErrLockLost", trial, cause)
		}
		margins = append(margins, got.Sub(toldAt))
		toldAfter = append(toldAfter, toldAt.Sub(cutAt))
		t.Logf("trial %2d: holder told %v after the partition, the other client got in %v after it: margin %v",
			trial, toldAt.Sub(cutAt).Round(time.Millisecond), got.Sub(cutAt).Round(time.Millisecond), got.Sub(toldAt).Round(100*time.Microsecond))

		must(t, heal())
		if err := release(); err != nil {
			t.Errorf("trial %d: the other client's release: %v", trial, err)
		}
		c.after()
	}
	slices.Sort(margins)
	slices.Sort(toldAfter)
	t.Logf("%d trials, lease %v: margin (holder told -> the other's winning call) min %v, median %v, max %v; holder told after the partition: min %v, median %v, max %v",
		trials, lease, margins[0].Round(100*time.Microsecond), margins[trials/2].Round(100*time.Microsecond), margins[trials-1].Round(100*time.Microsecond),
		toldAfter[0].Round(time.Millisecond), toldAfter[trials/2].Round(time.Millisecond), toldAfter[trials-1].Round(time.Millisecond))
}
