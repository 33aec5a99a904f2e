// Package locktest is the behaviour suite every relock lock type must
// pass: reentrancy through the context, unlock rules, waits and wake-ups,
// the watchdog and fixed leases, mutual exclusion, bad input and Close.
// A lock package runs it from its tests with a Kind describing how to
// build its lock; checks particular to one type (its Redis layout) stay in
// that package.
package locktest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
)

// Lock is what the suite needs of a lock type.
type Lock interface {
	relock.Locker
	ForceUnlock(ctx context.Context) (bool, error)
	IsLocked(ctx context.Context) (bool, error)
	IsHeld(ctx context.Context) (bool, error)
	HoldCount(ctx context.Context) (int, error)
	TTL(ctx context.Context) (time.Duration, error)
}

// A Kind describes a lock type to the suite.
type Kind struct {
	// New returns the lock named name on rc, with a fixed lease, or
	// renewed by the watchdog when lease is 0. rc may be nil and lease
	// negative: the suite checks that such locks report errors.
	New func(rc *relock.Client, name string, lease time.Duration) Lock

	// Residue lists the keys besides the lock's hash that a lock named
	// name may create (a fair lock's queue); the suite checks that waits
	// that end leave them empty.
	Residue func(name string) []string

	// Channel is the release channel of lock name, or the prefix of its
	// waiters' channels; nil means Redisson's RLock channel,
	// redisson_lock__channel:{name}.
	Channel func(name string) string
}

// Run runs the suite against locks of kind k on srv, a server the calling
// package started.
func Run(t *testing.T, srv *redistest.Server, k Kind) {
	e := &env{srv: srv, k: k}
	for _, tc := range []struct {
		name string
		test func(*testing.T, *env)
	}{
		{"ReentrancyFollowsContext", reentrancyFollowsContext},
		{"UnlockByNonOwner", unlockByNonOwner},
		{"UnlockCancelledContext", unlockCancelledContext},
		{"ContextCancelledByUnlock", contextCancelledByUnlock},
		{"TryLock", tryLock},
		{"LockCancelledMidWait", lockCancelledMidWait},
		{"WakeUpNotPolling", wakeUpNotPolling},
		{"OneSubscriptionConnection", oneSubscriptionConnection},
		{"WatchdogKeepsLock", watchdogKeepsLock},
		{"WatchdogLossDeleted", watchdogLossDeleted},
		{"WatchdogLossUnreachable", watchdogLossUnreachable},
		{"WatchdogBatches", watchdogBatches},
		{"FixedLease", fixedLease},
		{"ForceUnlock", forceUnlock},
		{"MutualExclusion", mutualExclusion},
		{"BadInput", badInput},
		{"Close", closeClient},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, e) })
	}
}

// env is the suite's shared state.
type env struct {
	srv *redistest.Server
	k   Kind
}

// client returns a relock client with its own go-redis client, as if it
// were a separate process; both close when t ends.
func (e *env) client(t testing.TB, opts *relock.Options) *relock.Client {
	t.Helper()
	return clientOn(t, e.srv, opts)
}

func clientOn(t testing.TB, s *redistest.Server, opts *relock.Options) *relock.Client {
	t.Helper()
	rc, err := relock.New(s.Client(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}

func lockT(t testing.TB, mu Lock, ctx context.Context) context.Context {
	t.Helper()
	lctx, err := mu.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock(%s): %v", mu.Name(), err)
	}
	return lctx
}

func unlockT(t testing.TB, mu Lock, ctx context.Context) {
	t.Helper()
	if err := mu.Unlock(ctx); err != nil {
		t.Fatalf("Unlock(%s): %v", mu.Name(), err)
	}
}

func holdCount(t testing.TB, mu Lock, ctx context.Context) int {
	t.Helper()
	n, err := mu.HoldCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// eventually polls cond every 10ms until it holds or limit passes.
func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// subscribers counts the subscriptions on the release channels of lock
// name: Kind.Channel and the per-waiter channels a fair lock derives from
// it.
func (e *env) subscribers(t testing.TB, rdb *redis.Client, name string) int64 {
	t.Helper()
	ctx := context.Background()
	prefix := "redisson_lock__channel:{" + name + "}"
	if e.k.Channel != nil {
		prefix = e.k.Channel(name)
	}
	chans, err := rdb.PubSubChannels(ctx, globEscape(prefix)+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(chans) == 0 {
		return 0
	}
	counts, err := rdb.PubSubNumSub(ctx, chans...).Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(s)
}

// assertOnlyHolder checks that hctx's owner is the lock's only holder,
// with one hold, and that nothing else is left in Redis for the lock.
func (e *env) assertOnlyHolder(t testing.TB, mu Lock, hctx context.Context) {
	t.Helper()
	raw := e.srv.Client(t)
	fields := raw.HGetAll(context.Background(), mu.Name()).Val()
	delete(fields, "mode") // a read/write lock's mode field
	if n := holdCount(t, mu, hctx); n != 1 || len(fields) != 1 {
		t.Fatalf("lock %s: fields %v, holder count %d: want the holder's one hold only", mu.Name(), fields, n)
	}
	e.assertNoResidue(t, mu.Name())
}

// assertNoResidue checks that the lock's extra keys (Kind.Residue) are
// gone.
func (e *env) assertNoResidue(t testing.TB, name string) {
	t.Helper()
	if e.k.Residue == nil {
		return
	}
	raw := e.srv.Client(t)
	for _, key := range e.k.Residue(name) {
		if raw.Exists(context.Background(), key).Val() != 0 {
			t.Fatalf("%s left behind", key)
		}
	}
}
