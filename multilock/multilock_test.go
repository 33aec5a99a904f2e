package multilock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// members returns a MultiLock over a reentrant mutex on server 0, a fair
// mutex on server 1 and a read/write lock's read side on server 2, named
// base:a, base:b, base:c, built on rcs.
func members(t *testing.T, rcs [3]*relock.Client, base string) *multilock.MultiLock {
	t.Helper()
	ml := multilock.New(
		rwlock.New(rcs[2], base+":c", nil).Reader(),
		reentrant.New(rcs[0], base+":a", nil),
		fair.New(rcs[1], base+":b", nil),
	)
	return ml
}

// held reports, per server, whether the member lock on it exists.
func held(t *testing.T, base string) [3]bool {
	t.Helper()
	var h [3]bool
	for i, name := range []string{base + ":a", base + ":b", base + ":c"} {
		h[i] = servers[i].Client(t).Exists(context.Background(), name).Val() == 1
	}
	return h
}

// TestAllOrNothing: members on three servers of three lock types are held
// together; with one member busy Lock waits and TryLock gives up holding
// nothing, naming the busy member.
func TestAllOrNothing(t *testing.T) {
	redistest.Parallel(t)
	bg := context.Background()
	base := redistest.Key(t)
	ml := members(t, newClients(t, nil), base)
	if ml.Name() != base+":a,"+base+":b,"+base+":c" {
		t.Fatalf("Name() = %q, want the members in canonical order", ml.Name())
	}
	ctx, err := ml.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	if h := held(t, base); h != [3]bool{true, true, true} {
		t.Fatalf("after Lock members held: %v", h)
	}
	inner, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := reentrant.New(newClients(t, nil)[0], base+":a", nil).HoldCount(inner); n != 0 {
		t.Fatalf("another client's mutex sees %d holds of this owner", n)
	}
	if err := ml.Unlock(inner); err != nil {
		t.Fatal(err)
	}
	if h := held(t, base); h != [3]bool{true, true, true} || ctx.Err() != nil {
		t.Fatalf("after the inner Unlock: members %v, context %v", h, ctx.Err())
	}
	if err := ml.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if h := held(t, base); h != [3]bool{} || ctx.Err() == nil {
		t.Fatalf("after the last Unlock: members %v, context %v", h, ctx.Err())
	}

	// Someone else holds b.
	busy := fair.New(newClients(t, nil)[1], base+":b", nil)
	bctx, err := busy.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = ml.TryLock(bg, 300*time.Millisecond)
	if !errors.Is(err, relock.ErrNotAcquired) || !strings.Contains(err.Error(), `member "`+base+`:b"`) {
		t.Fatalf("TryLock with b busy = %v, want ErrNotAcquired naming b", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("TryLock(300ms) took %v", took)
	}
	if h := held(t, base); h != [3]bool{false, true, false} {
		t.Fatalf("after the failed TryLock: members %v, want only b (the other holder)", h)
	}
	got := make(chan error, 1)
	go func() {
		ctx, err := ml.Lock(bg)
		if err == nil {
			err = ml.Unlock(ctx)
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Lock returned (%v) while b was busy", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := busy.Unlock(bctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Lock after b was freed: %v", err)
	}
	if h := held(t, base); h != [3]bool{} {
		t.Fatalf("members left: %v", h)
	}
}

// TestCancelledReleasesTaken: a Lock whose context ends while waiting for
// a member releases the members it took.
func TestCancelledReleasesTaken(t *testing.T) {
	redistest.Parallel(t)
	base := redistest.Key(t)
	ml := members(t, newClients(t, nil), base)
	busy := rwlock.New(newClients(t, nil)[2], base+":c", nil)
	wctx, err := busy.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Unlock(wctx)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = ml.Lock(ctx)
	if !errors.Is(err, relock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock = %v, want ErrNotAcquired and DeadlineExceeded", err)
	}
	if h := held(t, base); h != [3]bool{false, false, true} {
		t.Fatalf("members after the cancelled Lock: %v, want only c (the writer)", h)
	}
	if n := servers[1].Client(t).Exists(context.Background(), "redisson_lock_queue:{"+base+":b}").Val(); n != 0 {
		t.Fatal("fair member's queue left behind")
	}
}

// TestNoDeadlock: two MultiLocks over {a,b} and {b,a}, 8 goroutines each,
// locking in a loop for 3s (1s under -short): every goroutine makes
// progress.
func TestNoDeadlock(t *testing.T) {
	redistest.Parallel(t)
	base := redistest.Key(t)
	const perSide = 8
	var progress [2 * perSide]atomic.Int64
	stop := time.Now().Add(redistest.Short(3*time.Second, time.Second))
	var wg sync.WaitGroup
	for g := range 2 * perSide {
		rcs := newClients(t, nil)
		a := reentrant.New(rcs[0], base+":a", nil)
		b := reentrant.New(rcs[1], base+":b", nil)
		order := []relock.Locker{a, b}
		if g%2 == 1 {
			order = []relock.Locker{b, a}
		}
		ml := multilock.New(order...)
		wg.Go(func() {
			for time.Now().Before(stop) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				lctx, err := ml.Lock(ctx)
				if err != nil {
					cancel()
					t.Errorf("goroutine %d: %v (deadlock?)", g, err)
					return
				}
				progress[g].Add(1)
				if err := ml.Unlock(lctx); err != nil {
					t.Error(err)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	for g := range progress {
		if progress[g].Load() == 0 {
			t.Errorf("goroutine %d never got the MultiLock", g)
		}
	}
	t.Logf("acquisitions per goroutine: %v", func() []int64 {
		var n []int64
		for g := range progress {
			n = append(n, progress[g].Load())
		}
		return n
	}())
}

// TestExclusion: 10 contenders, each its own "process" with a client per
// server, for the same MultiLock: the counter's read-modify-writes under
// it add up exactly.
func TestExclusion(t *testing.T) {
	redistest.Parallel(t)
	const contenders, iterations = 10, 30
	base := redistest.Key(t)
	counter := base + ":counter"
	raw := servers[0].Client(t)
	var wg sync.WaitGroup
	for range contenders {
		ml := members(t, newClients(t, nil), base)
		rdb := servers[0].Client(t)
		wg.Go(func() {
			for range iterations {
				ctx, err := ml.Lock(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				n, _ := rdb.Get(ctx, counter).Int()
				rdb.Set(ctx, counter, n+1, 0)
				if err := ml.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n, err := raw.Get(context.Background(), counter).Int(); err != nil || n != contenders*iterations {
		t.Fatalf("counter = %d (%v), want %d", n, err, contenders*iterations)
	}
	raw.Del(context.Background(), counter)
	if h := held(t, base); h != [3]bool{} {
		t.Fatalf("members left: %v", h)
	}
}

// TestMemberLossCancels: deleting any one member's key by hand cancels the
// MultiLock's context with cause ErrLockLost.
func TestMemberLossCancels(t *testing.T) {
	redistest.Parallel(t)
	for i := range servers {
		base := redistest.Key(t)
		ml := members(t, newClients(t, &relock.Options{WatchdogTimeout: time.Second}), base)
		ctx, err := ml.Lock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		servers[i].Client(t).Del(context.Background(), base+":"+string(rune('a'+i)))
		select {
		case <-ctx.Done():
		case <-time.After(3 * time.Second):
			t.Fatalf("member %d deleted: MultiLock context not cancelled", i)
		}
		if !errors.Is(context.Cause(ctx), relock.ErrLockLost) {
			t.Fatalf("member %d deleted: cause %v, want ErrLockLost", i, context.Cause(ctx))
		}
		err = ml.Unlock(ctx)
		if !errors.Is(err, relock.ErrNotHeld) {
			t.Fatalf("Unlock after losing member %d = %v, want ErrNotHeld for it", i, err)
		}
		if h := held(t, base); h != [3]bool{} {
			t.Fatalf("members left after Unlock: %v", h)
		}
	}
}

// TestBadInput: a MultiLock of no members, nil members or a lock twice
// refuses every call.
func TestBadInput(t *testing.T) {
	rcs := newClients(t, nil)
	a := reentrant.New(rcs[0], "a", nil)
	for what, lockers := range map[string][]relock.Locker{
		"none":                     nil,
		"nil member":               {a, nil},
		"typed nil member":         {a, (*reentrant.Mutex)(nil)},
		"same lock twice":          {a, reentrant.New(rcs[0], "a", nil)},
		"both sides of one rwlock": {rwlock.New(rcs[0], "rw", nil).Reader(), rwlock.New(rcs[0], "rw", nil).Writer()},
	} {
		ml := multilock.New(lockers...)
		if _, err := ml.Lock(context.Background()); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("%s: Lock = %v; want ErrInvalidArgument", what, err)
		}
		if _, err := ml.TryLock(context.Background(), 0); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("%s: TryLock = %v; want ErrInvalidArgument", what, err)
		}
		if err := ml.Unlock(relock.WithNewOwner(context.Background())); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("%s: Unlock = %v; want ErrInvalidArgument", what, err)
		}
	}
	// The same name on two servers is two locks.
	two := multilock.New(a, reentrant.New(rcs[1], "a", nil))
	ctx, err := two.TryLock(context.Background(), 0)
	if err != nil {
		t.Fatalf("same name on two servers: %v", err)
	}
	if err := two.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	ml := multilock.New(a)
	if _, err := ml.TryLock(context.Background(), -time.Second); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("TryLock(-1s) = %v", err)
	}
	if err := ml.Unlock(context.Background()); !errors.Is(err, relock.ErrNotHeld) {
		t.Errorf("Unlock without an owner = %v", err)
	}
	if err := ml.Unlock(relock.WithNewOwner(context.Background())); !errors.Is(err, relock.ErrNotHeld) {
		t.Errorf("Unlock by a non-holder = %v", err)
	}
}
