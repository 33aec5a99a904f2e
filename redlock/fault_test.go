package redlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/redlock"
	"github.com/relock-go/relock/reentrant"
)

// margin is what a bounded operation may take beyond its bound on a
// loaded machine.
const margin = 200 * time.Millisecond

// within runs f and fails t unless it returns within limit; it waits
// for f for 10s at most (a hang fails the test rather than blocking it).
func within(t *testing.T, limit time.Duration, what string, f func()) time.Duration {
	t.Helper()
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still running after 10s (bound %v)", what, limit)
	}
	took := time.Since(start)
	t.Logf("%s took %v (bound %v)", what, took, limit)
	if took > limit {
		t.Errorf("%s took %v, over its bound %v", what, took, limit)
	}
	return took
}

// fieldsOf returns the one field of each server's record of name.
func fieldsOf(t *testing.T, servers []*redistest.Server, name string) []string {
	t.Helper()
	fields := make([]string, len(servers))
	for i, s := range servers {
		for f := range s.Client(t).HGetAll(context.Background(), name).Val() {
			fields[i] = f
		}
		if fields[i] == "" {
			t.Fatalf("master %d: no record of %s", i, name)
		}
	}
	return fields
}

// onlyFields checks that each server's record of name has exactly the
// one field want[i]: nothing of anyone else's is left there.
func onlyFields(t *testing.T, servers []*redistest.Server, name string, want []string) {
	t.Helper()
	for i, s := range servers {
		fields := s.Client(t).HGetAll(context.Background(), name).Val()
		if _, ok := fields[want[i]]; !ok || len(fields) != 1 {
			t.Errorf("master %d: record %v, want only the holder's field %s", i, fields, want[i])
		}
	}
}

