package inspect_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/reentrant"
)

// doctor runs Doctor on rdb or fails t.
func doctor(t testing.TB, rdb redis.UniversalClient, opts *inspect.DoctorOptions) *inspect.Report {
	t.Helper()
	r, err := inspect.Doctor(context.Background(), rdb, opts)
	if err != nil {
		t.Fatalf("Doctor: %v", err)
	}
	return r
}

// only returns the findings of problem p.
func only(r *inspect.Report, p inspect.Problem) []inspect.Finding {
	var out []inspect.Finding
	for _, f := range r.Findings {
		if f.Problem == p {
			out = append(out, f)
		}
	}
	return out
}

// TestDoctorDeadlock deadlocks two owners on two relock clients, each
// holding one reentrant lock and waiting for the other's with TryLock,
// and finds the cycle with both owners and both locks.
func TestDoctorDeadlock(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	rcA, rcB := newClient(t, s), newClient(t, s)
	l1A, l2A := reentrant.New(rcA, "accounts:1", nil), reentrant.New(rcA, "accounts:2", nil)
	l1B, l2B := reentrant.New(rcB, "accounts:1", nil), reentrant.New(rcB, "accounts:2", nil)
	ctxA, err := l1A.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	ctxB, err := l2B.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	// Each waits, bounded, for the lock the other holds, until the test
	// ends and cancels the waits.
	waits, cancel := context.WithCancel(bg)
	var wg sync.WaitGroup
	for _, w := range []struct {
		mu  *reentrant.Mutex
		ctx context.Context
	}{{l2A, ctxA}, {l1B, ctxB}} {
		wg.Go(func() {
			ctx, stop := context.WithCancel(w.ctx)
			defer stop()
			go func() { <-waits.Done(); stop() }()
			if _, err := w.mu.TryLock(ctx, 30*time.Second); err == nil || !errors.Is(err, relock.ErrNotAcquired) {
				t.Errorf("TryLock of the other's lock = %v, want ErrNotAcquired when the test ends", err)
			}
		})
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		l1A.Unlock(ctxA)
		l2B.Unlock(ctxB)
	})
	for _, name := range []string{"accounts:1", "accounts:2"} {
		eventually(t, "a waiter on "+name, func() bool { return raw.Exists(bg, "relock_lock_waiters:{"+name+"}").Val() == 1 })
	}

	r := doctor(t, raw, nil)
	found := only(r, inspect.Deadlock)
	if len(found) != 1 || len(r.Findings) != 1 {
		t.Fatalf("findings %+v, want one deadlock and nothing else", r.Findings)
	}
	d := found[0]
	ownerA, ownerB := holder(t, raw, "accounts:1"), holder(t, raw, "accounts:2")
	if !slices.Equal(d.Owners, sortedPair(ownerA, ownerB)) || d.Name != d.Locks[0] || len(d.Locks) != 2 {
		t.Fatalf("deadlock %+v, want owners %s and %s", d, ownerA, ownerB)
	}
	// Owners[i] waits for Locks[i], held by the next owner.
	for i, o := range d.Owners {
		if want := map[string]string{ownerA: "accounts:2", ownerB: "accounts:1"}[o]; d.Locks[i] != want {
			t.Fatalf("deadlock %+v: %s waits for %s, want %s", d, o, d.Locks[i], want)
		}
	}
	if r.Records != 2 {
		t.Fatalf("read %d records, want the 2 locks", r.Records)
	}
}

// holder returns the one owner field of lock name.
func holder(t testing.TB, raw *redis.Client, name string) string {
	t.Helper()
	fields := raw.HKeys(context.Background(), name).Val()
	if len(fields) != 1 {
		t.Fatalf("%s has fields %v, want one holder", name, fields)
	}
	return fields[0]
}

func sortedPair(a, b string) []string {
	p := []string{a, b}
	slices.Sort(p)
	return p
}

// TestDoctorRedisson finds what Redisson's records (written as its
// scripts write them) and gone clients leave: a hold no watchdog
// renews, a fair-queue entry past its deadline whose waiter is gone, a
// relock waiter registration of a gone client, an expired permit; and,
// given when holds were first seen, an old hold. A cycle through a
// Redisson fair waiter is a deadlock (TestDoctorRedissonCycle).
func TestDoctorRedisson(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	redisson, queued := uuid.NewString()+":77", uuid.NewString()+":78"
	gone := relockField(t)

	// A Redisson hold with 5s left of a 30s lease: no watchdog renews it.
	raw.HSet(bg, "stale", redisson, 1)
	raw.PExpire(bg, "stale", 5*time.Second)
	// A fair lock held with a watchdog's lease, its queue head a Redisson
	// waiter whose deadline passed and who listens on nothing.
	raw.HSet(bg, "printer", gone, 1)
	raw.PExpire(bg, "printer", 30*time.Second)
	raw.RPush(bg, "redisson_lock_queue:{printer}", queued)
	raw.ZAdd(bg, "redisson_lock_timeout:{printer}", redis.Z{Score: float64(time.Now().Add(-time.Minute).UnixMilli()), Member: queued})
	// A relock waiter registered on a held lock, its client gone.
	raw.HSet(bg, "orders:9", redisson, 1)
	raw.PExpire(bg, "orders:9", 30*time.Second)
	raw.ZAdd(bg, "relock_lock_waiters:{orders:9}", redis.Z{Score: float64(time.Now().UnixMicro()), Member: gone})
	// An expirable semaphore with a Redisson permit whose lease passed.
	raw.Set(bg, "exports", 0, 0)
	expired := redissonPermit(t, raw, "exports", time.Now().Add(-2*time.Second))

	seen := map[string]time.Time{"orders:9 " + redisson: time.Now().Add(-time.Hour)}
	r := doctor(t, raw, &inspect.DoctorOptions{Seen: seen})
	type key struct {
		problem inspect.Problem
		name    string
		owner   string
	}
	var got []key
	for _, f := range r.Findings {
		got = append(got, key{f.Problem, f.Name, f.Owners[0]})
	}
	want := []key{
		{inspect.ExpiredPermit, "exports", expired},
		{inspect.GoneHolder, "printer", gone},
		{inspect.GoneWaiter, "orders:9", gone},
		{inspect.GoneWaiter, "printer", queued},
		{inspect.NotRenewed, "stale", redisson},
		{inspect.OldHold, "orders:9", redisson},
		{inspect.StaleQueueEntry, "printer", queued},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("findings %v, want %v; in full: %+v", got, want, r.Findings)
	}
	if first, ok := r.Seen["orders:9 "+redisson]; !ok || !first.Equal(seen["orders:9 "+redisson]) {
		t.Fatalf("Seen %v keeps no first sighting of the old hold", r.Seen)
	}
	if r := doctor(t, raw, &inspect.DoctorOptions{Pattern: "nothing*"}); len(r.Findings) != 0 || r.Records != 0 {
		t.Fatalf("Doctor of a pattern matching nothing = %+v", r)
	}
}

