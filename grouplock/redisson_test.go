package grouplock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// A Redisson RedissonFasterMultiLock client, played from the facts in
// docs/redisson-facts.md ("Faster multi-lock"): its acquire and unlock
// take the client's clock in ARGV, compare each value's expire_time with
// it, and its unlock publishes "0" on the group's channel. Fields are
// given as Redisson computed them (hash_test.go), not through
// grouplock's Field.
var (
	// KEYS: group. ARGV: lease ms, now ms, owner, fields. Reply: nil
	// (acquired) or the ms until the latest taken value's expire_time.
	redissonAcquire = redis.NewScript(`
local lease, now, owner = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local latest = -1
local existed = redis.call('exists', KEYS[1]) == 1
if existed then
	for i = 4, #ARGV do
		local holder = redis.call('hget', KEYS[1], ARGV[i])
		if holder and holder ~= owner then
			local e = redis.call('hget', KEYS[1], ARGV[i] .. ':' .. holder .. ':expire_time')
			if e and tonumber(e) > now and tonumber(e) > latest then
				latest = tonumber(e)
			end
		end
	end
end
if latest ~= -1 then
	return latest - now
end
for i = 4, #ARGV do
	redis.call('hset', KEYS[1], ARGV[i], owner)
	local ef = ARGV[i] .. ':' .. owner .. ':expire_time'
	local e = redis.call('hget', KEYS[1], ef)
	if not e or tonumber(e) < lease + now then
		redis.call('hset', KEYS[1], ef, lease + now)
	end
	redis.call('hincrby', KEYS[1], ARGV[i] .. ':' .. owner .. ':lock_count', 1)
end
local ttl = redis.call('pttl', KEYS[1])
if not existed or (ttl > 0 and lease > ttl) then
	redis.call('pexpire', KEYS[1], lease)
end
return nil`)
	// KEYS: group, channel. ARGV: owner, lease ms, now ms, fields.
	// Reply: nil when a value was not held (unexpired) by owner, else 1.
	redissonUnlock = redis.NewScript(`
local owner, lease, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('exists', KEYS[1]) == 0 then
	redis.call('publish', KEYS[2], '0')
	return nil
end
local failed = false
for i = 4, #ARGV do
	local ef, cf = ARGV[i] .. ':' .. owner .. ':expire_time', ARGV[i] .. ':' .. owner .. ':lock_count'
	local e = redis.call('hget', KEYS[1], ef)
	if e and tonumber(e) >= now then
		if redis.call('hincrby', KEYS[1], cf, -1) <= 0 then
			redis.call('hdel', KEYS[1], ef, cf, ARGV[i])
		elseif tonumber(e) < lease + now then
			redis.call('hset', KEYS[1], ef, lease + now)
		end
	else
		failed = true
	end
end
if failed then
	return nil
end
redis.call('publish', KEYS[2], '0')
return 1`)
)

// redisson is one played Redisson client thread.
type redisson struct {
	raw   *redis.Client
	owner string // "<version-4 UUID>:<thread id>"
}

func newRedisson(t *testing.T) *redisson {
	return &redisson{raw: srv.Client(t), owner: uuid.NewString() + ":1"}
}

// acquire reports whether Redisson took fields, and otherwise its wait.
func (r *redisson) acquire(t *testing.T, group string, fields ...string) (bool, time.Duration) {
	t.Helper()
	args := []any{30000, time.Now().UnixMilli(), r.owner}
	for _, f := range fields {
		args = append(args, f)
	}
	ms, err := redissonAcquire.Run(bg, r.raw, []string{group}, args...).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return true, 0
	case err != nil:
		t.Fatal(err)
	}
	return false, time.Duration(ms) * time.Millisecond
}

func (r *redisson) unlock(t *testing.T, group string, fields ...string) {
	t.Helper()
	args := []any{r.owner, 30000, time.Now().UnixMilli()}
	for _, f := range fields {
		args = append(args, f)
	}
	if err := redissonUnlock.Run(bg, r.raw, []string{group, "redisson_lock__channel:{" + group + "}"}, args...).Err(); err != nil {
		t.Fatalf("Redisson's unlock: %v", err)
	}
}

// The fields Redisson gave for "Jack_001", "Mary_002" and "Zoë"
// (hash_test.go).
const (
	jackString, maryString, zoeString = "7pNoDdizVy2xY792MaFv+w", "kIX2DFOX4IWct7G7K6tV9A", "Pykx11kquang/juawbnkow"
	jackKryo, maryKryo, zoeKryo       = "DScHoUUqdQJ9J7Ux220rcQ", "+ZZbsYCpCEvhG9irFt/3NQ", "hY2MnbfnfwVXIgzK0RcpUw"
)