// TestCloseEndsWait: closing one, or every, client of a RedLock that is
// waiting for a lock held elsewhere ends the wait with ErrClosed at once;
// Close does not wait for the waiter, other operations on the clients do
// not block, and the waiter leaves nothing locked.
func TestCloseEndsWait(t *testing.T) {
	for _, tc := range []struct {
		what  string
		close []int
	}{
		{"one client", []int{0}},
		{"every client", []int{0, 1, 2}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			servers := shared[:3]
			name := redistest.Key(t)
			holder := redlock.New(clientsOn(t, servers, nil), name, nil)
			hctx, err := holder.Lock(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			held := fieldsOf(t, servers, name)

			counts := make([]redistest.ScriptCounter, len(servers))
			rcs := make([]*relock.Client, len(servers))
			for i, s := range servers {
				rcs[i] = s.Counted(t, &counts[i])
			}
			waiter := redlock.New(rcs, name, nil)
			// A waiter without a deadline; cancelled only when the test
			// ends, so that a hang fails the test without blocking the
			// rest.
			wctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			lockErr := make(chan error, 1)
			go func() {
				ctx, err := waiter.Lock(wctx)
				if err == nil {
					_ = waiter.Unlock(ctx)
				}
				lockErr <- err
			}()
			// Two script calls on a master: an attempt refused, and its undo.
			redistest.Eventually(t, 5*time.Second, "the waiter's first attempt", func() bool { return counts[0].N() >= 2 })

			start := time.Now()
			var wg sync.WaitGroup
			closeTook := make([]time.Duration, len(tc.close))
			for j, i := range tc.close {
				wg.Go(func() {
					_ = rcs[i].Close()
					closeTook[j] = time.Since(start)
				})
			}
			// Meanwhile another operation on a closed client returns.
			within(t, 2*time.Second, "a reentrant TryLock on a closed client", func() {
				_, err := reentrant.New(rcs[tc.close[0]], redistest.Key(t), nil).TryLock(context.Background(), 0)
				if !errors.Is(err, relock.ErrClosed) {
					t.Errorf("reentrant TryLock on a closed client = %v, want ErrClosed", err)
				}
			})
			select {
			case err := <-lockErr:
				took := time.Since(start)
				t.Logf("waiting Lock returned %v after Close: %v", took, err)
				if !errors.Is(err, relock.ErrClosed) {
					t.Errorf("waiting Lock = %v, want ErrClosed", err)
				}
				if took > 2*time.Second {
					t.Errorf("waiting Lock returned %v after Close, want within 2s", took)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("waiting Lock still blocked 5s after Close")
			}
			closed := make(chan struct{})
			go func() { wg.Wait(); close(closed) }()
			select {
			case <-closed:
				for j, d := range closeTook {
					if d > 2*time.Second {
						t.Errorf("Close of client %d took %v", tc.close[j], d)
					}
				}
			case <-time.After(5 * time.Second):
				t.Errorf("Close still blocked 5s later")
			}
			// The clients left open still work.
			if len(tc.close) < len(rcs) {
				within(t, 2*time.Second, "a reentrant Lock on a client left open", func() {
					m := reentrant.New(rcs[len(rcs)-1], redistest.Key(t), nil)
					ctx, err := m.TryLock(context.Background(), 0)
					if err != nil {
						t.Errorf("reentrant TryLock on an open client = %v", err)
						return
					}
					if err := m.Unlock(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			onlyFields(t, servers, name, held)
			if err := holder.Unlock(hctx); err != nil {
				t.Fatal(err)
			}
			if n := records(t, servers, name); n != 0 {
				t.Fatalf("records left on %d masters", n)
			}
		})
	}
}

// TestDeadMaster: with one of three masters killed, Lock, Unlock, a
// refused TryLock(0) (an attempt and its undo) and the hand-off to a
// waiter each take at most about NodeTimeout, not the retries of the
// caller's client (1.7s and more).
func TestDeadMaster(t *testing.T) {
	redistest.Parallel(t)
	servers := startServers(t, 3)
	servers[2].Kill()
	name := redistest.Key(t)
	holder := redlock.New(clientsOn(t, servers, nil), name, nil)
	bound := redlock.DefaultNodeTimeout + margin

	var hctx context.Context
	var err error
	within(t, bound, "Lock", func() { hctx, err = holder.Lock(context.Background()) })
	if err != nil {
		t.Fatal(err)
	}
	other := redlock.New(clientsOn(t, servers, nil), name, nil)
	// A refused attempt is undone, on the dead master too: while
	// go-redis is still dialling it, the acquire fails with the call's
	// deadline rather than a dial error, so it may have been sent. The
	// undo there runs in the background: the call takes one NodeTimeout.
	within(t, bound, "a refused TryLock(0)", func() {
		if _, err := other.TryLock(context.Background(), 0); !errors.Is(err, relock.ErrNotAcquired) {
			t.Errorf("TryLock(0) of a held lock = %v, want ErrNotAcquired", err)
		}
	})
	within(t, bound, "Unlock", func() {
		if err := holder.Unlock(hctx); err != nil {
			t.Error(err)
		}
	})
	if n := records(t, servers[:2], name); n != 0 {
		t.Fatalf("records left on %d live masters", n)
	}

	// The hand-off: a waiter polling with short delays gets the lock
	// within its NodeTimeout (+ margin) of the release: the attempt in
	// flight, a retry delay and the attempt that wins.
	hctx, err = holder.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const nodeTimeout = 50 * time.Millisecond
	var count redistest.ScriptCounter
	wrcs := append([]*relock.Client{servers[0].Counted(t, &count)}, clientsOn(t, servers[1:], nil)...)
	waiter := redlock.New(wrcs, name, &redlock.Options{NodeTimeout: nodeTimeout, RetryMin: 10 * time.Millisecond, RetryMax: 30 * time.Millisecond})
	wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type result struct {
		ctx context.Context
		err error
		at  time.Time
	}
	granted := make(chan result, 1)
	go func() {
		ctx, err := waiter.Lock(wctx)
		granted <- result{ctx, err, time.Now()}
	}()
	redistest.Eventually(t, 5*time.Second, "the waiter's first attempt", func() bool { return count.N() >= 2 })
	// The live masters release within a round trip of the Unlock's start.
	released := time.Now()
	within(t, bound, "Unlock with a waiter", func() {
		if err := holder.Unlock(hctx); err != nil {
			t.Error(err)
		}
	})
	select {
	case r := <-granted:
		if r.err != nil {
			t.Fatalf("waiter: %v", r.err)
		}
		took := r.at.Sub(released)
		t.Logf("waiter granted %v after the release (bound %v)", took, nodeTimeout+margin)
		if took > nodeTimeout+margin {
			t.Errorf("waiter granted %v after the release, over %v", took, nodeTimeout+margin)
		}
		if err := waiter.Unlock(r.ctx); err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiter not granted 10s after the release")
	}
	if n := records(t, servers[:2], name); n != 0 {
		t.Fatalf("records left on %d live masters", n)
	}
}

// TestFrozenMaster: with one of three masters frozen (SIGSTOP: it
// accepts connections and answers nothing), every call still takes at
// most about NodeTimeout: the refused TryLock(0) leaves its undo on the
// frozen master to the background, and a Close waits for that undo.
func TestFrozenMaster(t *testing.T) {
	redistest.Parallel(t)
	servers := startServers(t, 3)
	if err := servers[2].Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = servers[2].Resume() })
	name := redistest.Key(t)
	// NodeTimeout bounds the live masters' replies too: the default
	// 100ms is less than a loaded machine may take to schedule a
	// redis-server and the reply's reader, and an Unlock cut off on a
	// live master leaves its record. 300ms leaves room for that.
	const nodeTimeout = 300 * time.Millisecond
	opts := &redlock.Options{NodeTimeout: nodeTimeout}
	holder := redlock.New(clientsOn(t, servers, nil), name, opts)
	// A call that waited for the frozen master would take go-redis's
	// ReadTimeout (3s), and a Close waiting on its undo forever: a bound
	// of NodeTimeout plus a second tells those apart, and leaves room for
	// the scheduler on a loaded machine (margin alone, 200ms, did not).
	bound := nodeTimeout + time.Second
	var hctx context.Context
	var err error
	within(t, bound, "Lock", func() { hctx, err = holder.Lock(context.Background()) })
	if err != nil {
		t.Fatal(err)
	}
	orcs := clientsOn(t, servers, nil)
	other := redlock.New(orcs, name, opts)
	within(t, bound, "a refused TryLock(0)", func() {
		if _, err := other.TryLock(context.Background(), 0); !errors.Is(err, relock.ErrNotAcquired) {
			t.Errorf("TryLock(0) of a held lock = %v, want ErrNotAcquired", err)
		}
	})
	// The undo on the frozen master is still under way; Close waits for
	// it, which NodeTimeout bounds.
	within(t, bound, "Close after a refused TryLock(0)", func() {
		if err := orcs[2].Close(); err != nil {
			t.Error(err)
		}
	})
	within(t, bound, "Unlock", func() {
		if err := holder.Unlock(hctx); err != nil {
			t.Error(err)
		}
	})
	if n := records(t, servers[:2], name); n != 0 {
		t.Fatalf("records left on %d live masters", n)
	}
}

// TestTwoDeadMasters: with two of three masters killed, a Lock with a
// 500ms context gives up about NodeTimeout after its context ends, and
// leaves no record on the live master.
func TestTwoDeadMasters(t *testing.T) {
	redistest.Parallel(t)
	servers := startServers(t, 3)
	servers[1].Kill()
	servers[2].Kill()
	name := redistest.Key(t)
	rl := redlock.New(clientsOn(t, servers, nil), name, nil)
	const wait = 500 * time.Millisecond
	within(t, wait+redlock.DefaultNodeTimeout+margin, "Lock with a 500ms context", func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_, err := rl.Lock(ctx)
		if !errors.Is(err, relock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Lock with 2 of 3 masters dead = %v, want ErrNotAcquired and DeadlineExceeded", err)
		}
	})
	if n := records(t, servers[:1], name); n != 0 {
		t.Fatalf("record left on the live master")
	}
}

// TestShutdownReleases: closing one of a RedLock holder's clients
// releases the record on that client's master at once (not after its
// lease); the others stay until the holder unlocks. A second one closing
// leaves too few masters: the holder's context is cancelled.
func TestShutdownReleases(t *testing.T) {
	bg := context.Background()
	servers := shared[:3]
	rcs := clientsOn(t, servers, nil)
	name := redistest.Key(t)
	rl := redlock.New(rcs, name, nil)
	ctx, err := rl.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n := records(t, servers, name); n != 3 {
		t.Fatalf("%d records after Lock, want 3", n)
	}
	if err := rcs[0].Close(); err != nil {
		t.Fatal(err)
	}
	if n := servers[0].Client(t).Exists(bg, name).Val(); n != 0 {
		t.Fatalf("record on the closed client's master still there (PTTL %v)", servers[0].Client(t).PTTL(bg, name).Val())
	}
	if n := records(t, servers, name); n != 2 {
		t.Fatalf("%d records after one client closed, want the other 2", n)
	}
	if ctx.Err() != nil {
		t.Fatalf("lock lost with 2 of 3 masters holding: %v", context.Cause(ctx))
	}
	// A second client closing leaves one master of three: below quorum,
	// so the holder is told.
	if err := rcs[1].Close(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 2*time.Second, "holder told of the lost quorum", func() bool { return ctx.Err() != nil })
	if !errors.Is(context.Cause(ctx), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(ctx))
	}
	if err := rl.Unlock(ctx); err != nil && !errors.Is(err, relock.ErrClosed) && !errors.Is(err, relock.ErrNotHeld) {
		t.Fatal(err)
	}
	if n := records(t, servers, name); n != 0 {
		t.Fatalf("%d records after Unlock", n)
	}
}
