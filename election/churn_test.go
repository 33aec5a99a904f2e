package election_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/internal/testing/locktest"
)

// TestLate runs locktest's checks of what a call leaves when it gives up
// (its lock's late attempts, the churn, the reordering explorer) on an
// election, each Lock a Campaign (TryLock a TryCampaign) of an Election
// of its own and each Unlock a Resign: a candidate that gives up leaves
// neither the election's lock nor its queue behind, and the next one is
// elected at once.
func TestLate(t *testing.T) {
	locktest.RunLate(t, srv, locktest.Kind{
		New: func(rc *relock.Client, name string, _ time.Duration) locktest.Lock {
			return locktest.Basic(candidate{rc: rc, name: name})
		},
		Residue: func(name string) []string {
			lock := "relock_election:{" + name + "}"
			return append([]string{lock, "relock_election_leader:{" + name + "}"}, locktest.FairResidue(lock)...)
		},
		NoForce: true,
		// The term counter is never deleted, and the change log keeps
		// the last leaders.
		Left: func(key string) bool {
			for _, p := range []string{"relock_lock_gone:", "relock_lock_gone_due:", "relock_election_term:", "relock_election_log:"} {
				if strings.HasPrefix(key, p) {
					return true
				}
			}
			return false
		},
	})
}

// A candidate is an election as a relock.Locker: Lock campaigns with an
// Election of its own, which the leadership's context carries to Unlock.
type candidate struct {
	rc   *relock.Client
	name string
}

type electionKey struct{}

func (c candidate) Name() string { return c.name }

func (c candidate) Lock(ctx context.Context) (context.Context, error) {
	e := election.New(c.rc, c.name, nil)
	lctx, err := e.Campaign(ctx, "churn")
	if err != nil {
		return nil, err
	}
	return context.WithValue(lctx, electionKey{}, e), nil
}

func (c candidate) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	e := election.New(c.rc, c.name, nil)
	lctx, err := e.TryCampaign(ctx, "churn", wait)
	if err != nil {
		return nil, err
	}
	return context.WithValue(lctx, electionKey{}, e), nil
}

func (c candidate) Unlock(ctx context.Context) error {
	e, ok := ctx.Value(electionKey{}).(*election.Election)
	if !ok {
		return errors.New("not a candidate's context")
	}
	return e.Resign(ctx)
}
