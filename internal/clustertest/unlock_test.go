package clustertest_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

var errInjected = errors.New("injected: connection lost")

// failScript fails the single calls of one script, found by its SHA,
// without sending them, while on is set.
type failScript struct {
	sha string
	on  atomic.Bool
}

func (f *failScript) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f *failScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if args := cmd.Args(); f.on.Load() && cmd.Name() == "evalsha" && len(args) > 1 && args[1] == f.sha {
			cmd.SetErr(errInjected)
			return errInjected
		}
		return next(ctx, cmd)
	}
}
func (f *failScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestFailedUnlockStopsRenewal: an Unlock of the last hold that fails
// (here a connection lost before the unlock script was sent; after a
// failover, a stale topology) must not leave the watchdog renewing the
// lock: a caller that gives up on it would hold the lock until its
// process exits. Redisson stops renewal when an unlock completes, failed
// or not, and lets the lease run out.
func TestFailedUnlockStopsRenewal(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	// Retries off and deadlines on: relock runs its scripts through this
	// client and its hook rather than a copy of its own.
	opts := c.Options()
	opts.MaxRetries, opts.ContextTimeoutEnabled = -1, true
	rdb := redis.NewClusterClient(opts)
	t.Cleanup(func() { rdb.Close() })
	fail := &failScript{sha: lua.Unlock().Hash()}
	rdb.AddHook(fail)
	const timeout = 1500 * time.Millisecond
	rc := newClient(t, rdb, &relock.Options{WatchdogTimeout: timeout})
	mu := reentrant.New(rc, redistest.Key(t), nil)
	lctx, err := mu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fail.on.Store(true)
	if err := mu.Unlock(lctx); !errors.Is(err, errInjected) {
		t.Fatalf("Unlock = %v, want the injected error", err)
	}
	raw := c.Client(t)
	if !within(3*timeout, func() bool { return raw.Exists(ctx, mu.Name()).Val() == 0 }) {
		t.Errorf("lock still in Redis %v after the failed Unlock: the watchdog still renews it", 3*timeout)
	}
	raw.Del(ctx, mu.Name())
}
