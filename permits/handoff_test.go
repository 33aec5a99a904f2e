package permits_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// registryOf and watcherOf are relock's keys of semaphore name's waiters.
func registryOf(name string) string { return "relock_semaphore_waiters:{" + name + "}" }
func watcherOf(name string) string  { return "relock_semaphore_watcher:{" + name + "}" }

// waitRegistered waits until n waiters of semaphore name are registered.
func waitRegistered(t *testing.T, raw *redis.Client, name string, n int64) {
	t.Helper()
	redistest.Eventually(t, 5*time.Second, fmt.Sprintf("%d waiters registered", n), func() bool {
		return raw.ZCard(context.Background(), registryOf(name)).Val() == n
	})
}

// settle waits until the counters have seen no script call for 200ms.
func settle(t *testing.T, counters ...*redistest.ScriptCounter) {
	t.Helper()
	sum := func() int64 {
		var n int64
		for _, c := range counters {
			n += c.N()
		}
		return n
	}
	last := sum()
	for range 25 {
		time.Sleep(200 * time.Millisecond)
		n := sum()
		if n == last {
			return
		}
		last = n
	}
	t.Fatal("waiters still trying after 5s")
}

// A waiting is one Acquire in a goroutine, on a client of its own whose
// script calls are counted.
type waiting struct {
	i     int
	calls *redistest.ScriptCounter
	got   chan *permits.Permit
}

// startWaiting starts waiter i on semaphore name, until ctx ends.
func startWaiting(ctx context.Context, t *testing.T, name string, i int, acquired chan<- int) *waiting {
	w := &waiting{i: i, calls: &redistest.ScriptCounter{}, got: make(chan *permits.Permit, 1)}
	s := permits.New(srv.Counted(t, w.calls), name, nil)
	go func() {
		if p, err := s.Acquire(ctx); err == nil {
			w.got <- p
			acquired <- i
		}
	}()
	return w
}

// TestReleaseWakesOne: four waiters on four clients, registered one after
// another, each get a permit released one at a time, in the order they
// came; a release makes the waiter it wakes try once, and the others not
// at all but for one look by the waiter that takes the watcher's role
// over.
func TestReleaseWakesOne(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := newSemaphore(t, newClient(t, nil), name, 4, nil)
	var held []*permits.Permit
	for range 4 {
		held = append(held, acquireT(t, holder))
	}
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	acquired := make(chan int, 4)
	var ws []*waiting
	for i := range 4 {
		ws = append(ws, startWaiting(ctx, t, name, i, acquired))
		waitRegistered(t, raw, name, int64(i+1))
	}
	counters := make([]*redistest.ScriptCounter, len(ws))
	for i, w := range ws {
		counters[i] = w.calls
	}
	for want, p := range held {
		settle(t, counters...)
		before := make([]int64, len(ws))
		for i, w := range ws {
			before[i] = w.calls.N()
		}
		releaseT(t, p)
		select {
		case i := <-acquired:
			if i != want {
				t.Fatalf("release %d went to waiter %d, want %d (the longest waiting)", want, i, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("release %d: no waiter acquired", want)
		}
		settle(t, counters...)
		looks := int64(0)
		for i, w := range ws {
			d := w.calls.N() - before[i]
			switch {
			case i == want && d != 1:
				t.Errorf("release %d: the woken waiter made %d script calls, want 1", want, d)
			case i != want:
				looks += d
			}
		}
		if looks > 1 {
			t.Errorf("release %d: the waiters not woken made %d script calls, want at most 1", want, looks)
		}
	}
	for _, w := range ws {
		releaseT(t, <-w.got)
	}
	redistest.Eventually(t, 2*time.Second, "registry and watcher gone", func() bool {
		return raw.Exists(bg, registryOf(name), watcherOf(name)).Val() == 0
	})
}

// TestExpiryWakesOne: a permit that expires frees itself with no message;
// of three relock waiters only the watcher tries again then, and the
// permit goes to the longest waiting, with at most two script calls
// among them (the watcher's, which returns the permit and takes it or
// wakes the waiter it is for, and that waiter's or the new watcher's),
// where every waiter trying at the expiry would make three.
func TestExpiryWakesOne(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	newSemaphore(t, newClient(t, nil), name, 1, nil)
	java := redisson{t, raw}
	const lease = 600 * time.Millisecond
	java.acquire(name, lease)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	acquired := make(chan int, 3)
	var ws []*waiting
	for i := range 3 {
		ws = append(ws, startWaiting(ctx, t, name, i, acquired))
		waitRegistered(t, raw, name, int64(i+1))
	}
	time.Sleep(100 * time.Millisecond) // the last waiter's attempt after registering
	var before int64
	for _, w := range ws {
		before += w.calls.N()
	}
	select {
	case i := <-acquired:
		if i != 0 {
			t.Fatalf("the expired permit went to waiter %d, want 0 (the longest waiting)", i)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no waiter took the expired permit")
	}
	time.Sleep(200 * time.Millisecond)
	var after int64
	for _, w := range ws {
		after += w.calls.N()
	}
	if d := after - before; d > 2 {
		t.Fatalf("%d script calls among the waiters for one expiry, want at most 2", d)
	}
	select {
	case i := <-acquired:
		t.Fatalf("waiter %d acquired too, with one permit", i)
	default:
	}
	releaseT(t, <-ws[0].got)
	cancel()
}
