package inspect_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// TestReentrant reads a relock reentrant lock held twice by one owner:
// one relock holder, its field split into the client's id and the owner,
// two holds, the watchdog's lease.
func TestReentrant(t *testing.T) {
	rc := newClient(t, srv)
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, nil)
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer mu.Unlock(ctx)
	inner, err := mu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer mu.Unlock(inner)

	l := read(t, srv.Client(t), name)
	if l.Kind != inspect.KindLock || l.Fair || l.Mode != "" || l.Token != 0 || len(l.Queue) != 0 || len(l.Waiters) != 0 || !l.Exists() {
		t.Fatalf("Read = %+v, want a plain held lock", l)
	}
	if len(l.Holders) != 1 {
		t.Fatalf("holders %+v, want one", l.Holders)
	}
	h := l.Holders[0]
	raw := srv.Client(t).HGetAll(context.Background(), name).Val()
	if raw[h.Field] != "2" || h.Holds != 2 {
		t.Fatalf("holder %+v, want the hash's field %v with 2 holds", h, raw)
	}
	if h.ClientID != rc.ID() || h.Field != rc.ID()+":"+h.Owner || h.Owner == "" || h.Library != inspect.Relock || h.Write {
		t.Fatalf("holder %+v, want relock client %s", h, rc.ID())
	}
	within(t, "TTL", time.Duration(l.TTL), 20*time.Second, 30*time.Second)
	within(t, "server time's distance from now", time.Since(l.ServerTime).Abs(), 0, 5*time.Second)
}

// TestFenced reads a fenced lock's counter: one more per acquire,
// re-entry included.
func TestFenced(t *testing.T) {
	rc := newClient(t, srv)
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, &reentrant.Options{Fencing: true})
	t.Cleanup(func() { srv.Client(t).Del(context.Background(), "redisson_lock_token:{"+name+"}") })
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	inner, err := mu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mu.Token(inner)
	if err != nil {
		t.Fatal(err)
	}
	l := read(t, srv.Client(t), name)
	if l.Token != 2 || tok != 2 || len(l.Holders) != 1 || l.Holders[0].Holds != 2 {
		t.Fatalf("Read = %+v (Token %d), want token 2, one holder with 2 holds", l, tok)
	}
	mu.Unlock(inner)
	mu.Unlock(ctx)
	// Free, the counter stays: the lock still exists for an operator.
	l = read(t, srv.Client(t), name)
	if l.Kind != inspect.KindFencing || l.Token != 2 || !l.Exists() || len(l.Holders) != 0 {
		t.Fatalf("after unlock: %+v, want a fencing counter at 2 and no holder", l)
	}
}

// TestRedisson reads a record written exactly as Redisson's RLock writes
// it: a version-4 client id, a thread id, PEXPIRE to the 30s watchdog
// timeout.
func TestRedisson(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	id := uuid.NewString() // version 4, as Redisson's ServiceManager id
	raw.HSet(bg, name, id+":57", 1)
	raw.PExpire(bg, name, 30*time.Second)
	t.Cleanup(func() { raw.Del(bg, name) })

	l := read(t, raw, name)
	if l.Kind != inspect.KindLock || len(l.Holders) != 1 {
		t.Fatalf("Read = %+v, want one holder", l)
	}
	want := inspect.Holder{
		Ident: inspect.Ident{Field: id + ":57", ClientID: id, Owner: "57", Library: inspect.Redisson},
		Holds: 1,
	}
	if h := l.Holders[0]; h.Ident != want.Ident || h.Holds != 1 || h.Write || h.ReadLeases != nil {
		t.Fatalf("holder %+v, want %+v", h, want)
	}
	within(t, "TTL", time.Duration(l.TTL), 25*time.Second, 30*time.Second)
}

