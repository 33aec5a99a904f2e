package rwlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/rwlock"
)

// A Redisson RReadWriteLock reader, played from the facts of Redisson's
// RedissonReadLock: its read acquire, its read unlock (which walks every
// reader's timeout keys) and its renewal (which extends every reader's
// timeout keys it finds).
var (
	// KEYS: lock, caller's timeout prefix. ARGV: lease ms, reader
	// field, writer field. Reply: nil (acquired) or the lock's PTTL.
	redissonReadAcquire = redis.NewScript(`
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
	redis.call('hset', KEYS[1], 'mode', 'read')
	redis.call('hset', KEYS[1], ARGV[2], 1)
	redis.call('set', KEYS[2] .. ':1', 1)
	redis.call('pexpire', KEYS[2] .. ':1', ARGV[1])
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
	local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('set', KEYS[2] .. ':' .. ind, 1)
	redis.call('pexpire', KEYS[2] .. ':' .. ind, ARGV[1])
	redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), ARGV[1]))
	return nil
end
return redis.call('pttl', KEYS[1])`)
	// KEYS: lock, channel, caller's timeout prefix, "{<name>}". ARGV:
	// "0", reader field. Reply: nil (no hold), 0 or 1 (the last).
	redissonReadUnlock = redis.NewScript(`
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
	redis.call('publish', KEYS[2], ARGV[1])
	return 1
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
	return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if counter == 0 then
	redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (counter + 1))
if redis.call('hlen', KEYS[1]) > 1 then
	local longest = -3
	for _, key in ipairs(redis.call('hkeys', KEYS[1])) do
		local n = tonumber(redis.call('hget', KEYS[1], key))
		if type(n) == 'number' then
			for i = n, 1, -1 do
				longest = math.max(redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i), longest)
			end
		end
	end
	if longest > 0 then
		redis.call('pexpire', KEYS[1], longest)
		return 0
	end
	if mode == 'write' then
		return 0
	end
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1`)
	// KEYS: lock, "{<name>}". ARGV: lease ms, reader field. Reply: 1
	// (renewed) or 0 (no hold).
	redissonReadRenew = redis.NewScript(`
if redis.call('hget', KEYS[1], ARGV[2]) == false then
	return 0
end
redis.call('pexpire', KEYS[1], ARGV[1])
if redis.call('hlen', KEYS[1]) > 1 then
	for _, key in ipairs(redis.call('hkeys', KEYS[1])) do
		local n = tonumber(redis.call('hget', KEYS[1], key))
		if type(n) == 'number' then
			for i = n, 1, -1 do
				redis.call('pexpire', KEYS[2] .. ':' .. key .. ':rwlock_timeout:' .. i, ARGV[1])
			end
		end
	end
end
return 1`)
)

// redissonReader is one played Redisson reader thread on lock name.
type redissonReader struct {
	raw         *redis.Client
	name, field string
}

func newRedissonReader(t *testing.T, name string) *redissonReader {
	return &redissonReader{raw: srv.Client(t), name: name, field: uuid.NewString() + ":1"}
}

func (r *redissonReader) prefix() string {
	return "{" + r.name + "}:" + r.field + ":rwlock_timeout"
}

// rlock takes a read hold with a lease of lease.
func (r *redissonReader) rlock(t *testing.T, lease time.Duration) {
	t.Helper()
	err := redissonReadAcquire.Run(context.Background(), r.raw, []string{r.name, r.prefix()},
		lease.Milliseconds(), r.field, r.field+":write").Err()
	if !errors.Is(err, redis.Nil) {
		t.Fatalf("Redisson's read acquire: %v", err)
	}
}

// runlock runs Redisson's read unlock and returns its reply (-1 for nil).
func (r *redissonReader) runlock(t *testing.T) int64 {
	t.Helper()
	n, err := redissonReadUnlock.Run(context.Background(), r.raw,
		[]string{r.name, "redisson_rwlock:{" + r.name + "}", r.prefix(), "{" + r.name + "}"}, "0", r.field).Int64()
	if errors.Is(err, redis.Nil) {
		return -1
	}
	if err != nil {
		t.Fatalf("Redisson's read unlock: %v", err)
	}
	return n
}

