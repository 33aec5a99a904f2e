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
// past their time that writes have not swept yet), its keys expire with
// the entry that lasts longest (one of a lock with a longer lease among
// them keeps them, and is kept, for that lease), and once the give-ups
// stop the keys are gone when the last entry's time has come. On the
// code before, it held every owner that ever gave up (each write pushed
// the TTL of them all out again), and a fair lock's outlived the
// give-ups by its wait timeout.
func goneBounded(t *testing.T, e *env) {
	const (
		lease = 400 * time.Millisecond
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
	rc := redistest.Relock(t, rdb, &relock.Options{SyncReplicas: relock.SyncOff})
	mu, long := e.k.New(rc, key, lease), e.k.New(rc, key, 4*lease)

	// Every acquire is kept, never sent, and fails as a dropped
	// connection: its call gives up, recording it first.
	hook.Arm(true)
	defer hook.Arm(false)
	var starts []time.Time
	most := 0
	giveUp := func(mu Lock) {
		t.Helper()
		starts = append(starts, time.Now())
		if _, err := mu.TryLock(relock.WithNewOwner(bg), 0); err == nil || errors.Is(err, relock.ErrClosed) {
			t.Fatalf("TryLock with its reply lost = %v, want an error", err)
		}
	}
	// churn gives up on mu for d, and checks the record's size after each.
	churn := func(d time.Duration) {
		t.Helper()
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(pace) {
			giveUp(mu)
			n, err := raw.HLen(bg, gone).Result()
			if err != nil {
				t.Fatal(err)
			}
			since, recent := time.Now().Add(-window), 0
			for i := len(starts) - 1; i >= 0 && starts[i].After(since); i-- {
				recent++
			}
			if int(n) > recent+sweep {
				t.Fatalf("after %d give-ups the record holds %d owners, %d of whom gave up within %v", len(starts), n, recent, window)
			}
			most = max(most, int(n))
		}
	}
	// pttl checks that both keys expire within (above, upTo].
	pttl := func(when string, above, upTo time.Duration) {
		t.Helper()
		for _, k := range []string{gone, due} {
			if d, err := raw.PTTL(bg, k).Result(); err != nil || d <= above || d > upTo {
				t.Fatalf("%s: %s: PTTL %v (%v), want above %v and at most %v", when, k, d, err, above, upTo)
			}
		}
	}

	churn(5 * lease)
	// Uniform give-ups put two fifths of them in a window; a loaded
	// machine's pauses, which let the unswept entries pile up, more.
	// Half of them is still a record well below every owner.
	if len(starts) < 2*most {
		t.Fatalf("%d give-ups, at most %d owners recorded: too few give-ups to tell", len(starts), most)
	}
	pttl("after the give-ups", 0, lease)
	// An entry with a longer bound keeps the keys as long as it lasts:
	// the later writes of shorter entries neither cut it short nor
	// sweep it.
	giveUp(long)
	pttl("after a give-up with a longer lease", 2*lease, 4*lease)
	churn(lease + lease/2)
	pttl("after more give-ups with the short lease", lease, 4*lease)
	hook.Arm(false)
	redistest.Eventually(t, 4*lease, "the record gone", func() bool {
		return raw.Exists(bg, gone, due).Val() == 0
	})
	t.Logf("%d give-ups, at most %d owners recorded at once", len(starts), most)
}
