package inspect_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/semaphore"
)

// redissonPermit adds a permit as Redisson's tryAcquire(lease) does: the
// count decremented, a random 16-byte id scored with its expiry in epoch
// ms. It returns the id in hex.
func redissonPermit(t testing.TB, raw *redis.Client, name string, expiry time.Time) string {
	t.Helper()
	var id [16]byte
	_, _ = rand.Read(id[:])
	bg := context.Background()
	raw.DecrBy(bg, name, 1)
	if err := raw.ZAdd(bg, "{"+name+"}:timeout", redis.Z{Score: float64(expiry.UnixMilli()), Member: string(id[:])}).Err(); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(id[:])
}

// TestPermits reads an expirable semaphore with a relock permit and a
// Redisson one, each with its lease, and a relock waiter.
func TestPermits(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	t.Cleanup(func() { raw.Del(bg, name, "{"+name+"}:timeout") })
	sem := permits.New(newClient(t, srv), name, nil)
	if _, err := sem.TrySetPermits(bg, 2); err != nil {
		t.Fatal(err)
	}
	p, err := sem.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Release(bg) })
	foreign := redissonPermit(t, raw, name, time.Now().Add(time.Hour))
	waiterClient := newClient(t, srv)
	waiter := permits.New(waiterClient, name, nil)
	redistest.Background(t, func(ctx context.Context) {
		if p, err := waiter.Acquire(ctx); err == nil {
			p.Release(bg)
		}
	})
	eventually(t, "a registered waiter", func() bool { return len(read(t, raw, name).SemaphoreWaiters) == 1 })

	l := read(t, raw, name)
	if l.Kind != inspect.KindCount || l.Use != inspect.KindPermits || l.Count == nil || *l.Count != 0 || len(l.Permits) != 2 {
		t.Fatalf("Read = %+v, want a count used as permits, with 0 available and 2 held", l)
	}
	ids := []string{l.Permits[0].ID, l.Permits[1].ID}
	if !slices.Contains(ids, p.ID()) || !slices.Contains(ids, foreign) {
		t.Fatalf("permits %v, want %s and %s", ids, p.ID(), foreign)
	}
	within(t, "the relock permit's lease", time.Duration(l.Permits[0].TTL), 20*time.Second, 30*time.Second)
	within(t, "the Redisson permit's lease", time.Duration(l.Permits[1].TTL), 59*time.Minute, time.Hour)
	w := l.SemaphoreWaiters[0]
	if w.ClientID != waiterClient.ID() || w.Permits != 1 || !strings.HasPrefix(w.Tag, "p") || w.Since.IsZero() {
		t.Fatalf("waiter %+v, want client %s waiting for one permit since some time", w, waiterClient.ID())
	}
}

