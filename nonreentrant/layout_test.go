package nonreentrant_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/nonreentrant"
)

// subscribe subscribes raw to channel; it closes when t ends.
func subscribe(t *testing.T, raw *redis.Client, channel string) *redis.PubSub {
	t.Helper()
	sub := raw.Subscribe(context.Background(), channel)
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(context.Background()); err != nil { // confirmed
		t.Fatal(err)
	}
	return sub
}

// released fails t unless sub receives Redisson's release message, "0".
func released(t *testing.T, sub *redis.PubSub, after string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil || msg.Payload != "0" {
		t.Fatalf("after %s: message %v (%v), want \"0\"", after, msg, err)
	}
}

// TestLayout pins RedissonNonReentrantLock's layout, RLock's hash: key
// <name>, field <client id>:<owner> = 1 and PTTL at the lease, untouched
// by a refused re-acquire; the key deleted and "0" published on
// redisson_lock__channel:{<name>} by Unlock and by ForceUnlock.
func TestLayout(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	mu := nonreentrant.New(rc, name, nil)
	sub := subscribe(t, raw, channelOf(name))

	ctx := redistest.Lock(t, mu, bg)
	fields := raw.HGetAll(bg, name).Val()
	if len(fields) != 1 {
		t.Fatalf("after Lock: HGETALL %s = %v, want one field", name, fields)
	}
	var field string
	for f, v := range fields {
		field = f
		if v != "1" {
			t.Fatalf("after Lock: field %s = %s, want 1", f, v)
		}
	}
	owner, ok := strings.CutPrefix(field, rc.ID()+":")
	if !ok {
		t.Fatalf("field %q does not start with the client ID %q", field, rc.ID())
	}
	if _, err := strconv.ParseInt(owner, 10, 64); err != nil {
		t.Fatalf("field %q: owner part %q is not an integer", field, owner)
	}
	if pttl := raw.PTTL(bg, name).Val(); pttl < 29*time.Second || pttl > 30*time.Second {
		t.Fatalf("after Lock: PTTL %v, want about the 30s watchdog lease", pttl)
	}

	raw.PExpire(bg, name, 20*time.Second)
	if _, err := mu.Lock(ctx); !errors.Is(err, relock.ErrNotReentrant) {
		t.Fatalf("second Lock = %v, want ErrNotReentrant", err)
	}
	if v := raw.HGet(bg, name, field).Val(); v != "1" {
		t.Fatalf("after a refused Lock: field = %s, want 1", v)
	}
	if pttl := raw.PTTL(bg, name).Val(); pttl > 20*time.Second {
		t.Fatalf("after a refused Lock: PTTL %v, want it untouched (at most 20s)", pttl)
	}
	if n, err := mu.HoldCount(ctx); err != nil || n != 1 {
		t.Fatalf("HoldCount = %d (%v), want 1", n, err)
	}
	redistest.Unlock(t, mu, ctx)
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("Unlock left the lock key")
	}
	released(t, sub, "Unlock")

	redistest.Lock(t, mu, bg)
	other := nonreentrant.New(newClient(t, nil), name, nil)
	if ok, err := other.ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v; want true", ok, err)
	}
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("ForceUnlock left the lock key")
	}
	released(t, sub, "ForceUnlock")
}

// TestLayoutFixedLease: a fixed lease is the key's PTTL.
func TestLayoutFixedLease(t *testing.T) {
	raw := srv.Client(t)
	name := redistest.Key(t)
	mu := nonreentrant.New(newClient(t, nil), name, &nonreentrant.Options{Lease: 10 * time.Second})
	ctx := redistest.Lock(t, mu, context.Background())
	defer redistest.Unlock(t, mu, ctx)
	if pttl := raw.PTTL(context.Background(), name).Val(); pttl < 9*time.Second || pttl > 10*time.Second {
		t.Fatalf("PTTL %v, want about 10s", pttl)
	}
}

// TestRefusedInRedis: an owner whose field is in the hash while its
// client keeps no record of the hold (a hold whose reply was lost) is
// refused by the acquire script, NON_REENTRANT_REACQUIRE, and the refusal
// leaves the hold as it is: neither deleted nor passed to a waiter.
func TestRefusedInRedis(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	mu := nonreentrant.New(newClient(t, nil), name, nil)
	owner := relock.WithNewOwner(bg)
	field := "" // the owner's field, as the lock writes it
	ctx := redistest.Lock(t, mu, owner)
	for f := range raw.HGetAll(bg, name).Val() {
		field = f
	}
	redistest.Unlock(t, mu, ctx)
	// The hold Redis has and the client does not.
	raw.HSet(bg, name, field, 1)
	raw.PExpire(bg, name, 30*time.Second)

	for _, wait := range []time.Duration{0, time.Minute} {
		start := time.Now()
		if _, err := mu.TryLock(owner, wait); !errors.Is(err, relock.ErrNotReentrant) {
			t.Fatalf("TryLock(%v) with the hold in Redis = %v, want ErrNotReentrant", wait, err)
		}
		if took := time.Since(start); took > time.Second {
			t.Fatalf("TryLock(%v) refused after %v: it waited", wait, took)
		}
		if fields := raw.HGetAll(bg, name).Val(); len(fields) != 1 || fields[field] != "1" {
			t.Fatalf("after a refusal: fields %v, want %s = 1", fields, field)
		}
	}
	if n := raw.Exists(bg, "relock_lock_waiters:{"+name+"}").Val(); n != 0 {
		t.Fatal("a refused Lock left a registry entry")
	}
	raw.Del(bg, name)
}
