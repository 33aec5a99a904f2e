package relock_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/observe"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/watchdog"
)

// recorder is an Observer that keeps every event.
type recorder struct {
	mu       sync.Mutex // guards the rest
	starts   []observe.Lock
	ops      []observe.Op
	acquires []observe.Acquire
	unlocks  []error
	holds    []observe.HoldEnd
	rounds   []observe.Round
	evicts   []observe.Eviction
}

func (r *recorder) StartAcquire(ctx context.Context, l observe.Lock, op observe.Op) (context.Context, func(observe.Acquire)) {
	r.mu.Lock()
	r.starts = append(r.starts, l)
	r.ops = append(r.ops, op)
	r.mu.Unlock()
	return ctx, func(a observe.Acquire) {
		r.mu.Lock()
		r.acquires = append(r.acquires, a)
		r.mu.Unlock()
	}
}

func (r *recorder) StartUnlock(ctx context.Context, _ observe.Lock, _ observe.Op) (context.Context, func(error)) {
	return ctx, func(err error) {
		r.mu.Lock()
		r.unlocks = append(r.unlocks, err)
		r.mu.Unlock()
	}
}

func (r *recorder) HoldEnded(e observe.HoldEnd) {
	r.mu.Lock()
	r.holds = append(r.holds, e)
	r.mu.Unlock()
}

func (r *recorder) WatchdogRound(e observe.Round) {
	r.mu.Lock()
	r.rounds = append(r.rounds, e)
	r.mu.Unlock()
}

func (r *recorder) MayEvict(e observe.Eviction) {
	r.mu.Lock()
	r.evicts = append(r.evicts, e)
	r.mu.Unlock()
}

// snapshot returns copies of the events so far.
func (r *recorder) snapshot() recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	return recorder{
		starts:   append([]observe.Lock(nil), r.starts...),
		ops:      append([]observe.Op(nil), r.ops...),
		acquires: append([]observe.Acquire(nil), r.acquires...),
		unlocks:  append([]error(nil), r.unlocks...),
		holds:    append([]observe.HoldEnd(nil), r.holds...),
		rounds:   append([]observe.Round(nil), r.rounds...),
		evicts:   append([]observe.Eviction(nil), r.evicts...),
	}
}

