package locktest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/rwlock"
)

// RunReaders runs the read/write lock's own suite, the read side's
// behaviour and its exclusion with the write side, on srv (Run checks the
// write side alone with RWWriter).
func RunReaders(t *testing.T, srv *redistest.Server) {
	(&env{srv: srv, k: RWWriter}).runAll(t, readerTests)
}

// RunReadersCluster is RunReaders on the cluster c.
func RunReadersCluster(t *testing.T, c *redistest.Cluster) {
	(&env{cluster: c, k: RWWriter}).runAll(t, readerTests)
}

var readerTests = []test{
	{"ReadersShareWriterExcludes", readersShareWriterExcludes, false},
	{"WriteUnlockWakesAllReaders", writeUnlockWakesAllReaders, false},
	{"ReentrancyAndDowngrade", reentrancyAndDowngrade, false},
	{"ForceUnlockSides", forceUnlockSides, false},
	{"ForceUnlockTellsReaders", forceUnlockTellsReaders, false},
	{"Exclusion", readWriteExclusion, false},
}

// rw returns the read/write lock named name on a relock client of its own.
func (e *env) rw(t testing.TB, name string) *rwlock.RWMutex {
	t.Helper()
	return rwlock.New(e.client(t, nil), name, nil)
}

// readersShareWriterExcludes: readers on different clients hold the lock
// together; a writer waits for the last of them and then holds it alone;
// readers wait while it does.
func readersShareWriterExcludes(t *testing.T, e *env) {
	bg := context.Background()
	name := redistest.Key(t)
	const readers = 4
	rws := make([]*rwlock.RWMutex, readers)
	rctxs := make([]context.Context, readers)
	for i := range readers {
		rws[i] = e.rw(t, name)
		ctx, err := rws[i].TryRLock(bg, 0)
		if err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
		rctxs[i] = ctx
	}
	writer := e.rw(t, name)
	if _, err := writer.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock with readers in = %v, want ErrNotAcquired", err)
	}
	got := make(chan context.Context, 1)
	go func() {
		ctx, err := writer.Lock(bg)
		if err != nil {
			t.Error(err)
		}
		got <- ctx
	}()
	for i := range readers {
		time.Sleep(20 * time.Millisecond)
		select {
		case <-got:
			t.Fatalf("writer got in with %d readers left", readers-i)
		default:
		}
		if err := rws[i].RUnlock(rctxs[i]); err != nil {
			t.Fatal(err)
		}
	}
	var wctx context.Context
	select {
	case wctx = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("writer not in after the last reader left")
	}
	if wctx == nil {
		t.FailNow()
	}
	if _, err := rws[0].TryRLock(bg, 100*time.Millisecond); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryRLock while a writer holds = %v, want ErrNotAcquired", err)
	}
	if err := writer.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
	if n := e.redis(t).Exists(bg, name).Val(); n != 0 {
		t.Fatal("lock left after the writer left")
	}
}

// writeUnlockWakesAllReaders: readers waiting on a writer, several on one
// client, all get in together when it leaves: woken by the "1" message,
// not one by one and not by their 30s TTL.
func writeUnlockWakesAllReaders(t *testing.T, e *env) {
	bg := context.Background()
	name := redistest.Key(t)
	writer := e.rw(t, name)
	wctx := redistest.Lock(t, writer.Writer(), bg)
	clients := []*relock.Client{e.client(t, nil), e.client(t, nil)}
	const readers = 8
	raw := e.redis(t)
	var wg sync.WaitGroup
	acquired := make(chan time.Time, readers)
	for i := range readers {
		rw := rwlock.New(clients[i%2], name, nil)
		wg.Go(func() {
			ctx, err := rw.RLock(bg)
			acquired <- time.Now()
			if err != nil {
				t.Error(err)
				return
			}
			<-wctx.Done()
			_ = rw.RUnlock(ctx)
		})
	}
	redistest.Eventually(t, 5*time.Second, "readers subscribed", func() bool {
		return e.subscribers(t, raw, name) == int64(len(clients))
	})
	time.Sleep(50 * time.Millisecond) // let every reader's retry after subscribing land
	released := time.Now()
	if err := writer.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
	var last time.Duration
	for range readers {
		select {
		case at := <-acquired:
			last = max(last, at.Sub(released))
		case <-time.After(5 * time.Second):
			t.Fatal("a reader was not woken by the write unlock")
		}
	}
	t.Logf("all %d readers in %v after the write unlock", readers, last)
	if last > time.Second {
		t.Fatalf("last reader got in %v after the write unlock: not woken at once", last)
	}
	wg.Wait()
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Fatal("lock left after every reader left")
	}
}

