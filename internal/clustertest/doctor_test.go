package clustertest_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/clitest"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/semaphore"
)

// TestFindEveryMaster makes a record of every kind on every master (a
// held lock, a fair lock with a queued waiter, a semaphore with a
// waiter, expirable permits with one held, a latch with an awaiter, an
// election with a leader) and finds each with its kind: with inspect.Find,
// which scans master after master, and with the relock command's list
// and inspect -json on -cluster.
func TestFindEveryMaster(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t)
	bg := context.Background()
	rc := newClient(t, c.LockClient(t), nil)
	other := newClient(t, c.LockClient(t), nil)
	base := redistest.Key(t)

	want := map[string]inspect.Kind{} // every record, by name
	master := map[string]string{}     // where each record's slot lives
	each := func(kind string, create func(name string) inspect.Kind) {
		t.Helper()
		for m, name := range namesOnEachMaster(t, c, rdb, base+":"+kind) {
			want[name], master[name] = create(name), m
		}
	}
	each("lock", func(name string) inspect.Kind {
		mu := reentrant.New(rc, name, nil)
		ctx := held(t)(mu.Lock(bg))
		t.Cleanup(func() { mu.Unlock(ctx) })
		return inspect.KindLock
	})
	each("fair", func(name string) inspect.Kind {
		mu := fair.New(rc, name, nil)
		ctx := held(t)(mu.Lock(bg))
		t.Cleanup(func() { mu.Unlock(ctx) })
		waiter := fair.New(other, name, nil)
		inBackground(t, func(ctx context.Context) error {
			lctx, err := waiter.Lock(ctx)
			if err == nil {
				err = waiter.Unlock(lctx)
			}
			return err
		})
		locktest.WaitQueued(t, rdb, name, other.ID(), 1)
		return inspect.KindLock
	})
	each("sem", func(name string) inspect.Kind {
		sem := semaphore.New(rc, name, nil)
		if _, err := sem.TrySetPermits(bg, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rdb.Del(bg, name) })
		inBackground(t, func(ctx context.Context) error {
			err := semaphore.New(other, name, nil).Acquire(ctx, 1)
			if err == nil {
				err = sem.Release(bg, 1)
			}
			return err
		})
		return inspect.KindCount // a semaphore's record is a count, whoever waits
	})
	each("perm", func(name string) inspect.Kind {
		ps := permits.New(rc, name, nil)
		if _, err := ps.TrySetPermits(bg, 2); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rdb.Del(bg, name) })
		p, err := ps.Acquire(bg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Release(bg) })
		return inspect.KindCount
	})
	each("latch", func(name string) inspect.Kind {
		l := latch.New(rc, name, nil)
		if _, err := l.TrySetCount(bg, 1); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rdb.Del(bg, name) })
		inBackground(t, latch.New(other, name, nil).Await)
		return inspect.KindCount
	})
	each("elect", func(name string) inspect.Kind {
		e := election.New(rc, name, nil)
		lead := held(t)(e.Campaign(bg, "host-a"))
		t.Cleanup(func() {
			e.Resign(lead)
			rdb.Del(bg, "relock_election_term:{"+name+"}", "relock_election_log:{"+name+"}")
		})
		return inspect.KindElection
	})
	// An election's fair lock is a lock record of its own, in the
	// election's slot.
	for name, kind := range maps.Clone(want) {
		if kind == inspect.KindElection {
			lock := "relock_election:{" + name + "}"
			want[lock], master[lock] = inspect.KindLock, master[name]
		}
	}
	pattern := "*" + base + ":*" // the elections' locks too
	// Each record is found with its lasting kind (a semaphore's, permits'
	// and a latch's are counts); settle retries while the background
	// waiters start.
	settle(t, func() error {
		got := map[string]inspect.Kind{}
		err := inspect.Find(bg, rdb, pattern, func(name string, kind inspect.Kind) error {
			if _, dup := got[name]; dup {
				return fmt.Errorf("%s found twice", name)
			}
			got[name] = kind
			return nil
		})
		if err == nil && !maps.Equal(got, want) {
			err = fmt.Errorf("Find(%s) = %v, want %v", pattern, got, want)
		}
		return err
	})
	masters := map[string]int{}
	for _, m := range master {
		masters[m]++
	}
	if len(masters) != 3 || len(want) != 21 {
		t.Fatalf("records %v on masters %v, want 21 records over 3 masters", want, masters)
	}

	bin := clitest.Build(t)
	seeds := []string{"-cluster", strings.Join(c.Addrs(), ",")}
	out := runCLI(t, bin, append(seeds, "list", pattern)...)
	for name, kind := range want {
		row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +` + string(kind) + `\b`)
		if !row.MatchString(out) {
			t.Errorf("list has no row for %s (%s, on %s):\n%s", name, kind, master[name], out)
		}
	}
	if n := strings.Count(out, "\n"); n != len(want)+1 {
		t.Errorf("list printed %d lines, want a header and %d records:\n%s", n, len(want), out)
	}
	for name, kind := range want {
		var l inspect.Lock
		if err := json.Unmarshal([]byte(runCLI(t, bin, append(seeds, "-json", "inspect", name)...)), &l); err != nil {
			t.Fatalf("inspect -json %s: %v", name, err)
		}
		if l.Name != name || l.Kind != kind {
			t.Errorf("inspect -json %s (on %s) = %s %s, want %s", name, master[name], l.Name, l.Kind, kind)
		}
	}
}

// TestDoctorAcrossMasters deadlocks two owners of two relock clients on
// two locks whose slots live on different masters (each holds one and
// waits for the other with TryLock), and leaves on the third master a
// relock waiter registration and a Redisson fair-queue entry whose
// clients are gone. inspect.Doctor finds exactly the cycle and the two
// gone waiters, and not the deadlocked waiters, who listen (with
// SSUBSCRIBE) on masters other than the one their lock's holder is on;
// the relock command's doctor on -cluster exits 4 naming them all.
func TestDoctorAcrossMasters(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t)
	bg := context.Background()
	base := redistest.Key(t)
	byMaster := namesOnEachMaster(t, c, rdb, base)
	masters := slices.Sorted(maps.Keys(byMaster))
	lock1, lock2, stray := byMaster[masters[0]], byMaster[masters[1]], byMaster[masters[2]]

	rcA, rcB := newClient(t, c.LockClient(t), nil), newClient(t, c.LockClient(t), nil)
	l1A, l2A := reentrant.New(rcA, lock1, nil), reentrant.New(rcA, lock2, nil)
	l1B, l2B := reentrant.New(rcB, lock1, nil), reentrant.New(rcB, lock2, nil)
	ctxA, ctxB := held(t)(l1A.Lock(bg)), held(t)(l2B.Lock(bg))
	// Released after the waits below end (cleanups run last first).
	t.Cleanup(func() { l1A.Unlock(ctxA); l2B.Unlock(ctxB) })
	for _, w := range []struct {
		mu  *reentrant.Mutex
		ctx context.Context
	}{{l2A, ctxA}, {l1B, ctxB}} {
		inBackground(t, func(stop context.Context) error {
			ctx, cancel := context.WithCancel(w.ctx)
			defer cancel()
			go func() { <-stop.Done(); cancel() }()
			if _, err := w.mu.TryLock(ctx, time.Minute); !errors.Is(err, relock.ErrNotAcquired) {
				return fmt.Errorf("TryLock of the other's lock = %v, want ErrNotAcquired when the test ends", err)
			}
			return nil
		})
	}

	// On the third master: a lock held by a live owner, with a relock
	// waiter of a client that does not exist (a version-8 UUID) and a
	// Redisson waiter queued in its fair queue, listening on nothing.
	mu := reentrant.New(rcA, stray, nil)
	strayCtx := held(t)(mu.Lock(bg))
	t.Cleanup(func() { mu.Unlock(strayCtx) })
	u := uuid.New()
	u[6] = u[6]&0x0f | 0x80
	goneRelock, goneRedisson := u.String()+":1", uuid.NewString()+":7"
	rdb.ZAdd(bg, "relock_lock_waiters:{"+stray+"}", redis.Z{Score: float64(time.Now().UnixMicro()), Member: goneRelock})
	rdb.RPush(bg, "redisson_lock_queue:{"+stray+"}", goneRedisson)
	rdb.ZAdd(bg, "redisson_lock_timeout:{"+stray+"}", redis.Z{Score: float64(time.Now().Add(5 * time.Minute).UnixMilli()), Member: goneRedisson})
	t.Cleanup(func() {
		rdb.Del(bg, "relock_lock_waiters:{"+stray+"}", "redisson_lock_queue:{"+stray+"}", "redisson_lock_timeout:{"+stray+"}")
	})

	type key struct {
		problem     inspect.Problem
		name, owner string
	}
	ownerA, ownerB := holderOf(t, rdb, lock1), holderOf(t, rdb, lock2)
	first := min(ownerA, ownerB)
	wantLock := map[string]string{ownerA: lock2, ownerB: lock1}[first]
	byKey := func(a, b key) int {
		return cmp.Or(cmp.Compare(a.problem, b.problem), cmp.Compare(a.name, b.name), cmp.Compare(a.owner, b.owner))
	}
	want := []key{
		{inspect.Deadlock, wantLock, first},
		{inspect.GoneWaiter, stray, goneRelock},
		{inspect.GoneWaiter, stray, goneRedisson},
	}
	slices.SortFunc(want, byKey)
	var r *inspect.Report
	// The waiters register, then subscribe: until both listen they show
	// as gone.
	settle(t, func() error {
		var err error
		if r, err = inspect.Doctor(bg, rdb, &inspect.DoctorOptions{Pattern: base + "*"}); err != nil {
			return err
		}
		var got []key
		for _, f := range r.Findings {
			got = append(got, key{f.Problem, f.Name, f.Owners[0]})
		}
		if slices.SortFunc(got, byKey); !slices.Equal(got, want) {
			return fmt.Errorf("findings %v, want %v; in full: %+v", got, want, r.Findings)
		}
		return nil
	})
	d := r.Findings[0]
	if !slices.Equal(d.Owners, sortedPair(ownerA, ownerB)) || len(d.Locks) != 2 {
		t.Fatalf("deadlock %+v, want owners %s and %s", d, ownerA, ownerB)
	}
	for i, o := range d.Owners {
		if w := map[string]string{ownerA: lock2, ownerB: lock1}[o]; d.Locks[i] != w {
			t.Fatalf("deadlock %+v: %s waits for %s, want %s", d, o, d.Locks[i], w)
		}
	}
	if r.Records != 3 {
		t.Fatalf("read %d records, want the 3 locks", r.Records)
	}

	// The command scans the whole cluster, where other tests' records
	// may be: its report must hold these findings, with this exit.
	out, errs, code := clitest.Run(t, clitest.Build(t), "-cluster", strings.Join(c.Addrs(), ","), "doctor")
	if code != 4 || !strings.Contains(errs, "doctor found problems") {
		t.Fatalf("doctor: exit %d, stderr %q, want 4", code, errs)
	}
	for _, w := range []struct{ problem, name, detail string }{
		{"deadlock", wantLock, "waits-for cycle: " + first + " waits for " + wantLock},
		{"gone-waiter", stray, goneRelock + " is registered as waiting for " + stray},
		{"gone-waiter", stray, goneRedisson + " waits at place 1 in the fair queue of " + stray},
	} {
		row := regexp.MustCompile(`(?m)^` + w.problem + ` +` + regexp.QuoteMeta(w.name) + ` +lock +` + regexp.QuoteMeta(w.detail))
		if !row.MatchString(out) {
			t.Errorf("doctor has no %s row for %s (%q):\n%s", w.problem, w.name, w.detail, out)
		}
	}
	for _, name := range []string{lock1, lock2} {
		if regexp.MustCompile(`(?m)^gone-waiter +` + regexp.QuoteMeta(name) + ` `).MatchString(out) {
			t.Errorf("doctor reports a live waiter on %s as gone:\n%s", name, out)
		}
	}
}

// held returns a function that fails t on a Lock's or Campaign's error
// and returns its context.
func held(t *testing.T) func(context.Context, error) context.Context {
	return func(ctx context.Context, err error) context.Context {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
}

// inBackground runs f until it returns or t ends, which cancels its
// context and waits for it; an error from f fails t unless its context
// ended.
func inBackground(t *testing.T, f func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := f(ctx); err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// holderOf returns the one owner field of lock name.
func holderOf(t *testing.T, rdb *redis.ClusterClient, name string) string {
	t.Helper()
	fields := rdb.HKeys(context.Background(), name).Val()
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

// settle calls check until it returns nil, failing t with its last
// error if it does not within wait.
func settle(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