// TestFairQueue reads a fair lock with three waiters, each on its own
// client, queued one after another: positions 1 to 3 in arrival order,
// deadlines one wait timeout apart beyond the holder's lease.
func TestFairQueue(t *testing.T) {
	raw := srv.Client(t)
	name := redistest.Key(t)
	holder := fair.New(newClient(t, srv), name, nil)
	hctx, err := holder.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(hctx)
	var ids []string
	for i := range 3 {
		rc := newClient(t, srv)
		mu := fair.New(rc, name, nil)
		waitIn(t, mu.Lock, mu.Unlock)
		locktest.WaitQueued(t, raw, name, rc.ID(), i+1)
		ids = append(ids, rc.ID())
	}

	l := read(t, raw, name)
	if l.Kind != inspect.KindLock || !l.Fair || len(l.Holders) != 1 || len(l.Queue) != 3 {
		t.Fatalf("Read = %+v, want a held fair lock with three queued", l)
	}
	for i, q := range l.Queue {
		if q.Position != i+1 || q.ClientID != ids[i] || q.Library != inspect.Relock || q.Owner == "" {
			t.Fatalf("queue[%d] = %+v, want position %d of client %s", i, q, i+1, ids[i])
		}
		// relock's waiter joins due the lock's TTL (at most its 30s
		// lease) plus one wait timeout per place from now.
		due := q.Deadline.Sub(l.ServerTime)
		lo := time.Duration(i+1)*fair.DefaultWaitTimeout - 5*time.Second
		within(t, "deadline of waiter "+q.Field, due, lo, lo+40*time.Second)
	}
}

// TestRWLock reads a read/write lock held by two readers, then one whose
// writer took a read hold (a downgrade).
func TestRWLock(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	t.Run("Readers", func(t *testing.T) {
		name := redistest.Key(t)
		var ids []string
		for range 2 {
			rc := newClient(t, srv)
			rw := rwlock.New(rc, name, nil)
			ctx, err := rw.RLock(bg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rw.RUnlock(ctx) })
			ids = append(ids, rc.ID())
		}
		l := read(t, raw, name)
		if l.Kind != inspect.KindRWLock || l.Mode != "read" || len(l.Holders) != 2 {
			t.Fatalf("Read = %+v, want two readers", l)
		}
		for _, h := range l.Holders {
			if h.Holds != 1 || h.Write || h.Library != inspect.Relock || (h.ClientID != ids[0] && h.ClientID != ids[1]) {
				t.Fatalf("reader %+v, want one read hold of client %v", h, ids)
			}
			if len(h.ReadLeases) != 1 {
				t.Fatalf("reader %+v: want one read lease", h)
			}
			within(t, "read lease", time.Duration(h.ReadLeases[0]), 20*time.Second, 30*time.Second)
		}
		if l.Holders[0].ClientID == l.Holders[1].ClientID {
			t.Fatalf("readers %+v: want both clients", l.Holders)
		}
	})
	t.Run("Downgrade", func(t *testing.T) {
		name := redistest.Key(t)
		rw := rwlock.New(newClient(t, srv), name, nil)
		owner := relock.WithNewOwner(bg)
		wctx, err := rw.Lock(owner)
		if err != nil {
			t.Fatal(err)
		}
		defer rw.Unlock(wctx)
		rctx, err := rw.RLock(owner)
		if err != nil {
			t.Fatal(err)
		}
		defer rw.RUnlock(rctx)
		rctx2, err := rw.RLock(rctx)
		if err != nil {
			t.Fatal(err)
		}
		defer rw.RUnlock(rctx2)

		l := read(t, raw, name)
		if l.Kind != inspect.KindRWLock || l.Mode != "write" || len(l.Holders) != 2 {
			t.Fatalf("Read = %+v, want a writer with read holds", l)
		}
		w, r := l.Holders[0], l.Holders[1]
		if !w.Write || w.Holds != 1 || w.ReadLeases != nil || r.Write || r.Holds != 2 || r.Ident != w.Ident {
			t.Fatalf("holders %+v, want the writer first, then its two read holds", l.Holders)
		}
		if len(r.ReadLeases) != 2 {
			t.Fatalf("reader %+v: want two read leases", r)
		}
		// A read hold whose own key is gone shows as NoKey.
		raw.Del(bg, "{"+name+"}:"+r.Field+":rwlock_timeout:2")
		if got := read(t, raw, name).Holders[1].ReadLeases; got[1] != inspect.NoKey || got[0] <= 0 {
			t.Fatalf("read leases %v, want the second gone", got)
		}
	})
}

