package spinlock_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/spinlock"
)

// listen subscribes raw to every channel of the server (PSUBSCRIBE *), so
// that a test sees anything published; it closes when t ends.
func listen(t *testing.T, raw *redis.Client) *redis.PubSub {
	t.Helper()
	sub := raw.PSubscribe(context.Background(), "*")
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(context.Background()); err != nil { // confirmed
		t.Fatal(err)
	}
	return sub
}

// silent fails t if sub receives a message within quiet.
func silent(t *testing.T, sub *redis.PubSub, quiet time.Duration, after string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), quiet)
	defer cancel()
	if msg, err := sub.ReceiveMessage(ctx); err == nil {
		t.Fatalf("after %s: message %q on %s, want nothing published", after, msg.Payload, msg.Channel)
	}
}

// TestLayout pins Redisson's RSpinLock layout, RLock's hash: key <name>,
// field <client id>:<owner> counting holds, PTTL at the lease, reset by
// re-entry, the key deleted by the last unlock; and nothing published by
// Lock, Unlock or ForceUnlock on any channel.
func TestLayout(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	mu := spinlock.New(rc, name, nil)
	sub := listen(t, raw)

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
	inner := redistest.Lock(t, mu, ctx)
	if v := raw.HGet(bg, name, field).Val(); v != "2" {
		t.Fatalf("after nested Lock: field = %s, want 2", v)
	}
	if pttl := raw.PTTL(bg, name).Val(); pttl < 29*time.Second {
		t.Fatalf("after nested Lock: PTTL %v, want the lease again", pttl)
	}
	redistest.Unlock(t, mu, inner)
	if v := raw.HGet(bg, name, field).Val(); v != "1" {
		t.Fatalf("after inner Unlock: field = %s, want 1", v)
	}
	redistest.Unlock(t, mu, ctx)
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("last Unlock left the lock key")
	}
	silent(t, sub, 300*time.Millisecond, "Lock and Unlock")

	redistest.Lock(t, mu, bg)
	other := spinlock.New(newClient(t, nil), name, nil)
	if ok, err := other.ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v; want true", ok, err)
	}
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("ForceUnlock left the lock key")
	}
	silent(t, sub, 300*time.Millisecond, "ForceUnlock")
}

// TestLayoutFixedLease: a fixed lease is the key's PTTL, and a re-entry
// sets it again.
func TestLayoutFixedLease(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	mu := spinlock.New(rc, name, &spinlock.Options{Lease: 10 * time.Second})
	ctx := redistest.Lock(t, mu, bg)
	defer redistest.Unlock(t, mu, ctx)
	if pttl := raw.PTTL(bg, name).Val(); pttl < 9*time.Second || pttl > 10*time.Second {
		t.Fatalf("PTTL %v, want about 10s", pttl)
	}
	raw.PExpire(bg, name, 5*time.Second)
	redistest.Unlock(t, mu, redistest.Lock(t, mu, ctx))
	if pttl := raw.PTTL(bg, name).Val(); pttl < 9*time.Second || pttl > 10*time.Second {
		t.Fatalf("PTTL after a re-entry and its unlock %v, want about 10s", pttl)
	}
}

// TestLayoutHashTag: a name with its own hash tag is the key as it is.
func TestLayoutHashTag(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := "{" + redistest.Key(t) + "}:orders"
	mu := spinlock.New(rc, name, nil)
	ctx := redistest.Lock(t, mu, bg)
	if n := raw.HLen(bg, name).Val(); n != 1 {
		t.Fatalf("HLEN %s = %d, want 1", name, n)
	}
	redistest.Unlock(t, mu, ctx)
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("Unlock left the lock key")
	}
}
