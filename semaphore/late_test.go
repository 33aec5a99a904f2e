package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// attemptsOf is relock's record of the acquires of semaphore name whose
// replies may be lost.
func attemptsOf(name string) string { return "relock_semaphore_attempts:{" + name + "}" }

// lateClient returns a relock client whose acquire scripts go through
// hook: retries off and deadlines on, as relock's own client does.
func lateClient(t *testing.T, hook *redistest.Late) *relock.Client {
	t.Helper()
	o := srv.LockOptions()
	o.MaxRetries, o.ContextTimeoutEnabled = -1, true
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	rdb.AddHook(hook)
	return redistest.Relock(t, rdb, &relock.Options{SyncReplicas: relock.SyncOff})
}

// TestLateAcquire: an acquire whose reply was lost (its connection
// dropped) either ran, and its permits go back at once, or runs late,
// after its caller gave up and undid it, and then takes nothing and
// registers nothing. Before, the first left the permit taken for good (a
// semaphore's permits have no owner and no lease), and so did the second
// when it ran after the undo.
func TestLateAcquire(t *testing.T) {
	srv.RequireReal(t)
	for _, tc := range []struct {
		name string
		ran  bool          // the acquire ran, only its reply was lost
		wait time.Duration // the caller's wait: 0 is a single try
	}{
		{"ran", true, 0},
		{"late", false, 0},
		{"late while waiting", false, 50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bg := context.Background()
			raw := srv.Client(t)
			name := redistest.Key(t)
			hook := redistest.NewLate(lua.SemaphoreAcquire())
			s := semaphore.New(lateClient(t, hook), name, nil)
			if ok, err := s.TrySetPermits(bg, 1); !ok || err != nil {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			hook.Ran(tc.ran)
			hook.Arm(true)
			err := s.TryAcquire(bg, 1, tc.wait)
			hook.Arm(false)
			// A single try whose reply was lost returns Redis's error; a
			// wait, ErrNotAcquired once its time ran out.
			if err == nil || (tc.wait > 0 && !errors.Is(err, relock.ErrNotAcquired)) {
				t.Fatalf("TryAcquire with its reply lost = %v", err)
			}
			if !tc.ran {
				if n, err := hook.Play(bg, raw); n == 0 || err != nil {
					t.Fatalf("playing the kept acquires: %d, %v", n, err)
				}
			}
			if n, err := s.AvailablePermits(bg); n != 1 || err != nil {
				t.Fatalf("AvailablePermits = %d, %v; want 1: the lost acquire kept its permit", n, err)
			}
			for _, key := range []string{"relock_semaphore_waiters:{" + name + "}", "relock_semaphore_grants:{" + name + "}"} {
				if n := raw.Exists(bg, key).Val(); n != 0 {
					t.Errorf("%s left behind", key)
				}
			}
			if got := raw.ZRange(bg, attemptsOf(name), 0, -1).Val(); !tc.ran && len(got) == 0 {
				t.Errorf("no record of the given-up attempt: %v", got)
			} else if tc.ran && len(got) != 0 {
				t.Errorf("records left after the take was given back: %v", got)
			}
			if err := semaphore.New(newClient(t, nil), name, nil).TryAcquire(bg, 1, 0); err != nil {
				t.Fatalf("a fresh TryAcquire(0): %v", err)
			}
		})
	}
}
