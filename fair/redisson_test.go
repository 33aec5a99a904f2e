package fair_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// A redissonWaiter plays a Redisson RFairLock client: its scripts are
// written here from Redisson's RedissonFairLock (Redisson's own
// acquire moves every waiter up one wait when the head takes the lock,
// and its client clock is "now"), and it listens on its own channel,
// "<prefix>:<field>", as Redisson's waiters do.
type redissonWaiter struct {
	raw   *redis.Client
	keys  []string // lock, queue, timeout set, channel prefix
	field string
	sub   *redis.PubSub
}

// Redisson's fair acquire. KEYS as fair_prelude.lua's first three; ARGV:
// lease ms, field, wait ms, now ms. Reply nil (acquired) or a ttl.
var redissonAcquire = redis.NewScript(`
while true do
	local head = redis.call('lindex', KEYS[2], 0)
	if not head then break end
	if tonumber(redis.call('zscore', KEYS[3], head)) > tonumber(ARGV[4]) then break end
	redis.call('zrem', KEYS[3], head)
	redis.call('lpop', KEYS[2])
end
if redis.call('exists', KEYS[1]) == 0 and (redis.call('exists', KEYS[2]) == 0
		or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
	redis.call('lpop', KEYS[2])
	redis.call('zrem', KEYS[3], ARGV[2])
	local rest = redis.call('zrange', KEYS[3], 0, -1)
	for i = 1, #rest do
		redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), rest[i])
	end
	redis.call('hset', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
local mine = redis.call('zscore', KEYS[3], ARGV[2])
if mine then
	return tonumber(mine) - tonumber(ARGV[3]) - tonumber(ARGV[4])
end
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last and last ~= ARGV[2] then
	ttl = tonumber(redis.call('zscore', KEYS[3], last)) - tonumber(ARGV[4])
else
	ttl = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[2]) == 1 then
	redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
`)

func newRedissonWaiter(t *testing.T, raw *redis.Client, name string) *redissonWaiter {
	t.Helper()
	queue, timeouts := queueKeys(name)
	prefix := "redisson_lock__channel:{" + name + "}"
	w := &redissonWaiter{raw: raw, keys: []string{name, queue, timeouts, prefix}, field: uuid.NewString() + ":1"}
	w.sub = raw.Subscribe(context.Background(), prefix+":"+w.field)
	if _, err := w.sub.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.sub.Close() })
	return w
}

// acquire runs Redisson's acquire once and reports whether it took the
// lock.
func (w *redissonWaiter) acquire(t *testing.T) bool {
	t.Helper()
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	err := redissonAcquire.Run(context.Background(), w.raw, w.keys[:3], 30000, w.field, 300000, now).Err()
	if err == redis.Nil {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

func (w *redissonWaiter) unlock(t *testing.T) {
	t.Helper()
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	if n, err := locktest.RedissonFairUnlock.Run(context.Background(), w.raw, w.keys, 30000, w.field, now).Int64(); err != nil || n != 1 {
		t.Fatalf("Redisson unlock = %d, %v", n, err)
	}
}

// woken waits for the "0" a release sends the waiter on its channel.
func (w *redissonWaiter) woken(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	msg, err := w.sub.ReceiveMessage(ctx)
	if err != nil || msg.Payload != "0" {
		t.Fatalf("Redisson waiter: message %v, %v; want \"0\" on its channel", msg, err)
	}
}

// TestRedissonWaiterInQueue: a Redisson waiter queued between relock
// waiters gets the lock in its turn. The relock release ahead of it is
// not handed to it (its acquire script would count a granted hold twice)
// but wakes it on its own channel; its unlock wakes the relock waiter
// behind it on that waiter's own channel, which relock listens on
// because a Redisson client was ahead of it when it joined.
func TestRedissonWaiterInQueue(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := fair.New(newClient(t, nil), name, nil)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	defer close(releaseB)
	_, doneA := queued(t, raw, name, 1, nil, bg, releaseA)
	rw := newRedissonWaiter(t, raw, name)
	if rw.acquire(t) {
		t.Fatal("Redisson waiter took a held lock")
	}
	queue, _ := queueKeys(name)
	if q := raw.LRange(bg, queue, 0, -1).Val(); len(q) != 2 || q[1] != rw.field {
		t.Fatalf("queue %v, want the Redisson waiter second", q)
	}
	fieldB, doneB := queued(t, raw, name, 3, nil, bg, releaseB)

	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	close(releaseA)
	rw.woken(t)
	if !rw.acquire(t) {
		t.Fatalf("Redisson waiter woken at the head could not take the lock: hash %v, queue %v",
			raw.HGetAll(bg, name).Val(), raw.LRange(bg, queue, 0, -1).Val())
	}
	if h := raw.HGetAll(bg, name).Val(); len(h) != 1 || h[rw.field] != "1" {
		t.Fatalf("hash %v after the Redisson waiter acquired, want its one hold", h)
	}
	select {
	case err := <-doneB:
		t.Fatalf("relock waiter behind the Redisson holder acquired (%v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	released := time.Now()
	rw.unlock(t)
	select {
	case err := <-doneB:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("relock waiter took the lock %v after the Redisson unlock", time.Since(released))
	case <-time.After(2 * time.Second):
		t.Fatalf("relock waiter %s not woken by the Redisson unlock", fieldB)
	}
	if h := raw.HGetAll(bg, name).Val(); len(h) != 1 || h[fieldB] != "1" {
		t.Fatalf("hash %v, want the relock waiter's one hold", h)
	}
}
