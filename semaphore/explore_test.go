package semaphore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/semaphore"
)

// TestExplore runs locktest's reordering explorer on a semaphore of one
// permit, which excludes like a lock: an acquire whose commands are held
// past later ones and whose replies are dropped after they ran, with
// waits, deadlines and cancellations, against a holder's release. After
// every seed the permit is free again within locktest.ExploreBound, the
// count is exactly one (no permit kept, none given back twice), and no
// registration or grant is left. Replay a seed with
// go test ./semaphore -run TestExplore -seed N.
func TestExplore(t *testing.T) {
	locktest.RunExplore(t, srv, locktest.Kind{
		New: func(rc *relock.Client, name string, _ time.Duration) locktest.Lock {
			return locktest.Basic(permit{semaphore.New(rc, name, nil)})
		},
		NoForce: true,
		Residue: func(name string) []string {
			return []string{"relock_semaphore_waiters:{" + name + "}", "relock_semaphore_grants:{" + name + "}",
				"relock_semaphore_watcher:{" + name + "}"}
		},
		Prepare: func(ctx context.Context, rc *relock.Client, name string) error {
			if ok, err := semaphore.New(rc, name, nil).TrySetPermits(ctx, 1); !ok || err != nil {
				return fmt.Errorf("TrySetPermits = %v, %v", ok, err)
			}
			return nil
		},
		Check: func(ctx context.Context, raw redis.UniversalClient, name string) error {
			if n, err := raw.Get(ctx, name).Int64(); n != 1 || err != nil {
				return fmt.Errorf("count %d (%v) after the seed, want 1; attempts %v", n, err, raw.ZRangeWithScores(ctx, "relock_semaphore_attempts:{"+name+"}", 0, -1).Val())
			}
			return nil
		},
	})
}
