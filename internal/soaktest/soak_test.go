package soaktest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/semaphore"
)

// The soak's shape: churnFor of load sampled every sampleEvery, then the
// records given settleFor to leave. The watchdog's lease is short, so
// that every give-up record's bound (a lease) is a small part of the
// churn and growth past it shows within the run.
const (
	churnFor    = 60 * time.Second
	sampleEvery = 10 * time.Second
	settleFor   = 15 * time.Second
	watchdog    = 2 * time.Second
	heldLeases  = 5000
)

// The hot names of the churn, one a kind.
const (
	hotReentrant = "soak:reentrant"
	hotFair      = "soak:fair"
	hotPermits   = "soak:permits"
	hotGroup     = "soak:group"
	hotRW        = "soak:rw"
)

// A record is a Redis key the soak samples: how many entries it has
// (fields, members or elements; 1 for a string, 0 when absent) and its
// MEMORY USAGE.
type record struct {
	what, key string
	entries   []int64 // one per sample
	bytes     []int64
}

// records are the keys whose size must follow the load's rate, not its
// length: every give-up record, queue, registry and hash the churn
// writes to.
func records() []*record {
	return []*record{
		{what: "reentrant give-up record", key: layout.LockGone(hotReentrant)},
		{what: "reentrant waiters registry", key: layout.LockWaiters(hotReentrant)},
		{what: "fair give-up record", key: layout.LockGone(hotFair)},
		{what: "fair queue", key: layout.FairQueue(hotFair)},
		{what: "fair timeouts", key: layout.FairTimeouts(hotFair)},
		{what: "fair waiters registry", key: layout.LockWaiters(hotFair)},
		{what: "permits' gone ids", key: layout.PermitsGone(hotPermits)},
		{what: "permits held", key: layout.PermitTimeouts(hotPermits)},
		{what: "permits' waiters registry", key: layout.SemaphoreWaiters(hotPermits)},
		{what: "group lock hash", key: hotGroup},
		{what: "group give-up record", key: layout.LockGone(hotGroup)},
		{what: "read/write lock hash", key: hotRW},
	}
}

// TestSoak runs, on one real redis-server and for churnFor: 4 clients of
// 4 goroutines each locking a hot reentrant, fair and permits name with
// deadlines of 0-3 ms (so that most give up, many with their replies
// cut); a group lock with one value held and new values taken with
// leases of 50-100 ms never unlocked; a read/write lock with one reader
// held and new readers with leases of 50 ms never unlocked; and
// heldLeases locks held by the watchdog throughout. Every sampleEvery it
// counts the records' entries; it fails when a record's late samples
// are more than twice its early ones (growth with time, not rate), when
// a give-up record outlives settleFor after the churn, or when a held
// lease was lost.
func TestSoak(t *testing.T) {
	redistest.SkipShort(t, "a soak of about two minutes")
	s := redistest.Start(t)
	s.RequireReal(t)
	raw := s.Client(t)
	ctx := context.Background()

	clients := make([]*relock.Client, 4)
	for i := range clients {
		clients[i] = redistest.Relock(t, s.LockClient(t), &relock.Options{WatchdogTimeout: watchdog, Logger: quiet})
	}
	held := holdLeases(t, clients[0], heldLeases)
	if _, err := permits.New(clients[0], hotPermits, nil).TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ops atomic.Int64
	for _, rc := range clients {
		re := reentrant.New(rc, hotReentrant, nil)
		fm := fair.New(rc, hotFair, nil)
		pm := permits.New(rc, hotPermits, nil)
		for range 4 {
			wg.Go(func() { churnLock(stop, &ops, re) })
			wg.Go(func() { churnLock(stop, &ops, fm) })
			wg.Go(func() { churnPermit(stop, &ops, pm) })
		}
	}
	groupHeld := redistest.Lock(t, grouplock.New(clients[1], hotGroup, []string{"held"}, nil), ctx)
	wg.Go(func() { expireGroupValues(t, stop, clients[1]) })
	rwHeld := redistest.Lock(t, rwlock.New(clients[2], hotRW, nil).Reader(), ctx)
	wg.Go(func() { expireReaders(t, stop, clients[2]) })

	recs := records()
	tick := time.NewTicker(sampleEvery)
	for range int(churnFor / sampleEvery) {
		<-tick.C
		sample(t, raw, recs)
		t.Logf("%v: %d churn calls; %s", time.Duration(len(recs[0].entries))*sampleEvery, ops.Load(), summary(recs))
	}
	tick.Stop()
	close(stop)
	wg.Wait()
	churnEnded := time.Now()

	for _, r := range recs {
		if grew(r.entries) {
			t.Errorf("%s %s grew with the churn's length: entries %v, bytes %v", r.what, r.key, r.entries, r.bytes)
		}
	}
	for i, lctx := range held {
		if lctx.Err() != nil {
			t.Errorf("held lease %d lost during the churn: %v", i, context.Cause(lctx))
		}
	}
	releaseLeases(t, clients[0], held)
	redistest.Unlock(t, grouplock.New(clients[1], hotGroup, []string{"held"}, nil), groupHeld)
	redistest.Unlock(t, rwlock.New(clients[2], hotRW, nil).Reader(), rwHeld)

	// The give-up records are bounded by their leases: gone settleFor
	// after the churn at the latest.
	time.Sleep(time.Until(churnEnded.Add(settleFor)))
	for _, name := range []string{hotReentrant, hotFair, hotGroup} {
		for _, key := range []string{layout.LockGone(name), layout.LockGoneDue(name)} {
			if n, err := raw.Exists(ctx, key).Result(); err != nil || n != 0 {
				pttl, _ := raw.PTTL(ctx, key).Result()
				t.Errorf("%s still exists %v after the churn (PTTL %v, err %v)", key, settleFor, pttl, err)
			}
		}
	}
}