// TestObserver: an Observer is told of a contended acquire (outcome,
// wait, attempts), a TryLock that gives up, an unlock, the hold's end
// with its cause (unlocked, lost, closed), and the watchdog's rounds;
// Stats counts holds, waiters and channels.
func TestObserver(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	srv.RequireReal(t)
	bg := context.Background()
	name := redistest.Key(t)
	rec := &recorder{}
	const lease = 600 * time.Millisecond
	rc := redistest.Relock(t, srv.LockClient(t), &relock.Options{Observer: rec, WatchdogTimeout: lease})
	holder := reentrant.New(redistest.Relock(t, srv.LockClient(t), nil), name, nil)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}

	mu := reentrant.New(rc, name, nil)
	if _, err := mu.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock(0) = %v", err)
	}
	got := make(chan context.Context, 1)
	go func() {
		lctx, err := mu.Lock(bg)
		if err != nil {
			t.Error(err)
		}
		got <- lctx
	}()
	deadline := time.Now().Add(5 * time.Second)
	for rc.Stats().Waiters != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("Stats while waiting = %+v, want 1 waiter", rc.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := rc.Stats(); st.Channels < 1 || st.Holds != 0 {
		t.Fatalf("Stats while waiting = %+v", st)
	}
	time.Sleep(100 * time.Millisecond)
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	lctx := <-got
	if st := rc.Stats(); st.Holds != 1 || st.Waiters != 0 {
		t.Fatalf("Stats while holding = %+v, want 1 hold, 0 waiters", st)
	}
	// A few watchdog rounds renew the hold.
	time.Sleep(lease)
	if err := mu.Unlock(lctx); err != nil {
		t.Fatal(err)
	}

	s := rec.snapshot()
	if len(s.starts) != 2 || s.starts[0] != (observe.Lock{Kind: "reentrant", Name: name}) {
		t.Fatalf("acquire starts %+v", s.starts)
	}
	if !slices.Equal(s.ops, []observe.Op{observe.OpTryLock, observe.OpLock}) {
		t.Fatalf("acquire ops %v, want TryLock then Lock", s.ops)
	}
	if len(s.acquires) != 2 {
		t.Fatalf("acquire ends %+v", s.acquires)
	}
	if a := s.acquires[0]; a.Outcome != observe.NotAcquired || a.Attempts != 1 || !errors.Is(a.Err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock(0) reported %+v", a)
	}
	if a := s.acquires[1]; a.Outcome != observe.Acquired || a.Attempts < 1 || a.Wait < 100*time.Millisecond || a.Err != nil {
		t.Fatalf("contended Lock reported %+v, want acquired after >= 100ms", a)
	}
	if len(s.unlocks) != 1 || s.unlocks[0] != nil {
		t.Fatalf("unlocks %v", s.unlocks)
	}
	if len(s.holds) != 1 || s.holds[0].Cause != nil || s.holds[0].Held < lease || s.holds[0].Lock.Name != name {
		t.Fatalf("hold ends %+v, want one unlocked after >= %v", s.holds, lease)
	}
	if len(s.rounds) == 0 || s.rounds[0].Leases != 1 || s.rounds[0].Failures != 0 || s.rounds[0].Duration <= 0 {
		t.Fatalf("watchdog rounds %+v", s.rounds)
	}

	// A lost lease: the key deleted under the holder.
	lctx, err = mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	// Only the lock context keeps its hold from being reported dropped
	// (see docs/leaks.md): it stays reachable until the loss is seen, as
	// the channel Done returns would not keep it.
	defer runtime.KeepAlive(lctx)
	srv.Client(t).Del(bg, name)
	select {
	case <-lctx.Done():
	case <-time.After(5 * lease):
		t.Fatal("lost lease not reported")
	}
	// The Observer is told right after the context is cancelled.
	deadline = time.Now().Add(5 * time.Second)
	for s = rec.snapshot(); len(s.holds) < 2; s = rec.snapshot() {
		if time.Now().After(deadline) {
			t.Fatal("the lost hold's end was not observed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if last := s.holds[len(s.holds)-1]; !errors.Is(last.Cause, relock.ErrLockLost) {
		t.Fatalf("hold end after the key was deleted: %+v", last)
	}
	// The round that found the lock gone reports after its losses. On a
	// loaded machine the lease may run out before a round comes back
	// (watchdog.ErrExpired), and no round finds it gone.
	expired := errors.Is(s.holds[len(s.holds)-1].Cause, watchdog.ErrExpired)
	for !expired && !slices.ContainsFunc(s.rounds, func(r observe.Round) bool { return r.Lost == 1 }) {
		if time.Now().After(deadline) {
			t.Fatalf("no round reported the lock gone: %+v", s.rounds)
		}
		time.Sleep(5 * time.Millisecond)
		s = rec.snapshot()
	}

	// Close: a waiter's acquire ends Closed, a held lock's hold ends with
	// ErrClosed.
	cctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	other := reentrant.New(rc, redistest.Key(t), nil)
	otherHolder := reentrant.New(redistest.Relock(t, srv.LockClient(t), nil), other.Name(), nil)
	octx, err := otherHolder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer otherHolder.Unlock(octx)
	waited := make(chan error, 1)
	go func() {
		_, err := other.Lock(bg)
		waited <- err
	}()
	for rc.Stats().Waiters != 1 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	<-waited
	s = rec.snapshot()
	if last := s.acquires[len(s.acquires)-1]; last.Outcome != observe.Closed {
		t.Fatalf("acquire ended by Close reported %+v", last)
	}
	if last := s.holds[len(s.holds)-1]; !errors.Is(last.Cause, relock.ErrClosed) {
		t.Fatalf("hold ended by Close reported %+v", last)
	}
	// Kept to here: a lock context dropped sooner is a forgotten unlock.
	if cause := context.Cause(cctx); !errors.Is(cause, relock.ErrClosed) {
		t.Fatalf("lock context ended by Close: cause %v", cause)
	}
}

// TestWatchdogBatchSize: Options.WatchdogBatchSize bounds the watchdog's
// batches: ten locks taken together are renewed in batches of at most
// three, every lock still held.
func TestWatchdogBatchSize(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	bg := context.Background()
	rec := &recorder{}
	const lease, size, n = 600 * time.Millisecond, 3, 10
	rc := redistest.Relock(t, srv.LockClient(t), &relock.Options{Observer: rec, WatchdogTimeout: lease, WatchdogBatchSize: size})
	var held []context.Context
	var mus []*reentrant.Mutex
	for range n {
		mu := reentrant.New(rc, redistest.Key(t), nil)
		lctx, err := mu.Lock(bg)
		if err != nil {
			t.Fatal(err)
		}
		mus, held = append(mus, mu), append(held, lctx)
	}
	time.Sleep(lease)
	renewed := 0
	for _, r := range rec.snapshot().rounds {
		if r.Leases > size {
			t.Fatalf("a watchdog batch of %d leases, want at most %d", r.Leases, size)
		}
		renewed += r.Leases
	}
	if renewed < n {
		t.Fatalf("%d renewals of %d locks in a lease", renewed, n)
	}
	for i, mu := range mus {
		if err := held[i].Err(); err != nil {
			t.Fatalf("lock %d lost: %v", i, context.Cause(held[i]))
		}
		if err := mu.Unlock(held[i]); err != nil {
			t.Fatal(err)
		}
	}
}