// renew runs Redisson's read renewal and returns its reply.
func (r *redissonReader) renew(t *testing.T, lease time.Duration) int64 {
	t.Helper()
	n, err := redissonReadRenew.Run(context.Background(), r.raw, []string{r.name, "{" + r.name + "}"},
		lease.Milliseconds(), r.field).Int64()
	if err != nil {
		t.Fatalf("Redisson's read renewal: %v", err)
	}
	return n
}

// TestDeadReadersDropped: readers that die while another reader keeps the
// lock read-held leave no field once their leases end, whether the next
// script on the hash is a read acquire, a read unlock or the live
// reader's renewal. Before, 20 such readers left 20 fields for as long as
// the live reader held.
func TestDeadReadersDropped(t *testing.T) {
	srv.RequireReal(t)
	bg := context.Background()
	for _, next := range []string{"acquire", "renewal"} {
		t.Run(next, func(t *testing.T) {
			raw := srv.Client(t)
			name := redistest.Key(t)
			live := rwlock.New(newClient(t, &relock.Options{WatchdogTimeout: 300 * time.Millisecond}), name, nil)
			lctx := must(t)(live.RLock(bg))
			const dead = 20
			for range dead {
				newRedissonReader(t, name).rlock(t, 200*time.Millisecond)
			}
			if n := raw.HLen(bg, name).Val(); n != dead+2 {
				t.Fatalf("hash has %d fields, want mode, the live reader and %d dead", n, dead)
			}
			time.Sleep(250 * time.Millisecond)
			probe := rwlock.New(newClient(t, nil), name, nil)
			for i := 0; raw.HLen(bg, name).Val() > 2; i++ {
				if i == 100 {
					t.Fatalf("%d fields left after %d rounds: %v", raw.HLen(bg, name).Val(), i, raw.HKeys(bg, name).Val())
				}
				if next == "acquire" {
					pctx := must(t)(probe.RLock(bg))
					if err := probe.RUnlock(pctx); err != nil {
						t.Fatal(err)
					}
				} else {
					time.Sleep(50 * time.Millisecond)
				}
			}
			if lctx.Err() != nil {
				t.Fatalf("live reader lost its hold: %v", context.Cause(lctx))
			}
			if err := live.RUnlock(lctx); err != nil {
				t.Fatal(err)
			}
			if raw.Exists(bg, name).Val() != 0 {
				t.Errorf("lock left after its last reader: %v", raw.HGetAll(bg, name).Val())
			}
		})
	}
}

// TestSweptRedissonReader: a live Redisson reader survives relock's
// sweeps, and its own renewal and read unlock work on the swept hash; a
// dead Redisson reader's field goes, and its late unlock finds nothing.
func TestSweptRedissonReader(t *testing.T) {
	srv.RequireReal(t)
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	java := newRedissonReader(t, name)
	java.rlock(t, 30*time.Second)
	gone := newRedissonReader(t, name)
	gone.rlock(t, 10*time.Millisecond)
	time.Sleep(30 * time.Millisecond)
	rw := rwlock.New(newClient(t, nil), name, nil)
	for range 10 {
		ctx := must(t)(rw.RLock(bg))
		if err := rw.RUnlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if raw.HExists(bg, name, gone.field).Val() {
		t.Errorf("dead Redisson reader's field left: %v", raw.HGetAll(bg, name).Val())
	}
	if !raw.HExists(bg, name, java.field).Val() {
		t.Fatalf("live Redisson reader's field swept: %v", raw.HGetAll(bg, name).Val())
	}
	if n := gone.runlock(t); n != -1 {
		t.Errorf("dead reader's unlock replied %d, want nil", n)
	}
	if n := java.renew(t, 30*time.Second); n != 1 {
		t.Errorf("Redisson's renewal replied %d, want 1", n)
	}
	if _, err := rw.TryLock(bg, 0); err == nil {
		t.Fatal("writer got in while a Redisson reader holds")
	}
	if n := java.runlock(t); n != 1 {
		t.Errorf("Redisson's last read unlock replied %d, want 1", n)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Errorf("lock left after Redisson's last unlock: %v", raw.HGetAll(bg, name).Val())
	}
	wctx := must(t)(rw.TryLock(bg, 0))
	if err := rw.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
}