// reentrancyAndDowngrade: nested holds count on each side; a writer may
// take read holds and keeps them after its write holds go; a reader asking
// for the write lock is refused at once.
func reentrancyAndDowngrade(t *testing.T, e *env) {
	bg := context.Background()
	raw := e.redis(t)
	name := redistest.Key(t)
	rw := e.rw(t, name)
	other := e.rw(t, name)

	// The read hold is taken with the owner's context, not the write
	// hold's: a context derived from the write hold's ends with it.
	owner := relock.WithNewOwner(bg)
	w := redistest.Lock(t, rw.Writer(), owner)
	r := redistest.Lock(t, rw.Reader(), owner) // downgrade: read hold under the write hold
	if n := holdCount(t, rw.Reader(), r); n != 1 {
		t.Fatalf("read holds under the write hold = %d, want 1", n)
	}
	if n := holdCount(t, rw.Writer(), r); n != 1 {
		t.Fatalf("write holds = %d, want 1", n)
	}
	redistest.Unlock(t, rw.Writer(), w)
	if mode := raw.HGet(bg, name, "mode").Val(); mode != "read" {
		t.Fatalf("mode after the write hold went = %q, want read", mode)
	}
	if r.Err() != nil {
		t.Fatal("read hold's context ended with the write hold")
	}
	// Other readers may now join; a writer may not.
	or := redistest.Lock(t, other.Reader(), bg)
	if _, err := other.TryLock(relock.WithNewOwner(bg), 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock in read mode = %v", err)
	}
	redistest.Unlock(t, other.Reader(), or)

	start := time.Now()
	if _, err := rw.Lock(r); !errors.Is(err, relock.ErrUpgrade) {
		t.Fatalf("Lock by a reader = %v, want ErrUpgrade", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("upgrade refused after %v, want at once", took)
	}
	r2 := redistest.Lock(t, rw.Reader(), r)
	if n := holdCount(t, rw.Reader(), r2); n != 2 {
		t.Fatalf("nested read holds = %d, want 2", n)
	}
	redistest.Unlock(t, rw.Reader(), r2)
	redistest.Unlock(t, rw.Reader(), r)
	if err := rw.RUnlock(r); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("extra RUnlock = %v, want ErrNotHeld", err)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("lock left")
	}
}

// forceUnlockSides: each side's ForceUnlock clears only its own mode.
func forceUnlockSides(t *testing.T, e *env) {
	bg := context.Background()
	name := redistest.Key(t)
	rw := e.rw(t, name)
	other := e.rw(t, name)

	w := redistest.Lock(t, rw.Writer(), bg)
	if ok, err := other.Reader().ForceUnlock(bg); err != nil || ok {
		t.Fatalf("read side's ForceUnlock of a write hold = %v, %v; want false", ok, err)
	}
	if locked, _ := other.Writer().IsLocked(bg); !locked || w.Err() != nil {
		t.Fatal("read side's ForceUnlock cleared the write hold")
	}
	if ok, err := other.Writer().ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("write side's ForceUnlock = %v, %v; want true", ok, err)
	}
	r := redistest.Lock(t, rw.Reader(), bg)
	if ok, err := other.Writer().ForceUnlock(bg); err != nil || ok {
		t.Fatalf("write side's ForceUnlock of read holds = %v, %v; want false", ok, err)
	}
	if locked, _ := other.Reader().IsLocked(bg); !locked || r.Err() != nil {
		t.Fatal("write side's ForceUnlock cleared the read holds")
	}
	if ok, err := other.ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("RWMutex.ForceUnlock of read holds = %v, %v; want true", ok, err)
	}
	if locked, _ := other.Reader().IsLocked(bg); locked {
		t.Fatal("lock still held after ForceUnlock")
	}
	e.assertNoReadKeys(t, name)
}

// readWriteExclusion: on 8 clients, writers do non-atomic read-modify-
// writes of a counter and write a pair of keys in two steps; readers check
// that the two halves of the pair agree. Any overlap of a writer with
// anyone shows.
func readWriteExclusion(t *testing.T, e *env) {
	const clients, writes, reads = 8, 40, 60
	bg := context.Background()
	name := redistest.Key(t)
	counter, left, right := name+":counter", name+":left", name+":right"
	var wg sync.WaitGroup
	var readsDone atomic.Int64
	for c := range clients {
		rdb := e.redis(t) // the data's: the lock's user may not GET or SET
		rw := e.rw(t, name)
		wg.Go(func() {
			for i := range writes {
				ctx, err := rw.Lock(bg)
				if err != nil {
					t.Error(err)
					return
				}
				n, _ := rdb.Get(ctx, counter).Int()
				rdb.Set(ctx, left, strconv.Itoa(c*1000+i), 0)
				rdb.Set(ctx, counter, n+1, 0)
				rdb.Set(ctx, right, strconv.Itoa(c*1000+i), 0)
				if err := rw.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range reads {
				ctx, err := rw.RLock(bg)
				if err != nil {
					t.Error(err)
					return
				}
				l, r := rdb.Get(ctx, left).Val(), rdb.Get(ctx, right).Val()
				if l != r {
					t.Errorf("reader saw a half-written pair: %q / %q", l, r)
				}
				readsDone.Add(1)
				if err := rw.RUnlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	raw := e.redis(t)
	if n, err := raw.Get(bg, counter).Int(); err != nil || n != clients*writes {
		t.Fatalf("counter = %d (%v), want %d", n, err, clients*writes)
	}
	if readsDone.Load() != clients*reads {
		t.Fatalf("%d reads done, want %d", readsDone.Load(), clients*reads)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("lock left in Redis")
	}
	e.assertNoReadKeys(t, name)
	raw.Del(bg, counter)
	raw.Del(bg, left)
	raw.Del(bg, right)
}

// assertNoReadKeys checks that no read hold's timeout key of lock name is
// left; they live in the lock's slot.
func (e *env) assertNoReadKeys(t testing.TB, name string) {
	t.Helper()
	node := nodeFor(t, e.redis(t), "{"+name+"}")
	if keys := node.Keys(context.Background(), "{"+globEscape(name)+"}:*").Val(); len(keys) != 0 {
		t.Fatalf("read hold timeout keys left: %v", keys)
	}
}
