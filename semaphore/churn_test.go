package semaphore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// TestChurn runs locktest's churn on a semaphore of one permit, so that
// it excludes like a lock: acquires with waits, deadlines and
// cancellations of 0-3 ms, releases, from 4 clients of 2 goroutines.
// Permits have no owner, so no client closes while it may hold one.
// Then the permit is back, and nothing but the count is left: no
// registry entry, grant or watcher.
func TestChurn(t *testing.T) {
	srv.RequireReal(t)
	redistest.SkipShort(t, "the churn runs for a second and more")
	bg := context.Background()
	name := redistest.Key(t)
	raw := srv.Client(t)
	if ok, err := semaphore.New(newClient(t, nil), name, nil).TrySetPermits(bg, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	c := &locktest.Churn{
		Name:        name,
		Redis:       func(t testing.TB) redis.UniversalClient { return srv.LockClient(t) },
		Raw:         raw,
		New:         func(rc *relock.Client) relock.Locker { return permit{semaphore.New(rc, name, nil)} },
		Left:        func(key string) bool { return key == name || strings.HasPrefix(key, "relock_lock_gone") },
		KeepClients: true,
		Seed:        uint64(time.Now().UnixNano()),
	}
	t.Logf("seed %d", c.Seed)
	c.Run(t)
	if n, err := semaphore.New(newClient(t, nil), name, nil).AvailablePermits(bg); n != 1 || err != nil {
		t.Fatalf("AvailablePermits after the churn = %d, %v; want 1", n, err)
	}
}

// A permit is a semaphore as a relock.Locker for the churn: Lock takes
// one permit, and its context, cancelled by Unlock, stands for the hold.
type permit struct{ s *semaphore.Semaphore }

type heldKey struct{}

func (p permit) Name() string { return p.s.Name() }

func (p permit) Lock(ctx context.Context) (context.Context, error) {
	if err := p.s.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	return held(ctx)
}

func (p permit) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if err := p.s.TryAcquire(ctx, 1, wait); err != nil {
		return nil, err
	}
	return held(ctx)
}

func held(ctx context.Context) (context.Context, error) {
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return context.WithValue(hctx, heldKey{}, cancel), nil
}

func (p permit) Unlock(ctx context.Context) error {
	cancel, ok := ctx.Value(heldKey{}).(context.CancelFunc)
	if !ok {
		return errors.New("not a permit's context")
	}
	defer cancel()
	return p.s.Release(ctx, 1)
}