// TestRedissonHolds: a Redisson client holds values; relock's try fails
// for any set that shares one, and relock's waiter is woken by
// Redisson's release ("0"), long before the 30s lease.
func TestRedissonHolds(t *testing.T) {
	redistest.Parallel(t)
	srv.RequireReal(t)
	for _, tc := range []struct {
		codec      grouplock.Codec
		jack, mary string
		zoe        string
	}{
		{grouplock.StringCodec, jackString, maryString, zoeString},
		{grouplock.Kryo5Codec, jackKryo, maryKryo, zoeKryo},
	} {
		t.Run(tc.codec.String(), func(t *testing.T) {
			rc := newClient(t, nil)
			group := redistest.Key(t)
			java := newRedisson(t)
			if ok, _ := java.acquire(t, group, tc.jack, tc.zoe); !ok {
				t.Fatal("Redisson could not take a free group")
			}
			mu := grouplock.New(rc, group, []string{"Mary_002", "Zoë"}, &grouplock.Options{Codec: tc.codec})
			if _, err := mu.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
				t.Fatalf("relock took a value Redisson holds: %v", err)
			}
			got := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(bg, 20*time.Second)
				defer cancel()
				lctx, err := mu.Lock(ctx)
				if err == nil {
					err = mu.Unlock(lctx)
				}
				got <- err
			}()
			time.Sleep(200 * time.Millisecond) // let it wait
			released := time.Now()
			java.unlock(t, group, tc.jack, tc.zoe)
			if err := <-got; err != nil {
				t.Fatal(err)
			}
			if d := time.Since(released); d > 5*time.Second {
				t.Errorf("relock's waiter took the values %v after Redisson's release", d)
			}
			// Mary alone was never Redisson's: relock's hold of it is the
			// field Redisson names.
			other := grouplock.New(rc, group, []string{"Mary_002"}, &grouplock.Options{Codec: tc.codec})
			lctx, err := other.Lock(bg)
			if err != nil {
				t.Fatal(err)
			}
			if ok, wait := java.acquire(t, group, tc.mary); ok || wait <= 0 {
				t.Errorf("Redisson took %s while relock holds it (wait %v)", tc.mary, wait)
			}
			redistest.Unlock(t, other, lctx)
		})
	}
}

// TestRelockHolds: relock holds values; Redisson's acquire waits for
// them, bounded by relock's lease, and relock's release wakes Redisson's
// subscriber and lets it in.
func TestRelockHolds(t *testing.T) {
	srv.RequireReal(t)
	rc := newClient(t, nil)
	group := redistest.Key(t)
	mu := grouplock.New(rc, group, []string{"Jack_001", "Mary_002"}, nil) // Kryo5Codec, Redisson's default
	lctx := redistest.Lock(t, mu, bg)
	java := newRedisson(t)
	ok, wait := java.acquire(t, group, maryKryo, zoeKryo)
	if ok || wait < 25*time.Second || wait > 31*time.Second {
		t.Fatalf("Redisson's acquire of a relock-held value: %v, wait %v; want a wait of about 30s", ok, wait)
	}
	sub := srv.Client(t).Subscribe(bg, "redisson_lock__channel:{"+group+"}")
	defer sub.Close()
	if _, err := sub.Receive(bg); err != nil {
		t.Fatal(err)
	}
	redistest.Unlock(t, mu, lctx)
	select {
	case msg := <-sub.Channel():
		if msg.Payload != "1" {
			t.Errorf("release published %q, want \"1\" (wake every waiter)", msg.Payload)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("relock's release published nothing on the group's channel")
	}
	if ok, wait := java.acquire(t, group, maryKryo, zoeKryo); !ok {
		t.Fatalf("Redisson could not take the released values (wait %v)", wait)
	}
	java.unlock(t, group, maryKryo, zoeKryo)
	if n := srv.Client(t).Exists(bg, group).Val(); n != 0 {
		t.Errorf("group left behind: %v", fieldNames(t, group))
	}
}

// TestRedissonExpired: a Redisson holder whose expire_time has passed no
// longer excludes, even while the hash lives; relock takes the value and
// drops the stale holder's fields.
func TestRedissonExpired(t *testing.T) {
	srv.RequireReal(t)
	rc := newClient(t, nil)
	group := redistest.Key(t)
	java := newRedisson(t)
	raw := srv.Client(t)
	if ok, _ := java.acquire(t, group, jackKryo); !ok {
		t.Fatal("Redisson could not take a free group")
	}
	raw.HSet(bg, group, jackKryo+":"+java.owner+":expire_time", time.Now().Add(-time.Second).UnixMilli())
	mu := grouplock.New(rc, group, []string{"Jack_001"}, nil)
	lctx, err := mu.TryLock(bg, 0)
	if err != nil {
		t.Fatalf("relock could not take an expired Redisson hold: %v", err)
	}
	if n := raw.HLen(bg, group).Val(); n != 3 {
		t.Errorf("hash has %d fields, want relock's 3: %v", n, fieldNames(t, group))
	}
	redistest.Unlock(t, mu, lctx)
}
