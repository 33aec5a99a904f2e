package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/redlock"
)

// TestLateMasterAcquire: acquires whose replies masters lost run there
// late, after the RedLock gave up the attempt and undid it (failed), or
// after the lock taken on a quorum was unlocked (taken): neither leaves
// a record on those masters, and a fresh TryLock(0) takes the lock.
func TestLateMasterAcquire(t *testing.T) {
	redistest.Parallel(t)
	for _, taken := range []bool{false, true} {
		name := "failed"
		if taken {
			name = "taken"
		}
		t.Run(name, func(t *testing.T) {
			bg := context.Background()
			servers := startServers(t, 3)
			key := redistest.Key(t)
			hooks := make([]*redistest.Late, len(servers))
			rcs := make([]*relock.Client, len(servers))
			for i, s := range servers {
				o := s.LockOptions()
				o.MaxRetries, o.ContextTimeoutEnabled = -1, true
				rdb := redis.NewClient(o)
				t.Cleanup(func() { rdb.Close() })
				hooks[i] = redistest.NewLate(lua.Acquire())
				rdb.AddHook(hooks[i])
				rcs[i] = redistest.Relock(t, rdb, nil)
			}
			rl := redlock.New(rcs, key, nil)
			// Taken: one master loses its reply, the other two make the
			// quorum. Failed: two lose theirs.
			lose := servers[1:]
			if taken {
				lose = servers[2:]
			}
			for i := range lose {
				hooks[len(servers)-len(lose)+i].Arm(true)
			}
			lctx, err := rl.TryLock(bg, 0)
			switch {
			case taken && err != nil:
				t.Fatalf("TryLock with one reply lost: %v", err)
			case taken:
				if err := rl.Unlock(lctx); err != nil {
					t.Fatal(err)
				}
			case !errors.Is(err, relock.ErrNotAcquired):
				t.Fatalf("TryLock with two replies lost = %v, want ErrNotAcquired", err)
			}
			for i, s := range servers {
				if n, err := hooks[i].Play(bg, s.Client(t)); err != nil {
					t.Fatal(err)
				} else if n > 0 {
					t.Logf("master %d: %d acquires ran late", i, n)
				}
			}
			redistest.Eventually(t, 100*time.Millisecond, "no master holds a record", func() bool {
				return records(t, servers, key) == 0
			})
			fresh := redlock.New(clientsOn(t, servers, nil), key, nil)
			fctx, err := fresh.TryLock(bg, 0)
			if err != nil {
				t.Fatalf("a fresh TryLock(0): %v", err)
			}
			if err := fresh.Unlock(fctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
