package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// Kinds whose waiters poll (Kind.Poll) show no subscription while they
// wait. The suite tells that such a waiter waits by its attempts instead,
// which the script counter of its client counts.

// countedClient returns a relock client with its own go-redis client, as
// client does, and the counter of its script calls: attempts, releases,
// renewals. Both close when t ends.
func (e *env) countedClient(t testing.TB, opts *relock.Options) (*relock.Client, *redistest.ScriptCounter) {
	t.Helper()
	// Retries off and deadlines on: relock runs its scripts through
	// this client (and its hook) rather than a copy of its own.
	rdb := e.redisWith(t, func(o *redis.UniversalOptions) { o.MaxRetries, o.ContextTimeoutEnabled = -1, true })
	calls := &redistest.ScriptCounter{}
	calls.Watch(rdb)
	return redistest.Relock(t, rdb, opts), calls
}

// awaitWaiting waits until a Lock on lock name through the client whose
// script calls calls counts is waiting: for a kind whose waiters listen,
// until the lock's channels have at least subs subscriptions; for one that
// polls, until calls has counted two more than from, the Lock's first
// attempt and one after a sleep.
func (e *env) awaitWaiting(t testing.TB, name string, subs int64, calls *redistest.ScriptCounter, from int64) {
	t.Helper()
	if e.k.Poll > 0 {
		redistest.Eventually(t, 5*time.Second, "waiter polling", func() bool { return calls.N() >= from+2 })
		return
	}
	raw := e.redis(t)
	redistest.Eventually(t, 5*time.Second, "waiter subscribed", func() bool { return e.subscribers(t, raw, name) >= subs })
}

// subscribeCalls sums the SUBSCRIBE and SSUBSCRIBE calls every server of
// the deployment has run.
func (e *env) subscribeCalls(t testing.TB) int64 {
	t.Helper()
	var n int64
	for _, srv := range e.servers(t) {
		calls := redistest.CommandCalls(t, srv)
		n += calls["subscribe"] + calls["ssubscribe"]
	}
	return n
}

// pollsWithoutListening, for a kind whose waiters poll (Kind.Poll): a
// waiter subscribes to nothing, keeps trying while the lock is held, and
// takes the lock within about one sleep of the release, which announces
// nothing. Once it holds the lock, its client listens on its own channel
// for force-unlocks (one subscription), as the holder's does.
func pollsWithoutListening(t *testing.T, e *env) {
	e = e.isolated(t)
	bg := context.Background()
	name := redistest.Key(t)
	hc := e.client(t, nil)
	holder := e.k.New(hc, name, 0)
	rc, calls := e.countedClient(t, nil)
	waiter := e.k.New(rc, name, 0)
	hctx := redistest.Lock(t, holder, bg)
	redistest.AwaitListening(t, e.redis(t), hc)
	subscribed := e.subscribeCalls(t)

	acquired := make(chan time.Time, 1)
	go func() {
		ctx, err := waiter.Lock(bg)
		acquired <- time.Now()
		if err != nil {
			t.Error(err)
			return
		}
		_ = waiter.Unlock(ctx)
	}()
	e.awaitWaiting(t, name, 0, calls, 0)
	polled := calls.N()
	redistest.Eventually(t, 5*time.Second, "waiter polling on", func() bool { return calls.N() >= polled+2 })
	released := time.Now()
	redistest.Unlock(t, holder, hctx)
	var got time.Time
	select {
	case got = <-acquired:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not take the released lock")
	}
	handoff := got.Sub(released)
	t.Logf("acquired %v after the unlock (longest sleep %v)", handoff, e.k.Poll)
	// One sleep at most, and slack for a loaded machine: the lease is
	// 30s, so a waiter that stopped polling would be far later.
	if handoff > e.k.Poll+time.Second {
		t.Fatalf("waiter acquired %v after the unlock, past its %v backoff", handoff, e.k.Poll)
	}
	redistest.AwaitListening(t, e.redis(t), rc)
	if n := e.subscribeCalls(t) - subscribed; n != 1 {
		t.Fatalf("%d subscriptions made while a polling waiter waited and took the lock, want its client's own one", n)
	}
	if n := e.subscribers(t, e.redis(t), name); n != 0 {
		t.Fatalf("%d subscribers on the lock's channel", n)
	}
}
