package spinlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/spinlock"
)

// redisson is one thread of a Redisson RLock client, played with
// locktest.RedissonAcquire and RedissonUnlock: its field is a version-4
// UUID and a thread id.
type redisson struct {
	raw   *redis.Client
	keys  []string
	field string
}

func newRedisson(raw *redis.Client, name string) *redisson {
	return &redisson{raw: raw, keys: []string{name, channelOf(name)}, field: uuid.NewString() + ":1"}
}

// acquire reports whether Redisson's acquire took the lock.
func (r *redisson) acquire(t *testing.T) bool {
	t.Helper()
	err := locktest.RedissonAcquire.Run(context.Background(), r.raw, r.keys, 30000, r.field).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return true
	case err != nil:
		t.Fatal(err)
	}
	return false
}

func (r *redisson) unlock(t *testing.T) {
	t.Helper()
	if err := locktest.RedissonUnlock.Run(context.Background(), r.raw, r.keys, 30000, r.field).Err(); err != nil {
		t.Fatal(err)
	}
}

// take locks mu in a goroutine and delivers when it got the lock, and its
// context, which the test unlocks.
type taken struct {
	at  time.Time
	ctx context.Context
	err error
}

func take(mu relock.Locker) <-chan taken {
	got := make(chan taken, 1)
	go func() {
		ctx, err := mu.Lock(context.Background())
		got <- taken{time.Now(), ctx, err}
	}()
	return got
}

// await returns what got delivers, failing t after 10s.
func await(t *testing.T, got <-chan taken, what string) taken {
	t.Helper()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("%s: %v", what, r.err)
		}
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not within 10s", what)
	}
	return taken{}
}

// TestRedissonRLock: a Redisson RLock and a spin lock of the same name
// exclude each other. A spin waiter takes the lock within its backoff of
// Redisson's release; Redisson's waiter hears nothing from the spin
// lock's release, and its next attempt takes the lock.
func TestRedissonRLock(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	r := newRedisson(raw, name)
	if !r.acquire(t) {
		t.Fatal("Redisson's acquire of a free lock failed")
	}
	calls := &redistest.ScriptCounter{}
	mu := spinlock.New(srv.Counted(t, calls), name, nil)
	if _, err := mu.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock under Redisson's hold = %v, want ErrNotAcquired", err)
	}
	got := take(mu)
	redistest.Eventually(t, 5*time.Second, "spin waiter polling", func() bool { return calls.N() >= 3 })
	released := time.Now()
	r.unlock(t)
	held := await(t, got, "spin waiter after Redisson's release")
	t.Logf("spin waiter took the lock %v after Redisson's release", held.at.Sub(released))
	if d := held.at.Sub(released); d > 128*time.Millisecond+time.Second {
		t.Fatalf("spin waiter took the lock %v after Redisson's release, past its 128ms backoff", d)
	}

	if r.acquire(t) {
		t.Fatal("Redisson's acquire took a lock the spin lock holds")
	}
	sub := raw.Subscribe(bg, channelOf(name)) // Redisson's waiter
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(bg); err != nil {
		t.Fatal(err)
	}
	redistest.Unlock(t, mu, held.ctx)
	silent(t, sub, 300*time.Millisecond, "the spin lock's release")
	if !r.acquire(t) {
		t.Fatal("Redisson's acquire after the spin lock's release failed")
	}
	r.unlock(t)
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("lock left after Redisson's unlock")
	}
}

// TestReentrantWaiterNotWoken: a reentrant Mutex waiting behind a spin
// lock is not woken by its release, which publishes nothing; it takes the
// lock when its sleep, bounded by the lock's TTL at its last attempt,
// runs out.
func TestReentrantWaiterNotWoken(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	lease := redistest.Short(2*time.Second, time.Second)
	holder := spinlock.New(newClient(t, nil), name, &spinlock.Options{Lease: lease})
	hctx := redistest.Lock(t, holder, bg)
	sub := listen(t, raw)

	waiter := reentrant.New(newClient(t, nil), name, nil)
	got := take(waiter)
	registry := "relock_lock_waiters:{" + name + "}"
	redistest.Eventually(t, 5*time.Second, "reentrant waiter registered", func() bool { return raw.ZCard(bg, registry).Val() == 1 })
	// The waiter sleeps until the lock's expiry as its last attempt saw
	// it: no earlier than now plus the PTTL read from now on.
	now := time.Now()
	wake := now.Add(raw.PTTL(bg, name).Val())
	released := time.Now()
	redistest.Unlock(t, holder, hctx)
	silent(t, sub, 300*time.Millisecond, "the spin lock's release")
	held := await(t, got, "reentrant waiter")
	t.Logf("reentrant waiter took the lock %v after the release, %v after its sleep's end",
		held.at.Sub(released), held.at.Sub(wake))
	if held.at.Before(wake.Add(-100 * time.Millisecond)) {
		t.Fatalf("reentrant waiter took the lock %v before its sleep's end: woken by a release that publishes nothing", wake.Sub(held.at))
	}
	// Slack for a loaded machine; a waiter that missed its TTL would
	// wait for ever.
	if held.at.After(wake.Add(2 * time.Second)) {
		t.Fatalf("reentrant waiter took the lock %v after its sleep's end", held.at.Sub(wake))
	}
	if err := waiter.Unlock(held.ctx); err != nil {
		t.Fatal(err)
	}
	if n := raw.Exists(bg, name, registry).Val(); n != 0 {
		t.Fatalf("%d of the lock and the registry left", n)
	}
}

// TestSpinWaiterBehindReentrant: a spin waiter behind a reentrant Mutex
// takes the lock within its backoff of the release, and each excludes
// the other.
func TestSpinWaiterBehindReentrant(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	holder := reentrant.New(newClient(t, nil), name, nil)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	calls := &redistest.ScriptCounter{}
	mu := spinlock.New(srv.Counted(t, calls), name, nil)
	got := take(mu)
	redistest.Eventually(t, 5*time.Second, "spin waiter polling", func() bool { return calls.N() >= 2 })
	released := time.Now()
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	held := await(t, got, "spin waiter after the reentrant release")
	if d := held.at.Sub(released); d > 128*time.Millisecond+time.Second {
		t.Fatalf("spin waiter took the lock %v after the release, past its 128ms backoff", d)
	}
	if _, err := holder.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("reentrant TryLock under the spin lock's hold = %v, want ErrNotAcquired", err)
	}
	redistest.Unlock(t, mu, held.ctx)
}
