package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// goneBounded: relock's record of given-up attempts on a name
// (relock_lock_gone) keeps each owner's entry for the lease a late
// attempt would set, and no longer. Owners give up one after another on
// one name for several leases, each with its attempt's reply lost, so
// that each gives up with a record: the record never holds more owners
// than gave up within the last two leases (the second for the entries
// past their time that writes have not swept yet), and once they stop
// both of its keys are gone within a lease. On the code before, it held every
// owner that ever gave up (each write pushed the TTL of them all out
// again), and a fair lock's outlived the give-ups by its wait timeout.
func goneBounded(t *testing.T, e *env) {
	const (
		lease = 400 * time.Millisecond
		churn = 5 * lease
		pace  = 4 * time.Millisecond
		// window is how far back a sample counts the give-ups: a lease,
		// and another for the past entries that writes have not swept
		// yet (each removes sweep of them, bury.lua), which a pause of
		// the loop (the race detector, a loaded machine) lets pile up
		// until the writes resume.
		window = 2 * lease
		sweep  = 8
	)
	bg := context.Background()
	key := redistest.Key(t)
	gone, due := layout.LockGone(key), layout.LockGoneDue(key)
	raw := e.redis(t)
	// Retries off: a lost reply is given up at once, not sent again.
	rdb := e.redisWith(t, func(o *redis.UniversalOptions) { o.MaxRetries = -1 })
	hook := redistest.NewLate(acquireScripts...)
	rdb.AddHook(hook)
	mu := e.k.New(redistest.Relock(t, rdb, &relock.Options{SyncReplicas: relock.SyncOff}), key, lease)

	// Every acquire is kept, never sent, and fails as a dropped
	// connection: its call gives up, recording it first.
	hook.Arm(true)
	var starts []time.Time
	most, end := 0, time.Now().Add(churn)
	for time.Now().Before(end) {
		starts = append(starts, time.Now())
		if _, err := mu.TryLock(relock.WithNewOwner(bg), 0); err == nil || errors.Is(err, relock.ErrClosed) {
			t.Fatalf("TryLock with its reply lost = %v, want an error", err)
		}
		n, err := raw.HLen(bg, gone).Result()
		if err != nil {
			t.Fatal(err)
		}
		since := time.Now().Add(-window)
		recent := 0
		for i := len(starts) - 1; i >= 0 && starts[i].After(since); i-- {
			recent++
		}
		if int(n) > recent+sweep {
			t.Fatalf("after %d give-ups the record holds %d owners, %d of whom gave up within %v", len(starts), n, recent, window)
		}
		most = max(most, int(n))
		time.Sleep(pace)
	}
	hook.Arm(false)
	if len(starts) < 3*most {
		t.Fatalf("%d give-ups, at most %d owners recorded: too few give-ups to tell", len(starts), most)
	}
	for _, k := range []string{gone, due} {
		if ttl, err := raw.PTTL(bg, k).Result(); err != nil || ttl <= 0 || ttl > lease {
			t.Fatalf("%s: PTTL %v (%v), want within the lease %v", k, ttl, err, lease)
		}
	}
	redistest.Eventually(t, lease+lease/2, "the record gone", func() bool {
		return raw.Exists(bg, gone, due).Val() == 0
	})
	t.Logf("%d give-ups in %v, at most %d owners recorded at once", len(starts), churn, most)
}
