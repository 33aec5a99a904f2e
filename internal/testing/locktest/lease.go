package locktest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// watchdogKeepsLock: with a 2s watchdog a held lock outlives 5s, two
// and a half leases (under -short, with an 800ms watchdog, 2s). The
// watchdog renews every third of the lease and gives the lock up when no
// renewal succeeds within the lease: a shorter lease is lost, rightly,
// when a loaded machine stalls the renewals for two thirds of it.
func watchdogKeepsLock(t *testing.T, e *env) {
	lease := redistest.Short(2*time.Second, 800*time.Millisecond)
	held := redistest.Short(5*time.Second, 2*time.Second)
	mu := e.k.New(e.client(t, &relock.Options{WatchdogTimeout: lease}), redistest.Key(t), 0)
	ctx := redistest.Lock(t, mu, context.Background())
	time.Sleep(held)
	if ctx.Err() != nil {
		t.Fatalf("lock context ended: %v", context.Cause(ctx))
	}
	if ttl, err := mu.TTL(context.Background()); err != nil || ttl <= 0 || ttl > lease {
		t.Fatalf("TTL after %v = %v (%v), want within the %v lease", held, ttl, err, lease)
	}
	redistest.Unlock(t, mu, ctx)
}

// watchdogLossDeleted: deleting the key cancels the holder's contexts
// (the outer and, where the kind re-enters, the inner one) with cause
// ErrLockLost within about one renewal interval.
func watchdogLossDeleted(t *testing.T, e *env) {
	mu := e.k.New(e.client(t, &relock.Options{WatchdogTimeout: time.Second}), redistest.Key(t), 0)
	ctx := redistest.Lock(t, mu, context.Background())
	inner := ctx
	if e.k.Reentry == nil {
		inner = redistest.Lock(t, mu, ctx)
	}
	deleted := time.Now()
	e.redis(t).Del(context.Background(), mu.Name())
	select {
	case <-inner.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("lock context not cancelled after the key was deleted")
	}
	took := time.Since(deleted)
	t.Logf("loss signalled %v after the delete (renewal interval 333ms)", took)
	// One interval is 333ms; allow scheduling slack on a loaded machine.
	if took > 333*time.Millisecond+500*time.Millisecond {
		t.Fatalf("loss signalled after %v, want within about one renewal interval", took)
	}
	for _, c := range []context.Context{ctx, inner} {
		if !errors.Is(context.Cause(c), relock.ErrLockLost) {
			t.Fatalf("cause %v, want ErrLockLost", context.Cause(c))
		}
	}
	if err := mu.Unlock(inner); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Unlock of a lost lock = %v, want ErrNotHeld", err)
	}
}

// watchdogLossUnreachable: when Redis stops answering, the holder is told
// no later than the lease's end on the server. The lease is 1s (600ms
// under -short).
func watchdogLossUnreachable(t *testing.T, e *env) {
	e = e.isolated(t)
	timeout := redistest.Short(time.Second, 600*time.Millisecond)
	mu := e.k.New(e.client(t, &relock.Options{WatchdogTimeout: timeout}), redistest.Key(t), 0)
	ctx := redistest.Lock(t, mu, context.Background())
	time.Sleep(timeout / 2) // let a renewal succeed
	// On a cluster this pauses the lock's master only, and not for long
	// enough (NodeTimeout) to have it failed over.
	resume := e.pause(t, mu.Name())
	paused := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(3 * timeout):
		t.Fatal("lock context not cancelled while Redis was unreachable")
	}
	// The last renewal that succeeded was sent before the pause, so the
	// server keeps the lock until at most paused + timeout.
	took := time.Since(paused)
	resume()
	t.Logf("loss signalled %v after Redis stopped answering (lease %v)", took, timeout)
	if took > timeout {
		t.Fatalf("loss signalled %v after the pause, after the lease could have ended", took)
	}
	if !errors.Is(context.Cause(ctx), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(ctx))
	}
}

// pipelineCounter counts script calls sent alone (cmds) and in pipelines
// (pipes, piped).
type pipelineCounter struct{ pipes, cmds, piped atomic.Int64 }

