package permits_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// TestWakeNotPolling: a waiter sends no script while it waits (the held
// permit expires only in about 30s, the watchdog's lease), and a release
// wakes it at once.
func TestWakeNotPolling(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := newSemaphore(t, newClient(t, nil), name, 1, nil)
	p := acquireT(t, holder)

	var calls redistest.ScriptCounter
	s := permits.New(srv.Counted(t, &calls), name, nil)
	type result struct {
		p   *permits.Permit
		at  time.Time
		err error
	}
	got := make(chan result, 1)
	go func() {
		q, err := s.Acquire(bg)
		got <- result{q, time.Now(), err}
	}()
	waitSubscribed(t, raw, name, 1)
	time.Sleep(100 * time.Millisecond) // the attempt after subscribing
	before := calls.N()
	time.Sleep(time.Second)
	if n := calls.N() - before; n != 0 {
		t.Fatalf("the waiter made %d script calls in 1s of waiting", n)
	}
	released := time.Now()
	releaseT(t, p)
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer releaseT(t, r.p)
	took := r.at.Sub(released)
	t.Logf("woken and acquired %v after the release", took)
	if took > time.Second {
		t.Fatalf("acquired %v after the release: not woken by its message", took)
	}
}

// TestCancelledWait: a wait whose context ends returns an error matching
// both ErrNotAcquired and the context's error, and leaves nothing in
// Redis; TryAcquire gives up after about its bound.
func TestCancelledWait(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := newSemaphore(t, newClient(t, nil), name, 1, nil)
	p := acquireT(t, holder)
	defer releaseT(t, p)
	s := permits.New(newClient(t, nil), name, nil)

	ctx, cancel := context.WithCancel(bg)
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := s.Acquire(ctx)
	if !errors.Is(err, relock.ErrNotAcquired) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a cancelled context = %v, want ErrNotAcquired and context.Canceled", err)
	}
	start := time.Now()
	_, err = s.TryAcquire(bg, 300*time.Millisecond)
	took := time.Since(start)
	if !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryAcquire(300ms) = %v, want ErrNotAcquired", err)
	}
	if took < 300*time.Millisecond || took > 2*time.Second {
		t.Fatalf("TryAcquire(300ms) gave up after %v", took)
	}
	checkCount(t, raw, name, "0")
	checkPermits(t, raw, name, relock.DefaultWatchdogTimeout, 5*time.Second, p.ID())
}

// TestClose: Close ends a wait with ErrClosed at once, cancels a held
// permit's context with cause ErrClosed and releases the permit, so a
// waiter on another client gets it within a second (not at the end of
// its 30s lease); the closed client's wait leaves nothing in Redis.
func TestClose(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	busy, held := redistest.Key(t), redistest.Key(t)
	rc, err := relock.New(srv.LockClient(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	other := newClient(t, nil)
	blocker := acquireT(t, newSemaphore(t, other, busy, 1, nil))
	defer releaseT(t, blocker)
	mine := newSemaphore(t, rc, held, 1, nil)
	p := acquireT(t, mine)

	type result struct {
		at  time.Time
		err error
	}
	next := make(chan result, 1)
	go func() {
		q, err := permits.New(other, held, nil).Acquire(bg)
		at := time.Now()
		if err == nil {
			err = q.Release(bg)
		}
		next <- result{at, err}
	}()
	waiting := make(chan result, 1)
	go func() {
		_, err := permits.New(rc, busy, nil).Acquire(bg)
		waiting <- result{time.Now(), err}
	}()
	waitSubscribed(t, raw, busy, 1)
	waitSubscribed(t, raw, held, 1)
	time.Sleep(50 * time.Millisecond) // their attempts after subscribing

	closed := time.Now()
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-waiting:
		if !errors.Is(r.err, relock.ErrClosed) {
			t.Fatalf("waiting Acquire after Close = %v, want ErrClosed", r.err)
		}
		if took := r.at.Sub(closed); took > 2*time.Second {
			t.Fatalf("waiting Acquire ended %v after Close", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiting Acquire did not end after Close")
	}
	if !errors.Is(context.Cause(p.Context()), relock.ErrClosed) {
		t.Fatalf("held permit's cause after Close = %v, want ErrClosed", context.Cause(p.Context()))
	}
	if err := p.Release(bg); !errors.Is(err, relock.ErrClosed) {
		t.Fatalf("Release after Close = %v, want ErrClosed", err)
	}
	select {
	case r := <-next:
		if r.err != nil {
			t.Fatal(r.err)
		}
		took := r.at.Sub(closed)
		t.Logf("a waiter on another client took the permit %v after Close began", took)
		if took > time.Second {
			t.Fatalf("a waiter on another client took the permit %v after Close began", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("permit held on the closed client not released")
	}
	checkCount(t, raw, busy, "0")
	checkPermits(t, raw, busy, relock.DefaultWatchdogTimeout, 5*time.Second, blocker.ID())
	if _, err := permits.New(rc, busy, nil).TryAcquire(bg, 0); !errors.Is(err, relock.ErrClosed) {
		t.Fatalf("TryAcquire after Close = %v, want ErrClosed", err)
	}
}

// TestWaitForSetUp: an Acquire on a semaphore not yet set up waits (no
// permit expires, so it waits for a message), and is woken by
// TrySetPermits on another client; a second waiter is woken by
// AddPermits.
func TestWaitForSetUp(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	s := permits.New(newClient(t, nil), name, nil)
	setter := permits.New(newClient(t, nil), name, nil)
	for i, wake := range []func() error{
		func() error { _, err := setter.TrySetPermits(bg, 1); return err },
		func() error { return setter.AddPermits(bg, 1) },
	} {
		got := make(chan error, 1)
		var at time.Time
		go func() {
			_, err := s.Acquire(bg)
			at = time.Now()
			got <- err
		}()
		waitSubscribed(t, raw, name, 1)
		time.Sleep(50 * time.Millisecond) // the attempt after subscribing
		woken := time.Now()
		if err := wake(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("waiter %d not woken", i)
		}
		if took := at.Sub(woken); took > time.Second {
			t.Fatalf("waiter %d acquired %v after the permits came", i, took)
		}
	}
	checkCount(t, raw, name, "0")
}
