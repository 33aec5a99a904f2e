package reentrant_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestLayout pins Redisson's RLock layout: hash <name>, field
// <client id>:<owner> counting holds, PTTL at the lease, DEL and a "0" on
// redisson_lock__channel:{<name>} at the last unlock.
func TestLayout(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, nil)

	sub := raw.Subscribe(bg, channelOf(name))
	defer sub.Close()
	if _, err := sub.Receive(bg); err != nil { // subscription confirmed
		t.Fatal(err)
	}

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

	inner := redistest.Lock(t, mu, ctx)
	if v := raw.HGet(bg, name, field).Val(); v != "2" {
		t.Fatalf("after nested Lock: field = %s, want 2", v)
	}
	redistest.Unlock(t, mu, inner)
	if v := raw.HGet(bg, name, field).Val(); v != "1" {
		t.Fatalf("after inner Unlock: field = %s, want 1", v)
	}
	if n := raw.Exists(bg, name).Val(); n != 1 {
		t.Fatal("inner Unlock deleted the lock")
	}
	redistest.Unlock(t, mu, ctx)
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("last Unlock left the lock key")
	}
	rctx, cancel := context.WithTimeout(bg, 2*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(rctx)
	if err != nil {
		t.Fatalf("no release message: %v", err)
	}
	if msg.Payload != "0" {
		t.Fatalf("release message %q, want 0", msg.Payload)
	}
}

// TestLayoutFixedLease checks that a fixed lease is the key's PTTL.
func TestLayoutFixedLease(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, &reentrant.Options{Lease: 10 * time.Second})
	ctx := redistest.Lock(t, mu, context.Background())
	defer redistest.Unlock(t, mu, ctx)
	if pttl := raw.PTTL(context.Background(), name).Val(); pttl < 9*time.Second || pttl > 10*time.Second {
		t.Fatalf("PTTL %v, want about 10s", pttl)
	}
}

// TestLayoutFencing checks redisson_lock_token:{<name>}: incremented by
// every acquire, re-entry included, never deleted, and the token the
// hold reports.
func TestLayoutFencing(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	tokenKey := "redisson_lock_token:{" + name + "}"
	mu := reentrant.New(rc, name, &reentrant.Options{Fencing: true})

	want := int64(0)
	check := func(ctx context.Context) {
		t.Helper()
		want++
		got, err := raw.Get(bg, tokenKey).Int64()
		if err != nil || got != want {
			t.Fatalf("%s = %d (%v), want %d", tokenKey, got, err, want)
		}
		tok, err := mu.Token(ctx)
		if err != nil || tok != want {
			t.Fatalf("Token = %d (%v), want %d", tok, err, want)
		}
	}
	ctx := redistest.Lock(t, mu, bg)
	check(ctx)
	inner := redistest.Lock(t, mu, ctx)
	check(inner)
	redistest.Unlock(t, mu, inner)
	redistest.Unlock(t, mu, ctx)
	if _, err := mu.Token(ctx); err == nil {
		t.Fatal("Token after the last Unlock: want an error")
	}
	ctx = redistest.Lock(t, mu, bg)
	check(ctx)
	redistest.Unlock(t, mu, ctx)
	if ttl := raw.TTL(bg, tokenKey).Val(); ttl != -1 {
		t.Fatalf("token key TTL %v, want none", ttl)
	}
	raw.Del(bg, tokenKey)
}

// TestLayoutHashTag checks derived names for a lock name with its own hash
// tag: the channel keeps the name as is.
func TestLayoutHashTag(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := "{" + redistest.Key(t) + "}:orders"
	sub := raw.Subscribe(bg, "redisson_lock__channel:"+name)
	defer sub.Close()
	if _, err := sub.Receive(bg); err != nil {
		t.Fatal(err)
	}
	mu := reentrant.New(rc, name, nil)
	redistest.Unlock(t, mu, redistest.Lock(t, mu, bg))
	rctx, cancel := context.WithTimeout(bg, 2*time.Second)
	defer cancel()
	if msg, err := sub.ReceiveMessage(rctx); err != nil || msg.Payload != "0" {
		t.Fatalf("release message on redisson_lock__channel:%s: %v %v", name, msg, err)
	}
}
