package nonreentrant_test

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
	"github.com/relock-go/relock/nonreentrant"
	"github.com/relock-go/relock/reentrant"
)

// A Redisson RedissonNonReentrantLock client, played from the facts of
// docs/redisson-facts.md: its acquire takes a free hash (reply nil),
// refuses its own owner with the error NON_REENTRANT_REACQUIRE, or
// replies the PTTL; its unlock is RLock's, whose last release deletes
// the hash and publishes "0" on the lock's channel
// (locktest.RedissonUnlock). KEYS: lock, channel; ARGV: lease ms, field.
var redissonAcquire = redis.NewScript(`
if redis.call('exists', KEYS[1]) == 0 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	return redis.error_reply('NON_REENTRANT_REACQUIRE')
end
return redis.call('pttl', KEYS[1])`)

// redissonAcquireOnce runs Redisson's acquire for field and reports
// whether it took the lock.
func redissonAcquireOnce(t *testing.T, raw *redis.Client, name, field string) bool {
	t.Helper()
	err := redissonAcquire.Run(context.Background(), raw, []string{name, channelOf(name)}, 30000, field).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return true
	case err != nil:
		t.Fatal(err)
	}
	return false
}

func redissonUnlockOnce(t *testing.T, raw *redis.Client, name, field string) {
	t.Helper()
	if err := locktest.RedissonUnlock.Run(context.Background(), raw, []string{name, channelOf(name)}, 30000, field).Err(); err != nil {
		t.Fatal(err)
	}
}

// lockAt locks mu in a goroutine and reports when it got the lock, and
// its context, which the test unlocks.
func lockAt(mu relock.Locker) <-chan context.Context {
	got := make(chan context.Context, 1)
	go func() {
		ctx, err := mu.Lock(context.Background())
		if err != nil {
			ctx = nil
		}
		got <- ctx
	}()
	return got
}

// within returns what got delivers within limit, failing t otherwise.
func within(t *testing.T, got <-chan context.Context, limit time.Duration, what string) context.Context {
	t.Helper()
	select {
	case ctx := <-got:
		if ctx == nil {
			t.Fatalf("%s: Lock failed", what)
		}
		return ctx
	case <-time.After(limit):
		t.Fatalf("%s: not within %v", what, limit)
	}
	return nil
}

// TestRedisson: a Redisson non-reentrant lock and a relock one of the same
// name exclude each other and wake each other's waiters: Redisson's
// release wakes a relock waiter at once (its lease is 30s), and relock's
// release publishes the "0" Redisson's waiters listen for.
func TestRedisson(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	field := uuid.NewString() + ":1" // a Redisson thread
	if !redissonAcquireOnce(t, raw, name, field) {
		t.Fatal("Redisson's acquire of a free lock failed")
	}
	mu := nonreentrant.New(newClient(t, nil), name, nil)
	if _, err := mu.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock under Redisson's hold = %v, want ErrNotAcquired", err)
	}
	got := lockAt(mu)
	redistest.Eventually(t, 5*time.Second, "relock waiter on the lock's channel", func() bool {
		return raw.PubSubNumSub(bg, channelOf(name)).Val()[channelOf(name)] == 1
	})
	redissonUnlockOnce(t, raw, name, field)
	ctx := within(t, got, time.Second, "relock waiter woken by Redisson's release")

	if redissonAcquireOnce(t, raw, name, field) {
		t.Fatal("Redisson's acquire took a lock relock holds")
	}
	sub := subscribe(t, raw, channelOf(name))
	redistest.Unlock(t, mu, ctx)
	released(t, sub, "relock's Unlock")
	if !redissonAcquireOnce(t, raw, name, field) {
		t.Fatal("Redisson's acquire after relock's release failed")
	}
	redissonUnlockOnce(t, raw, name, field)
}

// TestReentrantInterop: a reentrant Mutex and a non-reentrant one of the
// same name exclude each other, and each one's release hands the lock to
// the other's waiter at once.
func TestReentrantInterop(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	registry := "relock_lock_waiters:{" + name + "}"
	nr := nonreentrant.New(newClient(t, nil), name, nil)
	re := reentrant.New(newClient(t, nil), name, nil)

	nctx := redistest.Lock(t, nr, bg)
	if _, err := re.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("reentrant TryLock under the non-reentrant hold = %v, want ErrNotAcquired", err)
	}
	got := lockAt(re)
	redistest.Eventually(t, 5*time.Second, "reentrant waiter registered", func() bool { return raw.ZCard(bg, registry).Val() == 1 })
	redistest.Unlock(t, nr, nctx)
	rctx := within(t, got, time.Second, "reentrant waiter woken by the non-reentrant release")

	if _, err := nr.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("non-reentrant TryLock under the reentrant hold = %v, want ErrNotAcquired", err)
	}
	got = lockAt(nr)
	redistest.Eventually(t, 5*time.Second, "non-reentrant waiter registered", func() bool { return raw.ZCard(bg, registry).Val() == 1 })
	if err := re.Unlock(rctx); err != nil {
		t.Fatal(err)
	}
	nctx = within(t, got, time.Second, "non-reentrant waiter woken by the reentrant release")
	if n, err := nr.HoldCount(nctx); err != nil || n != 1 {
		t.Fatalf("HoldCount after the hand-off = %d (%v), want 1", n, err)
	}
	if _, err := nr.Lock(nctx); !errors.Is(err, relock.ErrNotReentrant) {
		t.Fatalf("second Lock after the hand-off = %v, want ErrNotReentrant", err)
	}
	redistest.Unlock(t, nr, nctx)
	if n := raw.Exists(bg, name, registry).Val(); n != 0 {
		t.Fatalf("%d of the lock and the registry left", n)
	}
}
