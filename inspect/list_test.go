package inspect_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// list returns the names List finds for pattern, sorted.
func list(t testing.TB, rdb redis.UniversalClient, pattern string) []string {
	t.Helper()
	var names []string
	if err := inspect.List(context.Background(), rdb, pattern, func(name string) error {
		names = append(names, name)
		return nil
	}); err != nil {
		t.Fatalf("List(%q): %v", pattern, err)
	}
	slices.Sort(names)
	return names
}

// TestList fills a server of its own with lock records of every kind,
// their companion keys (a fair queue and its deadlines, a waiter
// registry, a fencing counter, read-hold keys, an unlock latch) and
// other applications' keys, more than one SCAN call's worth, and checks
// that List finds exactly the lock records.
func TestList(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	rc := newClient(t, s)

	hold := func(lock func(context.Context) (context.Context, error), unlock func(context.Context) error) {
		t.Helper()
		ctx, err := lock(bg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unlock(ctx) })
	}
	plain := reentrant.New(rc, "orders:1", nil)
	hold(plain.Lock, plain.Unlock)
	waiter := reentrant.New(newClient(t, s), "orders:1", nil)
	waitIn(t, waiter.Lock, waiter.Unlock)
	fenced := reentrant.New(rc, "orders:{2}", &reentrant.Options{Fencing: true})
	hold(fenced.Lock, fenced.Unlock)
	fl := fair.New(rc, "printer", nil)
	hold(fl.Lock, fl.Unlock)
	queued := newClient(t, s)
	fw := fair.New(queued, "printer", nil)
	waitIn(t, fw.Lock, fw.Unlock)
	rw := rwlock.New(rc, "catalog", nil)
	hold(rw.RLock, rw.RUnlock)
	raw.HSet(bg, "redisson-held", uuid.NewString()+":1", 1)
	raw.Set(bg, "redisson_unlock_latch:{redisson-held}:"+uuid.NewString(), 1, time.Minute)

	raw.HSet(bg, "user:1", "name", "bob", "visits", 3)
	raw.HSet(bg, "stats:1", "a:1", "not a count")
	raw.RPush(bg, "jobs", "a", "b")
	for i := range 2 * inspect.ScanCount {
		raw.Set(bg, "cache:"+strconv.Itoa(i), i, 0)
	}
	locktest.WaitQueued(t, raw, "printer", queued.ID(), 1)
	eventually(t, "a registered waiter on orders:1", func() bool {
		return raw.Exists(bg, "relock_lock_waiters:{orders:1}").Val() == 1
	})
	for _, companion := range []string{
		"redisson_lock_queue:{printer}", "redisson_lock_timeout:{printer}",
		"redisson_lock_token:orders:{2}", "relock_lock_waiters:{orders:1}",
	} {
		if raw.Exists(bg, companion).Val() != 1 {
			t.Fatalf("companion key %s missing: the test sets nothing up", companion)
		}
	}
	if n := len(raw.Keys(bg, "{catalog}:*:rwlock_timeout:*").Val()); n != 1 {
		t.Fatalf("%d read-hold keys, want 1", n)
	}

	want := []string{"catalog", "orders:1", "orders:{2}", "printer", "redisson-held"}
	if got := list(t, raw, ""); !slices.Equal(got, want) {
		t.Fatalf("List(\"\") = %v, want %v", got, want)
	}
	if got := list(t, raw, "orders:*"); !slices.Equal(got, want[1:3]) {
		t.Fatalf("List(orders:*) = %v, want %v", got, want[1:3])
	}
	if got := list(t, raw, "nothing:*"); len(got) != 0 {
		t.Fatalf("List(nothing:*) = %v, want none", got)
	}

	stop := errors.New("stop")
	calls := 0
	err := inspect.List(bg, raw, "*", func(string) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("List with a func that fails: %v after %d calls, want its error after 1", err, calls)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := inspect.List(ctx, raw, "*", func(string) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("List with a cancelled context = %v, want context.Canceled", err)
	}
}
