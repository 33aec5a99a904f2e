package faulttest_test

import (
	"context"
	"errors"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/internal/redistest"
)

// TestPartitionedLeaderToldFirst: a leader cut off from Redis (a black
// hole at a random phase of its renewal interval) has its leadership
// context cancelled with relock.ErrLockLost before another candidate is
// elected, in each of 20 trials. The other candidate, connected
// directly, tries every 2ms with TryCampaign(0) once the partition
// starts, and the check is made before each call: the call that wins
// must have been made after the leader was told (see
// TestPartitionedHolderToldFirst for why that is the sound check). The
// trials share one election, whose terms strictly increase throughout.
func TestPartitionedLeaderToldFirst(t *testing.T) {
	requireReal(t)
	const (
		// A tenth of the lease is the margin between the leader's being
		// told and the server's expiry: 200 ms absorbs a loaded CI
		// machine's scheduling delays.
		lease  = 2 * time.Second
		poll   = 2 * time.Millisecond
		trials = 20
	)
	bg := context.Background()
	x := newProxy(t)
	leaderRC := newClient(t, x.Addr, &relock.Options{WatchdogTimeout: lease, Logger: quiet})
	otherRC := newClient(t, srv.Addr, nil)
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)

	// One election throughout: its terms must strictly increase over the
	// whole history of partitions and losses.
	name := redistest.Key(t)
	leader := election.New(leaderRC, name, nil)
	other := election.New(otherRC, name, nil)
	var margins []time.Duration
	var lastTerm int64
	for trial := range trials {
		lctx, err := leader.Campaign(bg, "leader")
		if err != nil {
			t.Fatalf("trial %d: Campaign: %v", trial, err)
		}
		time.Sleep(time.Duration(r.Int63n(int64(lease / 3))))
		must(t, x.Partition())
		cutAt := time.Now()

		var octx context.Context
		var elected, seen time.Time // seen: first try that found the leader told
		for deadline := cutAt.Add(3 * lease); ; {
			toldBefore := lctx.Err() != nil
			call := time.Now()
			if toldBefore && seen.IsZero() {
				seen = call
			}
			octx, err = other.TryCampaign(bg, "other", 0)
			if err == nil {
				elected = call
				if !toldBefore {
					t.Fatalf("trial %d: another candidate was elected by a call made while the leader's context was live", trial)
				}
				break
			}
			if !errors.Is(err, relock.ErrNotAcquired) {
				t.Fatalf("trial %d: TryCampaign: %v", trial, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("trial %d: nobody elected within %v of the partition", trial, 3*lease)
			}
			time.Sleep(poll)
		}
		if cause := context.Cause(lctx); !errors.Is(cause, relock.ErrLockLost) {
			t.Errorf("trial %d: leader's cause %v, want relock.ErrLockLost", trial, cause)
		}
		old, _ := election.TermOf(lctx)
		term, _ := election.TermOf(octx)
		if old <= lastTerm || term <= old {
			t.Errorf("trial %d: terms %d then %d after %d: they must strictly increase", trial, old, term, lastTerm)
		}
		lastTerm = term
		margins = append(margins, elected.Sub(seen))
		t.Logf("trial %2d: leader told by %v after the partition, other elected %v after it (term %d)",
			trial, seen.Sub(cutAt).Round(time.Millisecond), elected.Sub(cutAt).Round(time.Millisecond), term)
		must(t, x.Heal())
		if err := other.Resign(bg); err != nil {
			t.Errorf("trial %d: Resign: %v", trial, err)
		}
	}
	slices.Sort(margins)
	t.Logf("margins (told to elected, from the polls): min %v, median %v", margins[0], margins[len(margins)/2])
}
