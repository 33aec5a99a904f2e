package faulttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/internal/testing/redistest"
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
	// A tenth of the lease is the margin between the leader's being told
	// and the server's expiry: 200 ms absorbs a loaded CI machine's
	// scheduling delays.
	const lease = 2 * time.Second
	bg := context.Background()
	x := newProxy(t)
	leaderRC := newClient(t, x.Addr, &relock.Options{WatchdogTimeout: lease, Logger: quiet})
	otherRC := newClient(t, srv.Addr, nil)
	// One election throughout: its terms must strictly increase over the
	// whole history of partitions and losses.
	name := redistest.Key(t)
	leader := election.New(leaderRC, name, nil)
	other := election.New(otherRC, name, nil)
	var lastTerm int64
	toldFirst(t, 20, lease, x.Partition, x.Heal, func(trial int) contest {
		lctx, err := leader.Campaign(bg, "leader")
		if err != nil {
			t.Fatalf("trial %d: Campaign: %v", trial, err)
		}
		old, _ := election.TermOf(lctx)
		if old <= lastTerm {
			t.Fatalf("trial %d: term %d after %d", trial, old, lastTerm)
		}
		return contest{
			held: lctx,
			try: func() (func() error, error) {
				octx, err := other.TryCampaign(bg, "other", 0)
				if err != nil {
					return nil, err
				}
				term, _ := election.TermOf(octx)
				if term <= old {
					t.Errorf("trial %d: term %d after the partitioned leader's %d", trial, term, old)
				}
				lastTerm = term
				return func() error { return other.Resign(bg) }, nil
			},
			after: func() {},
		}
	})
}
