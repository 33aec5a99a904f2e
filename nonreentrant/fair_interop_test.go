package nonreentrant_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/nonreentrant"
)

// A Redisson RedissonNonReentrantFairLock client, played from the facts
// in docs/redisson-facts.md (read in RedissonNonReentrantFairLock.java
// and RedissonFairLock.java): its acquire drops expired queue heads,
// takes a free lock when nobody queues or it is the head (moving every
// other waiter's deadline up one wait), refuses its own owner with the
// error NON_REENTRANT_REACQUIRE, replies the lock's PTTL (at least 0) to
// a waiter already queued, and otherwise queues the caller due the last
// waiter's deadline (or the lock's PTTL from now) plus one wait, and
// replies that ttl. Its unlock is RFairLock's: the last hold deletes the
// hash and publishes "0" on the queue head's own channel,
// "<lock channel>:<head field>" (locktest.RedissonFairUnlock). "now" is
// the client's clock.
//
// KEYS: lock, queue, timeout set, channel prefix. Acquire's ARGV: lease
// ms, field, wait ms, now ms; unlock's: lease ms, field, now ms.
var redissonFairAcquire = redis.NewScript(`
local now = tonumber(ARGV[4])
while true do
	local head = redis.call('lindex', KEYS[2], 0)
	if not head then break end
	local due = redis.call('zscore', KEYS[3], head)
	if not due or tonumber(due) > now then break end
	redis.call('zrem', KEYS[3], head)
	redis.call('lpop', KEYS[2])
end
if redis.call('exists', KEYS[1]) == 0 and (redis.call('exists', KEYS[2]) == 0
		or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
	redis.call('lpop', KEYS[2])
	redis.call('zrem', KEYS[3], ARGV[2])
	for _, w in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
		redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), w)
	end
	redis.call('hset', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	return redis.error_reply('NON_REENTRANT_REACQUIRE')
end
if redis.call('zscore', KEYS[3], ARGV[2]) then
	return math.max(0, redis.call('pttl', KEYS[1]))
end
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last and last ~= ARGV[2] and redis.call('zscore', KEYS[3], last) then
	ttl = tonumber(redis.call('zscore', KEYS[3], last)) - now
else
	ttl = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ttl + tonumber(ARGV[3]) + now, ARGV[2]) == 1 then
	redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
`)

// A redissonFair is one thread of a Redisson client on a
// RedissonNonReentrantFairLock: its field and its own channel, where
// releases wake it.
type redissonFair struct {
	raw   *redis.Client
	keys  []string
	field string
	sub   *redis.PubSub
}

func newRedissonFair(t *testing.T, raw *redis.Client, name string) *redissonFair {
	t.Helper()
	prefix := channelOf(name)
	r := &redissonFair{raw: raw, keys: append([]string{name}, append(locktest.FairResidue(name), prefix)...),
		field: uuid.NewString() + ":1"} // a version-4 id, as Redisson's
	r.sub = subscribe(t, raw, prefix+":"+r.field)
	return r
}

func nowMs() string { return strconv.FormatInt(time.Now().UnixMilli(), 10) }

// acquire runs Redisson's acquire once: true when it took the lock.
func (r *redissonFair) acquire(t *testing.T) bool {
	t.Helper()
	err := redissonFairAcquire.Run(context.Background(), r.raw, r.keys[:3], 30000, r.field, 300000, nowMs()).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return true
	case err != nil:
		t.Fatal(err)
	}
	return false
}

func (r *redissonFair) unlock(t *testing.T) {
	t.Helper()
	if n, err := locktest.RedissonFairUnlock.Run(context.Background(), r.raw, r.keys, 30000, r.field, nowMs()).Int64(); err != nil || n != 1 {
		t.Fatalf("Redisson unlock = %d, %v; want 1", n, err)
	}
}

// awaitTurn waits, as Redisson's waiter does, for the "0" on its own
// channel, then takes the lock.
func (r *redissonFair) awaitTurn(t *testing.T) {
	t.Helper()
	released(t, r.sub, "the release ahead of the Redisson waiter")
	if !r.acquire(t) {
		t.Fatalf("Redisson waiter woken at the head could not take the lock: %+v", readFair(t, r.raw, r.keys[0]))
	}
}

// TestFairRedisson: relock's FairMutex and Redisson's
// RedissonNonReentrantFairLock on one name share one queue, in arrival
// order. A Redisson holder blocks relock's waiter and its release wakes
// it; relock's release wakes the Redisson waiter behind, which blocks the
// relock waiter after it until its own release. Both refuse their own
// holder, and the other's refusal leaves the shared records as they were.
func TestFairRedisson(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	j1, j2 := newRedissonFair(t, raw, name), newRedissonFair(t, raw, name)
	if !j1.acquire(t) {
		t.Fatal("Redisson's acquire of a free lock failed")
	}
	r1 := nonreentrant.NewFair(newClient(t, nil), name, nil)
	if _, err := r1.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock under Redisson's hold = %v, want ErrNotAcquired", err)
	}
	got1 := lockAt(r1)
	locktest.WaitQueued(t, raw, name, r1.Client().ID(), 1)
	if j2.acquire(t) {
		t.Fatal("a Redisson waiter took a held lock")
	}
	r2 := nonreentrant.NewFair(newClient(t, nil), name, nil)
	got2 := lockAt(r2)
	locktest.WaitQueued(t, raw, name, r2.Client().ID(), 3)

	before := readFair(t, raw, name)
	err := redissonFairAcquire.Run(bg, raw, j1.keys[:3], 30000, j1.field, 300000, nowMs()).Err()
	if err == nil || !strings.Contains(err.Error(), "NON_REENTRANT_REACQUIRE") {
		t.Fatalf("Redisson holder's second acquire = %v, want NON_REENTRANT_REACQUIRE", err)
	}
	if after := readFair(t, raw, name); !after.equal(before) {
		t.Fatalf("Redisson's refusal changed the lock: %+v, was %+v", after, before)
	}

	start := time.Now()
	j1.unlock(t)
	ctx1 := within(t, got1, 2*time.Second, "relock waiter woken by Redisson's release")
	t.Logf("relock waiter took the lock %v after Redisson's release", time.Since(start))
	if _, err := r1.Lock(ctx1); !errors.Is(err, relock.ErrNotReentrant) {
		t.Fatalf("relock holder's second Lock = %v, want ErrNotReentrant", err)
	}
	if j2.acquire(t) {
		t.Fatal("the Redisson waiter took the lock relock holds")
	}

	redistest.Unlock(t, r1, ctx1)
	j2.awaitTurn(t)
	select {
	case ctx := <-got2:
		t.Fatalf("relock waiter behind the Redisson holder acquired (ctx %v)", ctx)
	case <-time.After(200 * time.Millisecond):
	}
	if h := raw.HGetAll(bg, name).Val(); len(h) != 1 || h[j2.field] != "1" {
		t.Fatalf("hash %v, want the Redisson waiter's one hold", h)
	}
	j2.unlock(t)
	redistest.Unlock(t, r2, within(t, got2, 2*time.Second, "relock waiter woken by the second Redisson release"))
	if n := raw.Exists(bg, j1.keys[:3]...).Val(); n != 0 {
		t.Fatalf("%d of the lock's keys left", n)
	}
}