// TestSemaphoreAndLatch tells a semaphore's count from a latch's by who
// waits on them (Lock.Use), while their kind stays KindCount whoever
// waits, for Read and for Find.
func TestSemaphoreAndLatch(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	rc := newClient(t, srv)
	semName, latchName := redistest.Key(t), redistest.Key(t)
	t.Cleanup(func() { raw.Del(bg, semName, latchName) })
	// kinds returns what Find and Read say name is, and its use.
	kinds := func(name string) (found, kind, use inspect.Kind) {
		t.Helper()
		err := inspect.Find(bg, raw, name, func(n string, k inspect.Kind) error {
			if n == name {
				found = k
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		l := read(t, raw, name)
		return found, l.Kind, l.Use
	}
	check := func(name, state string, wantUse inspect.Kind) {
		t.Helper()
		if found, kind, use := kinds(name); found != inspect.KindCount || kind != inspect.KindCount || use != wantUse {
			t.Fatalf("%s: Find kind %q, Read kind %q use %q; want count, count, %q", state, found, kind, use, wantUse)
		}
	}

	sem := semaphore.New(rc, semName, nil)
	if _, err := sem.TrySetPermits(bg, 0); err != nil {
		t.Fatal(err)
	}
	if l := read(t, raw, semName); *l.Count != 0 {
		t.Fatalf("an idle semaphore = %+v, want a count of 0", l)
	}
	check(semName, "an idle semaphore", "")
	ctx, cancel := context.WithCancel(bg)
	var waiter sync.WaitGroup
	waiter.Go(func() {
		if sem.Acquire(ctx, 2) == nil {
			sem.Release(bg, 2)
		}
	})
	t.Cleanup(func() { cancel(); waiter.Wait() })
	eventually(t, "a semaphore waiter", func() bool { return read(t, raw, semName).Use == inspect.KindSemaphore })
	check(semName, "a semaphore with a waiter", inspect.KindSemaphore)
	l := read(t, raw, semName)
	if len(l.SemaphoreWaiters) != 1 || l.SemaphoreWaiters[0].Permits != 2 || l.SemaphoreWaiters[0].ClientID != rc.ID() {
		t.Fatalf("semaphore waiters %+v, want client %s waiting for 2", l.SemaphoreWaiters, rc.ID())
	}
	cancel()
	waiter.Wait()
	eventually(t, "the waiter gone", func() bool { return len(read(t, raw, semName).SemaphoreWaiters) == 0 })
	// Its use may show a while longer (its client's subscription
	// lingers); its kind does not change.
	if found, kind, _ := kinds(semName); found != inspect.KindCount || kind != inspect.KindCount {
		t.Fatalf("a semaphore whose waiter gave up: Find kind %q, Read kind %q; want count", found, kind)
	}

	done := latch.New(rc, latchName, nil)
	if _, err := done.TrySetCount(bg, 3); err != nil {
		t.Fatal(err)
	}
	check(latchName, "a latch nobody awaits", "")
	redistest.Background(t, func(ctx context.Context) { _ = done.Await(ctx) })
	eventually(t, "a latch awaiter", func() bool { return read(t, raw, latchName).Use == inspect.KindLatch })
	check(latchName, "an awaited latch", inspect.KindLatch)
	if l := read(t, raw, latchName); *l.Count != 3 {
		t.Fatalf("latch = %+v, want a count of 3", l)
	}
}

// TestElection reads an election's leader, term, candidates and history.
func TestElection(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	t.Cleanup(func() {
		raw.Del(bg, "relock_election_term:{"+name+"}", "relock_election_log:{"+name+"}", "relock_election_leader:{"+name+"}")
	})
	first := election.New(newClient(t, srv), name, nil)
	lead, err := first.Campaign(bg, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Resign(lead); err != nil {
		t.Fatal(err)
	}
	leaderClient := newClient(t, srv)
	second := election.New(leaderClient, name, nil)
	lead, err = second.Campaign(bg, "host-b")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Resign(lead) })
	if err := second.Proclaim(lead, "host-b2"); err != nil {
		t.Fatal(err)
	}
	candidate := election.New(newClient(t, srv), name, nil)
	redistest.Background(t, func(ctx context.Context) {
		if lead, err := candidate.Campaign(ctx, "host-c"); err == nil {
			candidate.Resign(lead)
		}
	})
	eventually(t, "a candidate queued", func() bool {
		e := read(t, raw, name).Election
		return e != nil && len(e.Candidates) == 1
	})

	l := read(t, raw, name)
	e := l.Election
	if l.Kind != inspect.KindElection || e.Term != 2 || e.Leader == nil {
		t.Fatalf("Read = %+v, election %+v, want an election at term 2 with a leader", l, e)
	}
	if e.Leader.ClientID != leaderClient.ID() || e.Leader.Value != "host-b2" || e.Leader.Term != 2 || e.Leader.Since.IsZero() || e.Leader.TTL <= 0 {
		t.Fatalf("leader %+v, want client %s, host-b2, term 2, elected at some time, a lease", e.Leader, leaderClient.ID())
	}
	var terms []int64
	var values []string
	for _, c := range e.History {
		terms, values = append(terms, c.Term), append(values, c.Value)
	}
	if !slices.Equal(terms, []int64{2, 2, 1}) || !slices.Equal(values, []string{"host-b2", "host-b", "host-a"}) {
		t.Fatalf("history terms %v values %v, want the proclamation, the second election, the first", terms, values)
	}
	if !e.Leader.Since.Equal(e.History[1].At) {
		t.Fatalf("leader since %v, want its election's time %v", e.Leader.Since, e.History[1].At)
	}
}

// TestFind finds every kind of record, each under its own name, on a
// server of its own.
func TestFind(t *testing.T) {
	s := redistest.Start(t)
	s.RequireReal(t)
	raw := s.Client(t)
	bg := context.Background()
	rc := newClient(t, s)

	raw.HSet(bg, "orders:1", "b6b0f2a4-4d1e-4c3e-9a37-54d5a4e1c9a1:1", 1)
	raw.HSet(bg, "catalog", "mode", "read", "b6b0f2a4-4d1e-4c3e-9a37-54d5a4e1c9a1:1", 1)
	raw.Set(bg, "redisson_lock_token:{orders:2}", 7, 0)
	raw.Set(bg, "hits", 12, 0)
	raw.Set(bg, "jobs:done", "not a count", 0)
	sem := permits.New(rc, "exports", nil)
	if _, err := sem.TrySetPermits(bg, 1); err != nil {
		t.Fatal(err)
	}
	p, err := sem.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Release(bg) })
	e := election.New(rc, "nightly", nil)
	lead, err := e.Campaign(bg, "me")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Resign(lead) })

	type found struct {
		name string
		kind inspect.Kind
	}
	var got []found
	err = inspect.Find(bg, raw, "", func(name string, kind inspect.Kind) error {
		got = append(got, found{name, kind})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b found) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(string(a.kind), string(b.kind)))
	})
	want := []found{
		{"catalog", inspect.KindRWLock}, {"exports", inspect.KindCount}, {"hits", inspect.KindCount},
		{"nightly", inspect.KindElection}, {"orders:1", inspect.KindLock}, {"orders:2", inspect.KindFencing},
		{"relock_election:{nightly}", inspect.KindLock},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Find = %v, want %v", got, want)
	}
	var names []string
	if err := inspect.Find(bg, raw, "orders:*", func(name string, _ inspect.Kind) error {
		names = append(names, name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"orders:1", "orders:2"}) {
		t.Fatalf("Find(orders:*) = %v, want orders:1 and the fencing counter of orders:2", names)
	}
	if err := inspect.Find(bg, raw, "[", func(string, inspect.Kind) error { return nil }); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Fatalf("Find with a bad pattern = %v, want ErrInvalidArgument", err)
	}
}
