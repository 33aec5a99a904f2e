package rwlock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
	"github.com/relock-go/relock/rwlock"
)

// TestReadersShareWriterExcludes: readers on different clients hold the
// lock together; a writer waits for the last of them and then holds it
// alone; readers wait while it does.
func TestReadersShareWriterExcludes(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	const readers = 4
	rws := make([]*rwlock.RWMutex, readers)
	rctxs := make([]context.Context, readers)
	for i := range readers {
		rws[i] = rwlock.New(newClient(t, nil), name, nil)
		ctx, err := rws[i].TryRLock(bg, 0)
		rctxs[i] = must(t)(ctx, err)
	}
	writer := rwlock.New(newClient(t, nil), name, nil)
	if _, err := writer.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock with readers in = %v, want ErrNotAcquired", err)
	}
	var wctx atomic.Value
	got := make(chan struct{})
	go func() {
		ctx, err := writer.Lock(bg)
		if err != nil {
			t.Error(err)
		} else {
			wctx.Store(ctx)
		}
		close(got)
	}()
	for i := range readers {
		time.Sleep(20 * time.Millisecond)
		select {
		case <-got:
			t.Fatalf("writer got in with %d readers left", readers-i)
		default:
		}
		if err := rws[i].RUnlock(rctxs[i]); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("writer not in after the last reader left")
	}
	if _, err := rws[0].TryRLock(bg, 100*time.Millisecond); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryRLock while a writer holds = %v, want ErrNotAcquired", err)
	}
	if err := writer.Unlock(wctx.Load().(context.Context)); err != nil {
		t.Fatal(err)
	}
	if n := srv.Client(t).Exists(bg, name).Val(); n != 0 {
		t.Fatal("lock left after the writer left")
	}
}

// TestWriteUnlockWakesAllReaders: readers waiting on a writer, several on
// one client, all get in together when it leaves: woken by the "1"
// message, not one by one and not by their 30s TTL.
func TestWriteUnlockWakesAllReaders(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	writer := rwlock.New(newClient(t, nil), name, nil)
	wctx := must(t)(writer.Lock(bg))
	clients := []*relock.Client{newClient(t, nil), newClient(t, nil)}
	const readers = 8
	raw := srv.Client(t)
	var wg sync.WaitGroup
	acquired := make(chan time.Time, readers)
	for i := range readers {
		rw := rwlock.New(clients[i%2], name, nil)
		wg.Go(func() {
			ctx, err := rw.RLock(bg)
			acquired <- time.Now()
			if err != nil {
				t.Error(err)
				return
			}
			<-wctx.Done()
			_ = rw.RUnlock(ctx)
		})
	}
	eventually(t, 5*time.Second, "readers subscribed", func() bool {
		return raw.PubSubNumSub(bg, "redisson_rwlock:{"+name+"}").Val()["redisson_rwlock:{"+name+"}"] == 2
	})
	time.Sleep(50 * time.Millisecond) // let every reader's retry after subscribing land
	released := time.Now()
	if err := writer.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
	var last time.Duration
	for range readers {
		select {
		case at := <-acquired:
			last = max(last, at.Sub(released))
		case <-time.After(5 * time.Second):
			t.Fatal("a reader was not woken by the write unlock")
		}
	}
	t.Logf("all %d readers in %v after the write unlock", readers, last)
	if last > time.Second {
		t.Fatalf("last reader got in %v after the write unlock: not woken at once", last)
	}
	wg.Wait()
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("lock left after every reader left")
	}
}

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

// TestReentrancyAndDowngrade: nested holds count on each side; a writer
// may take read holds and keeps them after its write holds go; a reader
// asking for the write lock is refused at once.
func TestReentrancyAndDowngrade(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	rw := rwlock.New(newClient(t, nil), name, nil)
	other := rwlock.New(newClient(t, nil), name, nil)

	// The read hold is taken with the owner's context, not the write
	// hold's: a context derived from the write hold's ends with it.
	owner := relock.WithNewOwner(bg)
	w := must(t)(rw.Lock(owner))
	r := must(t)(rw.RLock(owner)) // downgrade: read hold under the write hold
	if n, _ := rw.Reader().HoldCount(r); n != 1 {
		t.Fatalf("read holds under the write hold = %d, want 1", n)
	}
	if n, _ := rw.Writer().HoldCount(r); n != 1 {
		t.Fatalf("write holds = %d, want 1", n)
	}
	if err := rw.Unlock(w); err != nil {
		t.Fatal(err)
	}
	if mode := raw.HGet(bg, name, "mode").Val(); mode != "read" {
		t.Fatalf("mode after the write hold went = %q, want read", mode)
	}
	if r.Err() != nil {
		t.Fatal("read hold's context ended with the write hold")
	}
	// Other readers may now join; a writer may not.
	or := must(t)(other.TryRLock(bg, 0))
	if _, err := other.TryLock(relock.WithNewOwner(bg), 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock in read mode = %v", err)
	}
	if err := other.RUnlock(or); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, err := rw.Lock(r)
	if !errors.Is(err, relock.ErrUpgrade) {
		t.Fatalf("Lock by a reader = %v, want ErrUpgrade", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("upgrade refused after %v, want at once", took)
	}
	r2 := must(t)(rw.RLock(r))
	if n, _ := rw.Reader().HoldCount(r2); n != 2 {
		t.Fatalf("nested read holds = %d, want 2", n)
	}
	for _, c := range []context.Context{r2, r} {
		if err := rw.RUnlock(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.RUnlock(r); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("extra RUnlock = %v, want ErrNotHeld", err)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("lock left")
	}
}

// TestForceUnlockSides: each side's ForceUnlock clears only its own mode.
func TestForceUnlockSides(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	rw := rwlock.New(newClient(t, nil), name, nil)
	other := rwlock.New(newClient(t, nil), name, nil)

	w := must(t)(rw.Lock(bg))
	if ok, err := other.Reader().ForceUnlock(bg); err != nil || ok {
		t.Fatalf("read side's ForceUnlock of a write hold = %v, %v; want false", ok, err)
	}
	if locked, _ := other.Writer().IsLocked(bg); !locked || w.Err() != nil {
		t.Fatal("read side's ForceUnlock cleared the write hold")
	}
	if ok, err := other.Writer().ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("write side's ForceUnlock = %v, %v; want true", ok, err)
	}
	r := must(t)(rw.RLock(bg))
	if ok, err := other.Writer().ForceUnlock(bg); err != nil || ok {
		t.Fatalf("write side's ForceUnlock of read holds = %v, %v; want false", ok, err)
	}
	if locked, _ := other.Reader().IsLocked(bg); !locked || r.Err() != nil {
		t.Fatal("write side's ForceUnlock cleared the read holds")
	}
	if ok, err := other.ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("RWMutex.ForceUnlock of read holds = %v, %v; want true", ok, err)
	}
	if locked, _ := other.Reader().IsLocked(bg); locked {
		t.Fatal("lock still held after ForceUnlock")
	}
}