// TestSoakHeap measures the client's heap over three loads that each
// use something new every time: nested re-entries in one long hold;
// semaphores acquired on one client and released on another, a name
// each; and, on a cluster with sharded pub/sub, contended locks on
// distinct names. It fails when the heap grows with their count.
func TestSoakHeap(t *testing.T) {
	redistest.SkipShort(t, "a soak of about a minute")
	s := redistest.Start(t)
	s.RequireReal(t)
	t.Run("Nested", func(t *testing.T) {
		heapNested(t, redistest.Relock(t, s.LockClient(t), &relock.Options{Logger: quiet}))
	})
	t.Run("SemaphoreElsewhere", func(t *testing.T) { heapSemaphores(t, s) })
	t.Run("ShardedNames", heapShardedNames)
}

// churnLock locks and unlocks mu with deadlines of 0-3 ms until stop is
// closed, each Lock a new owner.
func churnLock(stop <-chan struct{}, ops *atomic.Int64, mu relock.Locker) {
	for open(stop) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(4))*time.Millisecond)
		if lctx, err := mu.Lock(ctx); err == nil {
			_ = mu.Unlock(lctx)
		}
		cancel()
		ops.Add(1)
	}
}

// churnPermit acquires and releases a permit of pm as churnLock does.
func churnPermit(stop <-chan struct{}, ops *atomic.Int64, pm *permits.Semaphore) {
	for open(stop) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(4))*time.Millisecond)
		if p, err := pm.Acquire(ctx); err == nil {
			_ = p.Release(context.Background())
		}
		cancel()
		ops.Add(1)
	}
}

// expireGroupValues locks a new value of hotGroup every 2 ms, with a
// lease of 50-100 ms, and never unlocks it: a holder that died.
func expireGroupValues(t *testing.T, stop <-chan struct{}, rc *relock.Client) {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for i := 0; open(stop); i++ {
		lease := time.Duration(50+rand.IntN(51)) * time.Millisecond
		mu := grouplock.New(rc, hotGroup, []string{fmt.Sprint("v", i)}, &grouplock.Options{Lease: lease})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if _, err := mu.Lock(ctx); err != nil {
			t.Errorf("group value %d: %v", i, err)
		}
		cancel()
		<-tick.C
	}
}

// expireReaders takes a read hold of hotRW for a new owner every 2 ms,
// with a lease of 50 ms, and never releases it: a reader that died
// while another read hold kept the lock in read mode.
func expireReaders(t *testing.T, stop <-chan struct{}, rc *relock.Client) {
	rw := rwlock.New(rc, hotRW, &rwlock.Options{Lease: 50 * time.Millisecond})
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for i := 0; open(stop); i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if _, err := rw.RLock(ctx); err != nil {
			t.Errorf("reader %d: %v", i, err)
		}
		cancel()
		<-tick.C
	}
}

