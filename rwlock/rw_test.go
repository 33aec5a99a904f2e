package rwlock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/rwlock"
)

// TestLayout pins Redisson's RReadWriteLock layout.
func TestLayout(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	channel := "redisson_rwlock:{" + name + "}"
	sub := raw.Subscribe(bg, channel)
	defer sub.Close()
	if _, err := sub.Receive(bg); err != nil {
		t.Fatal(err)
	}
	message := func(want string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(bg, 2*time.Second)
		defer cancel()
		msg, err := sub.ReceiveMessage(ctx)
		if err != nil || msg.Payload != want {
			t.Fatalf("message on %s: %v %v, want %q", channel, msg, err, want)
		}
	}
	rc := newClient(t, nil)
	rw := rwlock.New(rc, name, &rwlock.Options{Lease: 20 * time.Second})
	owner := relock.WithNewOwner(bg)

	r1 := must(t)(rw.RLock(owner))
	r2 := must(t)(rw.RLock(r1))
	fields := raw.HGetAll(bg, name).Val()
	var reader string
	for f := range fields {
		if strings.HasPrefix(f, rc.ID()+":") {
			reader = f
		}
	}
	if len(fields) != 2 || fields["mode"] != "read" || fields[reader] != "2" {
		t.Fatalf("after two RLocks: %v, want mode=read and %s:<owner>=2", fields, rc.ID())
	}
	for i := 1; i <= 3; i++ {
		key := "{" + name + "}:" + reader + ":rwlock_timeout:" + string(rune('0'+i))
		ttl := raw.PTTL(bg, key).Val()
		if i <= 2 && (raw.Get(bg, key).Val() != "1" || ttl < 19*time.Second || ttl > 20*time.Second) {
			t.Fatalf("read hold %d: %s = %q, PTTL %v; want 1 with the 20s lease", i, key, raw.Get(bg, key).Val(), ttl)
		}
		if i == 3 && raw.Exists(bg, key).Val() != 0 {
			t.Fatalf("%s exists with two holds", key)
		}
	}
	if ttl := raw.PTTL(bg, name).Val(); ttl < 19*time.Second || ttl > 20*time.Second {
		t.Fatalf("hash PTTL %v, want the 20s lease", ttl)
	}
	if err := rw.RUnlock(r2); err != nil {
		t.Fatal(err)
	}
	if raw.Exists(bg, "{"+name+"}:"+reader+":rwlock_timeout:2").Val() != 0 || raw.HGet(bg, name, reader).Val() != "1" {
		t.Fatal("inner RUnlock kept hold 2's timeout key or the count")
	}
	if err := rw.RUnlock(r1); err != nil {
		t.Fatal(err)
	}
	message("0")
	if n := raw.Exists(bg, name, "{"+name+"}:"+reader+":rwlock_timeout:1").Val(); n != 0 {
		t.Fatal("lock hash or timeout key left after the last RUnlock")
	}

	w1 := must(t)(rw.Lock(owner))
	w2 := must(t)(rw.Lock(w1))
	writer := reader + ":write"
	if fields := raw.HGetAll(bg, name).Val(); len(fields) != 2 || fields["mode"] != "write" || fields[writer] != "2" {
		t.Fatalf("after two Locks: %v, want mode=write and %s=2", fields, writer)
	}
	if err := rw.Unlock(w2); err != nil {
		t.Fatal(err)
	}
	if err := rw.Unlock(w1); err != nil {
		t.Fatal(err)
	}
	message("1")
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("lock hash left after the last Unlock")
	}
}

// TestForceUnlockTimeoutKeys: ForceUnlock of a lock its writer holds
// twice and has downgraded twice deletes the hash and the two read holds'
// timeout keys, and no key for the write holds, which have none.
func TestForceUnlockTimeoutKeys(t *testing.T) {
	srv.RequireReal(t) // INFO commandstats
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	rc := newClient(t, nil)
	rw := rwlock.New(rc, name, nil)
	w := must(t)(rw.Lock(relock.WithNewOwner(bg)))
	w = must(t)(rw.Lock(w))
	r := must(t)(rw.RLock(w))
	must(t)(rw.RLock(r))
	reader := ""
	for f := range raw.HGetAll(bg, name).Val() {
		if f != "mode" && !strings.HasSuffix(f, ":write") {
			reader = f
		}
	}
	timeouts := []string{"{" + name + "}:" + reader + ":rwlock_timeout:1", "{" + name + "}:" + reader + ":rwlock_timeout:2"}
	if n := raw.Exists(bg, timeouts...).Val(); reader == "" || n != 2 {
		t.Fatalf("reader field %q, %d of its timeout keys exist; want 2", reader, n)
	}
	before := redistest.CommandCalls(t, raw)["del"]
	if ok, err := rw.ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v; want true", ok, err)
	}
	if n := raw.Exists(bg, append(timeouts, name)...).Val(); n != 0 {
		t.Fatalf("%d of the hash and its timeout keys left", n)
	}
	if dels := redistest.CommandCalls(t, raw)["del"] - before; dels != 3 {
		t.Fatalf("ForceUnlock ran DEL %d times, want 3 (two timeout keys and the hash)", dels)
	}
}

// TestClient: an RWMutex and both its sides name the client it was
// built on; a nil or zero RWMutex, none.
func TestClient(t *testing.T) {
	rc := newClient(t, nil)
	rw := rwlock.New(rc, redistest.Key(t), nil)
	if rw.Client() != rc || rw.Reader().Client() != rc || rw.Writer().Client() != rc {
		t.Fatalf("Client() = %p, sides %p %p; want %p", rw.Client(), rw.Reader().Client(), rw.Writer().Client(), rc)
	}
	if c := (*rwlock.RWMutex)(nil).Client(); c != nil {
		t.Fatalf("nil RWMutex's Client() = %p, want nil", c)
	}
	if c := new(rwlock.RWMutex).Client(); c != nil {
		t.Fatalf("zero RWMutex's Client() = %p, want nil", c)
	}
}
