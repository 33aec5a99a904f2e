package locktest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/rwlock"
)

// A ForceUnlock tells the holders' relock clients at once, each on its
// own channel (redistest.NoticeChannel), rather than at their next
// renewal; a holder's client checks its hold in Redis before it ends it.

// toldWithin bounds how soon a force-unlocked holder on another client
// must be told. The tests log what they measure, which on an idle
// machine is a millisecond or two; the bound is generous so that a
// loaded CI machine does not fail them, and still far below the default
// renewal interval (10s), by which the holder was told before.
const toldWithin = time.Second

// leases are the two ways a hold is kept: renewed by the watchdog (0),
// or a fixed lease.
var leases = []struct {
	name  string
	lease time.Duration
}{{"Watchdog", 0}, {"FixedLease", 30 * time.Second}}

// forceUnlockTellsHolder: the holder on another client learns of a
// ForceUnlock (its lock context is cancelled with cause ErrLockLost,
// saying so) within toldWithin, with the default watchdog timeout of 30s,
// whose renewals come every 10s; the next owner, which was waiting, takes
// the lock meanwhile. The gaps are logged.
func forceUnlockTellsHolder(t *testing.T, e *env) {
	for _, l := range leases {
		t.Run(l.name, func(t *testing.T) {
			bg := context.Background()
			name := redistest.Key(t)
			raw := e.redis(t)
			holder := e.client(t, nil)
			hctx := redistest.Lock(t, e.k.New(holder, name, l.lease), bg)
			redistest.AwaitListening(t, raw, holder)
			told := make(chan time.Time, 1)
			context.AfterFunc(hctx, func() { told <- time.Now() })

			rc, calls := e.countedClient(t, nil)
			waiter := e.k.New(rc, name, l.lease)
			acquired := make(chan time.Time, 1)
			wctx, cancel := context.WithTimeout(bg, 20*time.Second)
			var wg sync.WaitGroup
			defer wg.Wait()
			defer cancel()
			wg.Go(func() {
				ctx, err := waiter.Lock(wctx)
				if err != nil {
					if wctx.Err() == nil {
						t.Error(err)
					}
					return
				}
				acquired <- time.Now()
				_ = waiter.Unlock(ctx)
			})
			e.awaitWaiting(t, name, 1, calls, 0)

			forcer := e.k.New(e.client(t, nil), name, l.lease)
			began := time.Now()
			if ok, err := forcer.ForceUnlock(bg); err != nil || !ok {
				t.Fatalf("ForceUnlock = %v, %v; want true", ok, err)
			}
			returned := time.Now()
			var at, took time.Time
			select {
			case at = <-told:
			case <-time.After(toldWithin):
				t.Fatalf("holder not told within %v of the ForceUnlock", toldWithin)
			}
			assertForced(t, hctx)
			select {
			case took = <-acquired:
			case <-time.After(toldWithin):
				t.Fatalf("the waiter did not take the lock within %v of the ForceUnlock", toldWithin)
			}
			if d := at.Sub(began); d > toldWithin {
				t.Fatalf("holder told %v after ForceUnlock began, want within %v", d, toldWithin)
			}
			t.Logf("holder told %v after ForceUnlock began, %v after it returned, %v after the next owner's Lock returned (negative: before)",
				at.Sub(began), at.Sub(returned), at.Sub(took))
		})
	}
}

// assertForced checks that ctx was cancelled because its lock was
// force-unlocked.
func assertForced(t testing.TB, ctx context.Context) {
	t.Helper()
	cause := context.Cause(ctx)
	if !errors.Is(cause, relock.ErrLockLost) || !strings.Contains(cause.Error(), "force-unlocked") {
		t.Fatalf("holder's cause %v, want ErrLockLost saying it was force-unlocked", cause)
	}
}

// forceUnlockRetaken: a notice may come late, after its lock was taken
// again. Here the lock is deleted without a notice (as a Redisson client
// or an operator's DEL would), taken again on the holder's client by a
// new owner and, for a reentrant kind, re-entered by the old one, and
// only then is the client told: the holds whose fields Redis still has
// stay, and only the gone one, if any, ends.
func forceUnlockRetaken(t *testing.T, e *env) {
	for _, l := range leases {
		t.Run(l.name, func(t *testing.T) {
			bg := context.Background()
			raw := e.redis(t)
			rc := e.client(t, nil)
			mu := e.k.New(rc, redistest.Key(t), l.lease)
			old := redistest.Lock(t, mu, bg)
			redistest.AwaitListening(t, raw, rc)

			// Taken again by another owner: the old owner's hold is gone.
			if err := raw.Del(bg, mu.Name()).Err(); err != nil {
				t.Fatal(err)
			}
			retaken := redistest.Lock(t, mu, relock.WithNewOwner(bg))
			e.notify(t, raw, rc, mu.Name())
			select {
			case <-old.Done():
				assertForced(t, old)
			case <-time.After(toldWithin):
				t.Fatalf("the gone hold not ended within %v of the notice", toldWithin)
			}
			assertStays(t, mu, retaken)
			redistest.Unlock(t, mu, retaken)
			if e.k.Reentry != nil {
				return
			}

			// Re-entered by its owner: Redis has the owner's field again.
			owner := redistest.Lock(t, mu, bg)
			if err := raw.Del(bg, mu.Name()).Err(); err != nil {
				t.Fatal(err)
			}
			inner := redistest.Lock(t, mu, owner)
			e.notify(t, raw, rc, mu.Name())
			assertStays(t, mu, inner)
			if ok, err := mu.ForceUnlock(bg); err != nil || !ok {
				t.Fatalf("ForceUnlock = %v, %v; want true", ok, err)
			}
		})
	}
}