// open reports whether stop is still open.
func open(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return false
	default:
		return true
	}
}

// holdLeases locks n distinct names on rc, 16 at a time, and returns
// their lock contexts.
func holdLeases(t *testing.T, rc *relock.Client, n int) []context.Context {
	t.Helper()
	held := make([]context.Context, n)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				lctx, err := reentrant.New(rc, fmt.Sprint("soak:held:", i), nil).Lock(context.Background())
				if err != nil {
					t.Errorf("held lease %d: %v", i, err)
					return
				}
				held[i] = lctx
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return held
}

// releaseLeases unlocks what holdLeases locked.
func releaseLeases(t *testing.T, rc *relock.Client, held []context.Context) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < len(held); i += 16 {
				if err := reentrant.New(rc, fmt.Sprint("soak:held:", i), nil).Unlock(held[i]); err != nil {
					t.Errorf("held lease %d: Unlock: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
}

// sample appends each record's entries and MEMORY USAGE now.
func sample(t *testing.T, raw *redis.Client, recs []*record) {
	t.Helper()
	ctx := context.Background()
	for _, r := range recs {
		n, err := entries(ctx, raw, r.key)
		if err != nil {
			t.Fatalf("%s: %v", r.key, err)
		}
		b, err := raw.MemoryUsage(ctx, r.key).Result()
		if err == redis.Nil {
			b, err = 0, nil
		}
		if err != nil {
			t.Fatalf("MEMORY USAGE %s: %v", r.key, err)
		}
		r.entries = append(r.entries, n)
		r.bytes = append(r.bytes, b)
	}
}

// entries counts key's fields, members or elements by its type.
func entries(ctx context.Context, raw *redis.Client, key string) (int64, error) {
	kind, err := raw.Type(ctx, key).Result()
	if err != nil {
		return 0, err
	}
	switch kind {
	case "none":
		return 0, nil
	case "hash":
		return raw.HLen(ctx, key).Result()
	case "zset":
		return raw.ZCard(ctx, key).Result()
	case "list":
		return raw.LLen(ctx, key).Result()
	case "set":
		return raw.SCard(ctx, key).Result()
	default:
		return 1, nil
	}
}

// summary shows each record's latest sample.
func summary(recs []*record) string {
	var out string
	for _, r := range recs {
		out += fmt.Sprintf("%s %d (%d B); ", r.key, r.entries[len(r.entries)-1], r.bytes[len(r.bytes)-1])
	}
	return out
}

// slack is how many entries a record may gain past twice its early size
// before grew calls it growth: noise of a record that is small anyway.
const slack = 200

// grew reports whether series, samples of a record over the churn, grew
// with the churn's length: its last two samples above twice the largest
// of its first two, plus slack. A record bounded by rate x bound is flat
// after its first bound, up to the churn's own ups and downs; one whose
// entries never leave grows linearly, three times over from the second
// sample to the sixth.
func grew(series []int64) bool {
	if len(series) < 4 {
		return false
	}
	early := max(series[0], series[1])
	late := max(series[len(series)-1], series[len(series)-2])
	return late > 2*early+slack
}

// heapOf is the live heap after a full collection.
func heapOf() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// The heap loads run for warmFor, then twice for at most heapFor or
// heapOps operations more, reading the heap after each part. They fail
// when the heap grew over both measured parts by more than perOp bytes
// an operation and by more than heapNoise: a structure that keeps an
// entry an operation costs 150-300 bytes each, and grows in both parts
// alike. What only grows to a working size (connection pools, maps, the
// race detector's bookkeeping) may still be filling after the warm-up
// on a loaded machine, and does so in the first part only.
const (
	warmFor   = 3 * time.Second
	heapFor   = 5 * time.Second
	heapOps   = 100_000
	perOp     = 64
	heapNoise = 1 << 19
)

// heapLoad runs op from workers goroutines for warmFor, then measures
// the heap over two parts of heapFor more, waiting settle (the bound of
// what each operation may keep for a while) before each reading; it
// fails t when the heap grew with the count of operations in both parts,
// or when op failed (which ends that worker).
func heapLoad(t *testing.T, workers int, settle time.Duration, op func(w, i int) error) {
	t.Helper()
	var next atomic.Int64
	run := func(d time.Duration, limit int64) int64 {
		deadline := time.Now().Add(d)
		var done atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for time.Now().Before(deadline) && done.Add(1) <= limit {
					if err := op(w, int(next.Add(1))); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return min(done.Load(), limit)
	}
	run(warmFor, heapOps)
	time.Sleep(settle)
	heap := []int64{heapOf()}
	var ops []int64
	for range 2 {
		ops = append(ops, run(heapFor, heapOps))
		time.Sleep(settle)
		heap = append(heap, heapOf())
	}
	grew := true
	for part := range ops {
		grown, n := heap[part+1]-heap[part], ops[part]
		t.Logf("part %d: %d operations: heap %+d B (%.1f B an operation)", part+1, n, grown, float64(grown)/float64(n))
		if n < 500 {
			t.Fatalf("only %d operations in %v", n, heapFor)
		}
		grew = grew && grown > heapNoise && grown > perOp*n
	}
	if t.Failed() {
		t.FailNow()
	}
	if grew {
		t.Errorf("heap grew in both parts: %+d B over %d operations, then %+d B over %d",
			heap[1]-heap[0], ops[0], heap[2]-heap[1], ops[1])
	}
}

// heapNested re-enters one long hold, and unlocks each re-entry, from 8
// goroutines: an inner Unlock must free what its Lock kept.
func heapNested(t *testing.T, rc *relock.Client) {
	mu := reentrant.New(rc, "soak:nested", nil)
	lctx := redistest.Lock(t, mu, context.Background())
	heapLoad(t, 8, 0, func(int, int) error { return lockUnlock(mu, lctx) })
	redistest.Unlock(t, mu, lctx)
}

// heapSemaphores acquires a permit of a semaphore on one client and
// releases it on another, a new name each time, from 8 goroutines; each
// semaphore's count is deleted after, as a service's would be. What the
// clients keep of a name lasts at most a watchdog timeout (a take's
// record in Redis), which the heap's readings wait out.
func heapSemaphores(t *testing.T, s *redistest.Server) {
	raw := s.Client(t)
	a := redistest.Relock(t, s.LockClient(t), &relock.Options{WatchdogTimeout: time.Second, Logger: quiet})
	b := redistest.Relock(t, s.LockClient(t), &relock.Options{WatchdogTimeout: time.Second, Logger: quiet})
	ctx := context.Background()
	heapLoad(t, 8, 2*time.Second, func(w, i int) error {
		name := fmt.Sprint("soak:sem:", i)
		if err := setAcquireRelease(a, b, name); err != nil {
			return err
		}
		return raw.Del(ctx, name).Err()
	})
}

// heapShardedNames locks distinct names contended by two goroutines
// each, on a cluster with sharded pub/sub and no lingering channels: each
// name's channel is subscribed and unsubscribed once.
func heapShardedNames(t *testing.T) {
	c := redistest.StartCluster(t)
	rc := redistest.Relock(t, c.LockClient(t), &relock.Options{PubSub: relock.PubSubSharded, Linger: -1, Logger: quiet})
	heapLoad(t, 4, 0, func(w, i int) error { return contend(rc, fmt.Sprint("soak:shard:", i)) })
}

// contend has two goroutines lock and unlock name three times each.
func contend(rc *relock.Client, name string) error {
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for g := range errs {
		wg.Go(func() {
			mu := reentrant.New(rc, name, nil)
			for range 3 {
				if errs[g] = lockUnlock(mu, context.Background()); errs[g] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// lockUnlock locks mu with ctx, within 10s, and unlocks it.
func lockUnlock(mu relock.Locker, ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return fmt.Errorf("Lock(%s): %w", mu.Name(), err)
	}
	if err := mu.Unlock(lctx); err != nil {
		return fmt.Errorf("Unlock(%s): %w", mu.Name(), err)
	}
	return nil
}

// setAcquireRelease sets up the semaphore name with one permit on a,
// acquires it on a and releases it on b.
func setAcquireRelease(a, b *relock.Client, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sa := semaphore.New(a, name, nil)
	if _, err := sa.TrySetPermits(ctx, 1); err != nil {
		return fmt.Errorf("TrySetPermits(%s): %w", name, err)
	}
	if err := sa.Acquire(ctx, 1); err != nil {
		return fmt.Errorf("Acquire(%s): %w", name, err)
	}
	if err := semaphore.New(b, name, nil).Release(ctx, 1); err != nil {
		return fmt.Errorf("Release(%s): %w", name, err)
	}
	return nil
}
