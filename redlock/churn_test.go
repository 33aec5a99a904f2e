package redlock_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/redlock"
)

// TestChurn runs locktest's churn on a RedLock over 3 masters of the
// test's own: 4 processes of 2 goroutines, each process with one relock
// client per master, acquiring with waits, deadlines and cancellations
// of 0-3 ms (which cut acquires off mid-flight, so that their undo races
// them), holding 0-1.5 ms and unlocking. Halfway one process's client of
// the first master closes: its RedLock's calls end with ErrClosed, Close
// releases its record there, and its goroutines' Unlocks release the
// others. It proves that no two owners hold the RedLock while the first
// one's context lives, that 2 s after the churn nothing of the name is
// left on any master but relock's records of given-up attempts, and that
// a fresh RedLock then takes the lock at once.
//
// locktest.Churn makes one relock client per process, from Redis: here
// that is the process's client of the first master, and New adds the
// process's clients of the other two, which close when the test ends.
// Churn reads what is left on the first master (Raw); the test reads the
// other two after Run, for up to 2 s more.
func TestChurn(t *testing.T) {
	redistest.SkipShort(t, "the churn runs for a second and more")
	servers := startServers(t, 3)
	name := redistest.Key(t)
	opts := &relock.Options{WatchdogTimeout: time.Second}
	c := &locktest.Churn{
		Name:  name,
		Redis: func(t testing.TB) redis.UniversalClient { return servers[0].LockClient(t) },
		Raw:   servers[0].Client(t),
		New: func(rc *relock.Client) relock.Locker {
			rcs := append([]*relock.Client{rc}, clientsOn(t, servers[1:], opts)...)
			return redlock.New(rcs, name, nil)
		},
		Options: opts,
		Seed:    uint64(time.Now().UnixNano()),
	}
	t.Logf("seed %d", c.Seed)
	c.Run(t)
	others := make([]*locktest.Churn, 0, len(servers)-1)
	for _, s := range servers[1:] {
		others = append(others, &locktest.Churn{Name: name, Raw: s.Client(t)})
	}
	deadline := time.Now().Add(2 * time.Second)
	for i, o := range others {
		for {
			left := o.Leftovers(t)
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("master %d: left after the churn: %q", i+1, left)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