// relockField returns a relock owner field of a client that does not
// exist: a version-8 UUID.
func relockField(t testing.TB) string {
	t.Helper()
	u := uuid.New()
	u[6] = u[6]&0x0f | 0x80
	return u.String() + ":" + strconv.Itoa(1)
}

// TestDoctorHealthy finds nothing wrong with live relock holds, waiters
// and permits.
func TestDoctorHealthy(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	rc := newClient(t, s)
	mu := reentrant.New(rc, "busy", nil)
	ctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mu.Unlock(ctx) })
	waiter := reentrant.New(newClient(t, s), "busy", nil)
	waitIn(t, waiter.Lock, waiter.Unlock)
	eventually(t, "a registered waiter", func() bool { return raw.Exists(bg, "relock_lock_waiters:{busy}").Val() == 1 })
	sem := permits.New(rc, "exports", nil)
	if _, err := sem.TrySetPermits(bg, 1); err != nil {
		t.Fatal(err)
	}
	p, err := sem.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Release(bg) })
	// The holder's client listens on its channel from its first hold
	// on, subscribing in the background.
	listening(t, raw, rc.ID())
	if r := doctor(t, raw, nil); len(r.Findings) != 0 || r.Records != 2 || len(r.Seen) != 2 {
		t.Fatalf("Doctor = %+v, want no findings in 2 records, 2 holds seen", r)
	}
	if _, err := inspect.Doctor(bg, raw, &inspect.DoctorOptions{Old: -1}); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Fatalf("Doctor with a negative Old = %v, want ErrInvalidArgument", err)
	}
}

// TestDoctorRedissonCycle finds a deadlock between a Redisson thread,
// which holds one lock and waits in another's fair queue, and a relock
// owner, which holds that one and is registered waiting for the first.
func TestDoctorRedissonCycle(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	redisson, owner := uuid.NewString()+":5", relockField(t)
	raw.HSet(bg, "a", redisson, 1)
	raw.PExpire(bg, "a", 30*time.Second)
	raw.HSet(bg, "b", owner, 1)
	raw.PExpire(bg, "b", 30*time.Second)
	raw.RPush(bg, "redisson_lock_queue:{b}", redisson)
	raw.ZAdd(bg, "redisson_lock_timeout:{b}", redis.Z{Score: float64(time.Now().Add(5 * time.Minute).UnixMilli()), Member: redisson})
	raw.ZAdd(bg, "relock_lock_waiters:{a}", redis.Z{Score: float64(time.Now().UnixMicro()), Member: owner})
	found := only(doctor(t, raw, nil), inspect.Deadlock)
	if len(found) != 1 || !slices.Equal(found[0].Owners, sortedPair(redisson, owner)) {
		t.Fatalf("deadlocks %+v, want one between %s and %s", found, redisson, owner)
	}
}

// TestDoctorHolderQueued finds a fair lock's holder that is also in its
// queue (the state relock's fair acquire left when the holder and the
// waiters ahead had crashed), which stalls the waiters behind it a lease.
func TestDoctorHolderQueued(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	holder := uuid.NewString()[:14] + "8" + uuid.NewString()[15:] + ":1"
	behind := uuid.NewString()[:14] + "8" + uuid.NewString()[15:] + ":2"
	raw.HSet(bg, "printer", holder, 1)
	raw.PExpire(bg, "printer", 25*time.Second)
	raw.RPush(bg, "redisson_lock_queue:{printer}", behind, holder)
	now := time.Now()
	raw.ZAdd(bg, "redisson_lock_timeout:{printer}",
		redis.Z{Score: float64(now.Add(time.Minute).UnixMilli()), Member: behind},
		redis.Z{Score: float64(now.Add(2 * time.Minute).UnixMilli()), Member: holder})
	got := only(doctor(t, raw, nil), inspect.HolderQueued)
	if len(got) != 1 || got[0].Name != "printer" || !slices.Equal(got[0].Owners, []string{holder}) {
		t.Fatalf("holder-queued findings %+v, want one for %s on printer", got, holder)
	}
	raw.LRem(bg, "redisson_lock_queue:{printer}", 0, holder)
	raw.ZRem(bg, "redisson_lock_timeout:{printer}", holder)
	if got := only(doctor(t, raw, nil), inspect.HolderQueued); len(got) != 0 {
		t.Fatalf("holder-queued findings %+v once the holder left the queue", got)
	}
}
