package permits_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/permits"
)

// TestExplore runs locktest's reordering explorer on expirable permits
// of one permit, which exclude like a lock: an acquire whose commands
// are held past later ones and whose replies are dropped after they ran,
// with waits, deadlines and cancellations, against a holder's release.
// After every seed the permit is free again within
// locktest.ExploreBound, the count is exactly one, and no permit record,
// registration or watcher is left. Replay a seed with
// go test ./permits -run TestExplore -seed N.
func TestExplore(t *testing.T) {
	locktest.RunExplore(t, srv, locktest.Kind{
		New: func(rc *relock.Client, name string, _ time.Duration) locktest.Lock {
			return locktest.Basic(permitLock{permits.New(rc, name, nil)})
		},
		NoForce: true,
		Residue: func(name string) []string {
			return []string{"relock_semaphore_waiters:{" + name + "}", "relock_semaphore_watcher:{" + name + "}",
				"{" + name + "}:timeout"}
		},
		Prepare: func(ctx context.Context, rc *relock.Client, name string) error {
			if ok, err := permits.New(rc, name, nil).TrySetPermits(ctx, 1); !ok || err != nil {
				return fmt.Errorf("TrySetPermits = %v, %v", ok, err)
			}
			return nil
		},
		Check: func(ctx context.Context, raw redis.UniversalClient, name string) error {
			if n, err := raw.Get(ctx, name).Int64(); n != 1 || err != nil {
				return fmt.Errorf("count %d (%v) after the seed, want 1", n, err)
			}
			return nil
		},
	})
}

// A permitLock is expirable permits as a relock.Locker for the
// explorer: Lock acquires a permit, whose context, carrying it, stands
// for the hold.
type permitLock struct{ s *permits.Semaphore }

type permitKey struct{}

func (l permitLock) Name() string { return l.s.Name() }

func (l permitLock) Lock(ctx context.Context) (context.Context, error) {
	p, err := l.s.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return context.WithValue(p.Context(), permitKey{}, p), nil
}

func (l permitLock) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	p, err := l.s.TryAcquire(ctx, wait)
	if err != nil {
		return nil, err
	}
	return context.WithValue(p.Context(), permitKey{}, p), nil
}

func (l permitLock) Unlock(ctx context.Context) error {
	p, ok := ctx.Value(permitKey{}).(*permits.Permit)
	if !ok {
		return errors.New("not a permit's context")
	}
	return p.Release(ctx)
}
