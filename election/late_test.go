package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestLateLeaderRecord: a Campaign whose leader record's reply is lost
// fails, and leaves no leader record behind, whether the record ran
// before its give-up (ran) or runs after it (late); another candidate is
// elected at once.
func TestLateLeaderRecord(t *testing.T) {
	for _, ran := range []bool{true, false} {
		name := "late"
		if ran {
			name = "ran"
		}
		t.Run(name, func(t *testing.T) {
			bg := context.Background()
			key := redistest.Key(t)
			raw := srv.Client(t)
			o := srv.LockOptions()
			o.MaxRetries, o.ContextTimeoutEnabled = -1, true
			rdb := redis.NewClient(o)
			t.Cleanup(func() { rdb.Close() })
			hook := redistest.NewLate(lua.ElectionElect())
			hook.Ran(ran)
			rdb.AddHook(hook)
			gone := election.New(redistest.Relock(t, rdb, nil), key, nil)

			hook.Arm(true)
			_, err := gone.Campaign(bg, "gone")
			hook.Arm(false)
			if err == nil {
				t.Fatal("Campaign with its record's reply lost succeeded")
			}
			if n, err := hook.Play(bg, raw); err != nil || ran && n != 0 || !ran && n != 1 {
				t.Fatalf("%d records ran late (%v)", n, err)
			}
			// Leader would not tell: it ignores a record whose candidate
			// does not hold the lock.
			redistest.Eventually(t, 100*time.Millisecond, "the gone candidate's record removed", func() bool {
				return raw.Exists(bg, "relock_election_leader:{"+key+"}").Val() == 0
			})
			next := election.New(newClient(t, nil), key, nil)
			if _, err := next.Leader(bg); !errors.Is(err, election.ErrNoLeader) {
				t.Fatalf("Leader after the gone candidate = %v, want ErrNoLeader", err)
			}
			lctx, err := next.TryCampaign(bg, "next", 0)
			if err != nil {
				t.Fatalf("TryCampaign(0) after the gone candidate: %v", err)
			}
			if l, err := next.Leader(bg); err != nil || l.Value != "next" {
				t.Fatalf("Leader = %+v, %v; want next", l, err)
			}
			if err := next.Resign(lctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