// settle is how long a check a notice started is given to end a hold
// that stays: far more than the one round trip it takes.
const settle = 300 * time.Millisecond

// assertStays checks that the hold of ctx, whose client was told of a
// force-unlock after the hold was taken, stays.
func assertStays(t testing.TB, mu Lock, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatalf("a hold Redis has was ended by a late notice: %v", context.Cause(ctx))
	case <-time.After(settle):
	}
	if held, err := mu.IsHeld(ctx); err != nil || !held {
		t.Fatalf("IsHeld after a late notice = %v, %v; want true", held, err)
	}
}

// notify publishes a notice of lock name on rc's channel by hand, as a
// ForceUnlock on another client would: with SPUBLISH on a cluster,
// whose relock clients use sharded pub/sub (PubSubAuto on Redis 7).
func (e *env) notify(t testing.TB, raw redis.UniversalClient, rc *relock.Client, name string) {
	t.Helper()
	ctx, ch := context.Background(), redistest.NoticeChannel(rc.ID())
	publish := raw.Publish
	if e.cluster != nil {
		publish = raw.SPublish
	}
	if n, err := publish(ctx, ch, name).Result(); err != nil || n != 1 {
		t.Fatalf("publishing a notice on %s: %d receivers, %v; want 1", ch, n, err)
	}
}

// subscribe subscribes raw to channel (sharded on a cluster), as a
// relock client would, and returns the subscription once the server has
// it; it closes when t ends.
func (e *env) subscribe(t testing.TB, raw redis.UniversalClient, channel string) *redis.PubSub {
	t.Helper()
	ctx := context.Background()
	subscribe := raw.Subscribe
	if e.cluster != nil {
		subscribe = raw.SSubscribe
	}
	ps := subscribe(ctx, channel)
	t.Cleanup(func() { ps.Close() })
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	return ps
}

// forceUnlockRedissonHolder: a lock a Redisson client holds (its client
// id a version-4 UUID, which cannot listen) is force-unlocked as before,
// and nothing is published on a channel named after that id.
func forceUnlockRedissonHolder(t *testing.T, e *env) {
	bg := context.Background()
	raw := e.redis(t)
	name := redistest.Key(t)
	id := uuid.NewString()
	field := id + ":1"
	if e.k.Channel != nil { // a read/write lock's writer
		field += ":write"
		raw.HSet(bg, name, "mode", "write")
	}
	raw.HSet(bg, name, field, 1)
	raw.PExpire(bg, name, 30*time.Second)
	t.Cleanup(func() { raw.Del(bg, name) })
	sub := e.subscribe(t, raw, redistest.NoticeChannel(id))

	if ok, err := e.k.New(e.client(t, nil), name, 0).ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("ForceUnlock of a Redisson client's lock = %v, %v; want true", ok, err)
	}
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("the lock is still there")
	}
	if m, err := sub.ReceiveTimeout(bg, settle); err == nil {
		t.Fatalf("a notice on a Redisson client's channel: %v", m)
	}
}

// forceUnlockTellsReaders: RWMutex.ForceUnlock tells every relock client
// among the holders: readers on two clients, a reader on a third that
// also holds the write lock (a downgrade: two fields), while a Redisson
// reader (a version-4 client id) is left out and nothing breaks. The
// read holds' timeout keys go with the lock.
func forceUnlockTellsReaders(t *testing.T, e *env) {
	bg := context.Background()
	raw := e.redis(t)
	name := redistest.Key(t)

	var held []context.Context
	for range 2 {
		rc := e.client(t, nil)
		held = append(held, redistest.Lock(t, rwlock.New(rc, name, nil).Reader(), bg))
		redistest.AwaitListening(t, raw, rc)
	}
	id := uuid.NewString() // a Redisson reader
	raw.HSet(bg, name, id+":1", 1)
	raw.Set(bg, "{"+name+"}:"+id+":1:rwlock_timeout:1", 1, 30*time.Second)
	sub := e.subscribe(t, raw, redistest.NoticeChannel(id))
	if ok, err := e.rw(t, name).ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("ForceUnlock of read holds = %v, %v; want true", ok, err)
	}
	began := time.Now()
	for i, ctx := range held {
		select {
		case <-ctx.Done():
			assertForced(t, ctx)
		case <-time.After(toldWithin):
			t.Fatalf("reader %d not told within %v", i, toldWithin)
		}
	}
	t.Logf("both readers told within %v of the ForceUnlock's return", time.Since(began))
	if m, err := sub.ReceiveTimeout(bg, settle); err == nil {
		t.Fatalf("a notice on a Redisson client's channel: %v", m)
	}
	e.assertNoReadKeys(t, name)

	// A writer that took a read hold too (a downgrade).
	rc := e.client(t, nil)
	rw := rwlock.New(rc, name, nil)
	owner := relock.WithNewOwner(bg)
	w := redistest.Lock(t, rw.Writer(), owner)
	r := redistest.Lock(t, rw.Reader(), owner)
	redistest.AwaitListening(t, raw, rc)
	if ok, err := e.rw(t, name).Writer().ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("write side's ForceUnlock = %v, %v; want true", ok, err)
	}
	for _, ctx := range []context.Context{w, r} {
		select {
		case <-ctx.Done():
			assertForced(t, ctx)
		case <-time.After(toldWithin):
			t.Fatalf("the writer's holds not told within %v", toldWithin)
		}
	}
	e.assertNoReadKeys(t, name)
}
