package renew_test

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/renew"
)

// BenchmarkRound measures renewal rounds of n held locks on the package's
// redis-server: one op is one round, the batches that renew n leases
// (one pipeline of at most DefaultBatchSize renewals each). ns/op is the
// round interval; batch-ns is how long a batch took on average,
// batches/round how many a round had, cpu-ns/round the process CPU per
// round (the watchdog is all that runs), and allocs/op the allocations
// per round. Run with:
// go test -run '^$' -bench Round ./internal/renew
func BenchmarkRound(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("leases=%d", n), func(b *testing.B) { benchmarkRound(b, n) })
	}
}

// roundHook reports every pipeline's size and duration.
type roundHook struct{ rounds chan<- [2]int64 }

func (roundHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (roundHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h roundHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		t := time.Now()
		err := next(ctx, cmds)
		h.rounds <- [2]int64{int64(len(cmds)), int64(time.Since(t))}
		return err
	}
}

func benchmarkRound(b *testing.B, n int) {
	// A lease long enough that a round of 10k renewals on a loaded
	// 2-core machine ends well within its interval.
	const timeout = 600 * time.Millisecond
	ctx := context.Background()
	rounds := make(chan [2]int64, 1024)
	// ContextTimeoutEnabled: the watchdog renews through this client, so
	// the hook sees its rounds.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	defer rdb.Close()

	prefix := fmt.Sprintf("%s:%d", b.Name(), time.Now().UnixNano())
	field := "5b7e3f7e-8d4a-4c1e-9d0b-2f6f0d1c3a44:1"
	pipe := rdb.Pipeline()
	for i := range n {
		key := fmt.Sprintf("%s:%d", prefix, i)
		pipe.HSet(ctx, key, field, 1)
		pipe.PExpire(ctx, key, timeout)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	// Loaded now, the renewal script is never answered NOSCRIPT: every
	// round is one pipeline.
	if err := lua.Renew().Load(ctx, rdb).Err(); err != nil {
		b.Fatal(err)
	}
	rdb.AddHook(roundHook{rounds})

	w := renew.New(rdb, timeout, nil)
	defer w.Close()
	lost := make(chan error, n)
	sent := time.Now()
	for i := range n {
		key := fmt.Sprintf("%s:%d", prefix, i)
		r := renew.Renewal{Script: lua.Renew(), Keys: []string{key}, Args: []any{timeout.Milliseconds(), field}}
		if _, err := w.Watch(r, sent, func(err error) { lost <- err }); err != nil {
			b.Fatal(err)
		}
	}
	// next returns the time the batches of a round took, and how many.
	next := func() (took, batches int64) {
		for renewed := int64(0); renewed < int64(n); batches++ {
			select {
			case r := <-rounds:
				renewed += r[0]
				took += r[1]
			case err := <-lost:
				// No more renewals of it: a round would never end.
				b.Fatalf("a lease lost: %v", err)
			}
		}
		return took, batches
	}
	next()

	var took, batches int64
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		t, k := next()
		took += t
		batches += k
	}
	b.StopTimer()
	b.ReportMetric(float64(took)/float64(batches), "batch-ns")
	b.ReportMetric(float64(batches)/float64(b.N), "batches/round")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/round")
	if len(lost) > 0 {
		b.Errorf("%d leases lost: %v", len(lost), <-lost)
	}
}

// cpuTime is the process's user plus system CPU time in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkLeaseHeap measures the watchdog's heap per lease: the Lease
// Watch allocates and the watchdog's record of it, for n leases whose
// Renewals exist beforehand. The lease is long enough that no renewal
// goes out meanwhile. Run with:
// go test -run '^$' -bench LeaseHeap ./internal/renew
func BenchmarkLeaseHeap(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("leases=%d", n), func(b *testing.B) { benchmarkLeaseHeap(b, n) })
	}
}

func benchmarkLeaseHeap(b *testing.B, n int) {
	const timeout = time.Hour
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	renewals := make([]renew.Renewal, n)
	for i := range renewals {
		renewals[i] = renew.Renewal{Script: lua.Renew(), Keys: []string{fmt.Sprint("heap:", i)}, Args: []any{timeout.Milliseconds(), "f"}}
	}
	lost := func(error) {}
	var total uint64
	for range b.N {
		w := renew.New(rdb, timeout, nil)
		before := heapAlloc()
		sent := time.Now()
		for _, r := range renewals {
			if _, err := w.Watch(r, sent, lost); err != nil {
				b.Fatal(err)
			}
		}
		total += heapAlloc() - before
		w.Close()
	}
	b.ReportMetric(float64(total)/float64(b.N*n), "heap-B/lease")
}

// heapAlloc is the live heap after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
