package deadlinetest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/nonreentrant"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/redlock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/semaphore"
	"github.com/relock-go/relock/spinlock"
)

// retryBackoff is the go-redis client's backoff between retries in
// TestShutdownBlackhole: go-redis sleeps it out on the command's context
// even once the client is closed, so a round trip whose context Shutdown
// cannot end overruns Shutdown by seconds.
const retryBackoff = 2 * time.Second

// waitersWithin is the waiters' deadline in TestShutdownBlackhole, from
// before the cut: past the lease and Shutdown.
const waitersWithin = lease + 5*time.Second

// TestShutdownBlackhole shuts a client down while every primitive holds
// and waits on it, against a server that accepts connections and never
// answers: the watchdog's leases run out first, so that a lost
// leadership resigns in the background, and a fixed-lease hold is left
// for Shutdown to release. Shutdown must return by its context's
// deadline (give or take margin). The waiters' time is their own: each
// must return, with an error matching relock.ErrClosed, by its deadline.
func TestShutdownBlackhole(t *testing.T) {
	redistest.SkipShort(t, "it waits out a lease against a black hole")
	s := redistest.Start(t)
	s.RequireReal(t)
	px := newProxy(t, s.Addr)
	o := s.LockOptions()
	o.Addr = px.Addr()
	o.MinRetryBackoff, o.MaxRetryBackoff = retryBackoff, retryBackoff
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	rc := redistest.Relock(t, rdb, &relock.Options{WatchdogTimeout: lease, Logger: quiet})

	ctx := context.Background()
	name := func(what string) string { return what + ":" + t.Name() }
	lockers := map[string]relock.Locker{
		"reentrant":    reentrant.New(rc, name("re"), nil),
		"fair":         fair.New(rc, name("fair"), nil),
		"rwlock":       rwlock.New(rc, name("rw"), nil).Writer(),
		"spinlock":     spinlock.New(rc, name("spin"), nil),
		"nonreentrant": nonreentrant.New(rc, name("nr"), nil),
		"multilock":    multilock.New(reentrant.New(rc, name("ml:a"), nil), fair.New(rc, name("ml:b"), nil)),
		"redlock":      redlock.New([]*relock.Client{rc}, name("rl"), nil),
		"fixed lease":  reentrant.New(rc, name("fixed"), &reentrant.Options{Lease: time.Minute}),
	}
	for _, l := range lockers {
		hold(t, ctx, l)
	}
	if _, err := rwlock.New(rc, name("rw:read"), nil).RLock(relock.WithNewOwner(ctx)); err != nil {
		t.Fatal(err)
	}
	sem := semaphore.New(rc, name("sem"), nil)
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	per := permits.New(rc, name("permits"), nil)
	if _, err := per.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := per.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	lat := latch.New(rc, name("latch"), nil)
	if _, err := lat.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	lead, err := election.New(rc, name("el"), nil).Campaign(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}

	// The waiters: each blocks until Shutdown ends its wait.
	waits := map[string]func(ctx context.Context) error{
		"semaphore": func(ctx context.Context) error { return sem.Acquire(ctx, 1) },
		"permits": func(ctx context.Context) error {
			_, err := per.Acquire(ctx)
			return err
		},
		"latch": lat.Await,
		"election": func(ctx context.Context) error {
			_, err := election.New(rc, name("el"), nil).Campaign(ctx, "b")
			return err
		},
	}
	for what, l := range lockers {
		waits[what] = func(ctx context.Context) error {
			_, err := l.Lock(relock.WithNewOwner(ctx))
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, waitersWithin)
	defer cancel()
	var mu sync.Mutex // guards errs
	errs := make(map[string]error)
	var wg sync.WaitGroup
	defer wg.Wait()
	for what, wait := range waits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := wait(wctx)
			mu.Lock()
			defer mu.Unlock()
			errs[what] = err
		}()
	}
	// Every waiter but the spin lock's, which polls, waits on the hub.
	redistest.Eventually(t, 5*time.Second, "the waiters waiting", func() bool {
		return rc.Stats().Waiters >= len(waits)-1
	})

	px.Blackhole()
	select {
	case <-lead.Done():
	case <-time.After(lease + 3*time.Second):
		t.Fatal("the leadership outlived its lease against a black hole")
	}
	// Its resign is now under way, against the black hole.
	time.Sleep(100 * time.Millisecond)

	sctx, scancel := context.WithTimeout(ctx, deadline)
	defer scancel()
	start := time.Now()
	err = rc.Shutdown(sctx)
	took := time.Since(start)
	t.Logf("Shutdown: %v (overshoot %v): %v", took.Round(time.Millisecond), (took - deadline).Round(time.Millisecond), err)
	if took > deadline+margin {
		t.Errorf("Shutdown took %v with a %v deadline", took, deadline)
	}
	stopped := make(chan struct{})
	go func() {
		wg.Wait()
		close(stopped)
	}()
	d, _ := wctx.Deadline()
	select {
	case <-stopped:
	case <-time.After(time.Until(d) + margin):
		t.Fatalf("waiters still waiting %v past their deadline", margin)
	}
	for what, err := range errs {
		if !errors.Is(err, relock.ErrClosed) {
			t.Errorf("waiter %s: %v does not match relock.ErrClosed", what, err)
		}
	}
}