// TestWaiters reads relock's registry of a reentrant lock's waiters.
func TestWaiters(t *testing.T) {
	raw := srv.Client(t)
	name := redistest.Key(t)
	holder := reentrant.New(newClient(t, srv), name, nil)
	hctx, err := holder.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(hctx)
	rc := newClient(t, srv)
	mu := reentrant.New(rc, name, nil)
	waitIn(t, mu.Lock, mu.Unlock)
	fenced := reentrant.New(rc, name, &reentrant.Options{Fencing: true})
	t.Cleanup(func() { raw.Del(context.Background(), "redisson_lock_token:{"+name+"}") })
	var l *inspect.Lock
	eventually(t, "a waiter registered", func() bool {
		l = read(t, raw, name)
		return len(l.Waiters) == 1
	})
	waitIn(t, fenced.Lock, fenced.Unlock)
	eventually(t, "a second waiter registered", func() bool {
		l = read(t, raw, name)
		return len(l.Waiters) == 2
	})
	for i, w := range l.Waiters {
		if w.ClientID != rc.ID() || w.Library != inspect.Relock || w.Fenced != (i == 1) {
			t.Fatalf("waiter %d = %+v, want client %s, fenced %v", i, w, rc.ID(), i == 1)
		}
		within(t, "waiting time", l.ServerTime.Sub(w.Since), 0, 10*time.Second)
	}
	if !l.Waiters[0].Since.Before(l.Waiters[1].Since) {
		t.Fatalf("waiters %+v: want the longest-registered first", l.Waiters)
	}
}

// TestNone reads a name with nothing in Redis, a key that is no record
// of relock's, and an integer that nothing tells whose.
func TestNone(t *testing.T) {
	raw := srv.Client(t)
	name := redistest.Key(t)
	l := read(t, raw, name)
	if l.Kind != inspect.KindNone || l.TTL != inspect.NoKey || l.Exists() || l.Holders == nil || l.Queue == nil || l.Waiters == nil {
		t.Fatalf("Read of nothing = %+v", l)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"none"`, `"ttl_ms":-2`, `"holders":[]`, `"queue":[]`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("JSON %s lacks %s", b, want)
		}
	}

	raw.Set(context.Background(), name, "three", 0)
	t.Cleanup(func() { raw.Del(context.Background(), name) })
	l = read(t, raw, name)
	if l.Kind != inspect.KindOther || l.Type != "string" || l.TTL != inspect.NoExpiry || len(l.Holders) != 0 || !l.Exists() {
		t.Fatalf("Read of a string = %+v", l)
	}
	raw.Set(context.Background(), name, "3", 0)
	l = read(t, raw, name)
	if l.Kind != inspect.KindCount || l.Count == nil || *l.Count != 3 || l.Type != "" {
		t.Fatalf("Read of an integer = %+v, want a count of 3", l)
	}
}

// TestBadInput checks that bad names and clients are errors.
func TestBadInput(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	for _, name := range []string{"", "a{", "a{}b", "a}b"} {
		if _, err := inspect.Read(bg, raw, name); !errors.Is(err, relock.ErrInvalidName) {
			t.Errorf("Read(%q) = %v, want ErrInvalidName", name, err)
		}
	}
	var typedNil *redis.Client
	for _, rdb := range []redis.UniversalClient{nil, typedNil} {
		if _, err := inspect.Read(bg, rdb, "x"); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("Read with %#v = %v, want ErrInvalidArgument", rdb, err)
		}
		if err := inspect.List(bg, rdb, "*", func(string) error { return nil }); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("List with %#v = %v, want ErrInvalidArgument", rdb, err)
		}
	}
	if err := inspect.List(bg, raw, "*", nil); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("List with a nil func = %v, want ErrInvalidArgument", err)
	}
}

// TestTTLJSON checks that TTLs marshal to milliseconds and back.
func TestTTLJSON(t *testing.T) {
	for _, tc := range []struct {
		ttl  inspect.TTL
		json string
	}{
		{inspect.TTL(1500 * time.Millisecond), "1500"},
		{inspect.NoExpiry, "-1"},
		{inspect.NoKey, "-2"},
	} {
		b, err := json.Marshal(tc.ttl)
		if err != nil || string(b) != tc.json {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.ttl, b, err, tc.json)
		}
		var back inspect.TTL
		if err := json.Unmarshal(b, &back); err != nil || back != tc.ttl {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", b, back, err, tc.ttl)
		}
	}
}