func (p *pipelineCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (p *pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if redistest.IsScript(cmd) {
			p.cmds.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (p *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		n := 0
		for _, c := range cmds {
			if redistest.IsScript(c) {
				n++
			}
		}
		if n > 0 {
			p.pipes.Add(1)
			p.piped.Add(int64(n))
		}
		return next(ctx, cmds)
	}
}

// watchdogBatches: 1000 held locks cost a pipeline per round, not 1000
// round trips. Under -short the rounds come every 200ms, not 500ms.
func watchdogBatches(t *testing.T, e *env) {
	if e.srv != nil {
		// miniredis runs Lua far too slowly for 1000 renewals a round.
		e.srv.RequireReal(t)
	}
	// Retries off and deadlines on: relock renews through this client
	// (and its hook) rather than a copy of its own.
	rdb := e.redisWith(t, func(o *redis.UniversalOptions) { o.MaxRetries, o.ContextTimeoutEnabled = -1, true })
	count := &pipelineCounter{}
	rdb.AddHook(count)
	timeout := redistest.Short(1500*time.Millisecond, 600*time.Millisecond) // a round every timeout/3
	rc, err := relock.New(rdb, &relock.Options{WatchdogTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	base := redistest.Key(t)
	mus := make([]Lock, 1000)
	ctxs := make([]context.Context, len(mus))
	for i := range mus {
		mus[i] = e.k.New(rc, fmt.Sprintf("%s:%d", base, i), 0)
		ctxs[i] = redistest.Lock(t, mus[i], context.Background())
	}
	cmds0, pipes0, piped0 := count.cmds.Load(), count.pipes.Load(), count.piped.Load()
	time.Sleep(2 * timeout)
	cmds, pipes, piped := count.cmds.Load()-cmds0, count.pipes.Load()-pipes0, count.piped.Load()-piped0
	rounds := piped / int64(len(mus))
	t.Logf("%v: %d pipelines carrying %d renewals (%d rounds), %d single script calls", 2*timeout, pipes, piped, rounds, cmds)
	if rounds < 2 || pipes > rounds+1 || cmds != 0 {
		t.Fatalf("renewal of %d locks: %d pipelines, %d renewals, %d single calls; want one pipeline a round", len(mus), pipes, piped, cmds)
	}
	raw := e.redis(t)
	for i, mu := range mus {
		if ctxs[i].Err() != nil {
			t.Fatalf("lock %d lost: %v", i, context.Cause(ctxs[i]))
		}
		if raw.Exists(context.Background(), mu.Name()).Val() != 1 {
			t.Fatalf("lock %d expired despite the watchdog", i)
		}
		redistest.Unlock(t, mu, ctxs[i])
	}
}

// fixedLease: with a 500ms lease and no Unlock the lock frees itself, and
// the returned context's deadline is not after the lease's end.
func fixedLease(t *testing.T, e *env) {
	const lease = 500 * time.Millisecond
	mu := e.k.New(e.client(t, nil), redistest.Key(t), lease)
	start := time.Now()
	ctx := redistest.Lock(t, mu, context.Background())
	// The server ran the acquire before Lock returned, so its lease ends
	// no later than returned + lease, and the deadline must not be later.
	returned := time.Now()
	dl, ok := ctx.Deadline()
	if !ok || dl.After(returned.Add(lease)) || dl.Before(start.Add(lease)) {
		t.Fatalf("deadline %v (set %v), want between %v and %v", dl, ok, start.Add(lease), returned.Add(lease))
	}
	if ttl, err := mu.TTL(context.Background()); err != nil || ttl <= 0 || ttl > lease {
		t.Fatalf("TTL = %v (%v), want within the %v lease", ttl, err, lease)
	}
	var freed time.Duration
	redistest.Eventually(t, 3*time.Second, "lock freed by its lease", func() bool {
		locked, err := mu.IsLocked(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		freed = time.Since(start)
		return !locked
	})
	t.Logf("lock freed %v after Lock", freed)
	if freed < lease-50*time.Millisecond {
		t.Fatalf("lock freed after %v, before its %v lease", freed, lease)
	}
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(ctx))
	}
	other := e.k.New(e.client(t, nil), mu.Name(), 0)
	octx, err := other.TryLock(context.Background(), 0)
	if err != nil {
		t.Fatalf("lock not free after its lease: %v", err)
	}
	if err := mu.Unlock(ctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Unlock after the lease ended = %v, want ErrNotHeld", err)
	}
	redistest.Unlock(t, other, octx)
}

// handoffLeases: a waiter that takes the lock from a holder with another
// lease holds it with its own: after a watchdog holder, a waiter with a
// 1 s lease holds it for at most 1 s (its context's deadline and the
// server's TTL both), and the lock frees itself then; after a 1 s holder,
// a watchdog waiter's lock is renewed and outlives that second. (A lock
// that hands itself over sets the releaser's lease; the new holder must
// set its own.) Under -short the fixed leases are 600ms.
func handoffLeases(t *testing.T, e *env) {
	bg := context.Background()
	short := redistest.Short(time.Second, 600*time.Millisecond)
	for _, tc := range []struct {
		name                   string
		holderLease, waitLease time.Duration
	}{
		{"watchdog then fixed", 0, short},
		{"fixed then watchdog", short, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := redistest.Key(t)
			holder := e.k.New(e.client(t, nil), name, tc.holderLease)
			hctx := redistest.Lock(t, holder, bg)
			rc, calls := e.countedClient(t, nil)
			waiter := e.k.New(rc, name, tc.waitLease)
			got := make(chan context.Context, 1)
			go func() {
				ctx, err := waiter.Lock(bg)
				if err != nil {
					t.Error(err)
				}
				got <- ctx
			}()
			e.awaitWaiting(t, name, 1, calls, 0)
			time.Sleep(50 * time.Millisecond) // its attempt after subscribing
			redistest.Unlock(t, holder, hctx)
			var wctx context.Context
			select {
			case wctx = <-got:
			case <-time.After(5 * time.Second):
				t.Fatal("waiter not given the lock")
			}
			if wctx == nil {
				return
			}
			acquired := time.Now()
			ttl, err := waiter.TTL(bg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.waitLease > 0 {
				dl, ok := wctx.Deadline()
				if !ok || dl.After(acquired.Add(short)) {
					t.Fatalf("deadline %v (set %v), want by %v", dl, ok, acquired.Add(short))
				}
				if ttl <= 0 || ttl > short {
					t.Fatalf("TTL %v after the hand-off, want within the waiter's %v lease", ttl, short)
				}
				redistest.Eventually(t, 3*time.Second, "lock freed by the waiter's lease", func() bool {
					locked, err := waiter.IsLocked(bg)
					return err == nil && !locked
				})
				return
			}
			if ttl <= short {
				t.Fatalf("TTL %v after the hand-off, want the waiter's watchdog lease", ttl)
			}
			time.Sleep(short + 200*time.Millisecond)
			if wctx.Err() != nil {
				t.Fatalf("waiter's lock lost: %v", context.Cause(wctx))
			}
			redistest.Unlock(t, waiter, wctx)
		})
	}
}
