package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/reentrant"
)

// scaleResult is scenario (z), how relock's cost grows with what a
// long-lived service asks of one Client: distinct names, held leases,
// waiters, and give-ups on one hot name sustained for a minute.
type scaleResult struct {
	Names   []scaleNames   `json:"names"`
	Leases  []scaleLeases  `json:"leases"`
	Waiters []scaleWaiters `json:"waiters"`
	Churn   []scaleChurn   `json:"churn"`
}

// scaleNames is one row of distinct names, each locked and unlocked once
// through one Client.
type scaleNames struct {
	Kind       string  `json:"kind"`
	Names      int     `json:"names"`
	Seconds    float64 `json:"seconds"`
	HeapMiB    float64 `json:"client_heap_mib_after"` // the Client's live heap once every name was unlocked
	Goroutines int     `json:"client_goroutines_after"`
	KeysLeft   int64   `json:"keys_left"`
	Err        string  `json:"error,omitempty"`
}

// scaleLeases is one row of leases held on one Client while its
// watchdog renews them.
type scaleLeases struct {
	Leases        int     `json:"leases"`
	WatchdogMs    int64   `json:"watchdog_timeout_ms"`
	WindowSeconds float64 `json:"window_seconds"`
	Lost          int     `json:"leases_lost"` // lock contexts ended in the window, and unlocks that failed
	Batches       int     `json:"renewal_batches"`
	BatchMax      int     `json:"largest_batch"`
	BatchTime     dist    `json:"batch_time"`
	RenewalsPerS  float64 `json:"renewals_per_s"`
	RedisCPUPct   float64 `json:"redis_cpu_pct"`
	ClientCPUPct  float64 `json:"client_cpu_pct"`
	BytesPerLease float64 `json:"client_bytes_per_lease"`
	Err           string  `json:"error,omitempty"`
}

// scaleWaiters is one row of goroutines of one Client each waiting on a
// lock of its own that another Client holds, then woken by its release.
type scaleWaiters struct {
	Waiters        int     `json:"waiters"`
	BytesPerWaiter float64 `json:"client_bytes_per_waiter"`
	CmdsPerSec     float64 `json:"redis_commands_per_s_while_waiting"`
	Wake           dist    `json:"wake"` // from a lock's Unlock returning to its waiter's Lock returning
	Woken          int     `json:"woken"`
	Err            string  `json:"error,omitempty"`
}

// scaleChurn is sustained give-ups on one hot name of a kind: relock's
// own records of that name sampled every ChurnSample, and once more
// ChurnSettle after the churn stopped.
type scaleChurn struct {
	Kind    string        `json:"kind"`
	Calls   int64         `json:"calls"`
	Samples []churnSample `json:"samples"`
	After   churnSample   `json:"after"`
	Err     string        `json:"error,omitempty"`
}

// A churnSample is the entries (fields, members, elements) and MEMORY
// USAGE of a name's relock records, summed, at a time since the churn
// began.
type churnSample struct {
	Seconds float64 `json:"seconds"`
	Keys    int     `json:"keys"`
	Entries int64   `json:"entries"`
	Bytes   int64   `json:"bytes"`
}

// scaleID names scenario (z) for -only.
const scaleID = "relock scale"

// scaleKinds are the locks of scenario (z)'s names and churn rows.
var scaleKinds = []string{"reentrant", "fair"}

// scaleSteps is how many progress lines runScale prints.
func scaleSteps(cfg config) int {
	return 2*len(scaleKinds) + len(cfg.ScaleLeases) + len(cfg.ScaleWaiters)
}

// runScale runs scenario (z).
func (e *env) runScale() *scaleResult {
	r := &scaleResult{}
	for _, kind := range scaleKinds {
		row := e.scaleNames(kind)
		r.Names = append(r.Names, row)
		e.progress("scale        names %-9s %8d names in %5.1fs: heap after %5.1f MiB, %d goroutines, %d keys left%s",
			kind, row.Names, row.Seconds, row.HeapMiB, row.Goroutines, row.KeysLeft, errSuffix(errOf(row.Err)))
	}
	for _, l := range e.cfg.ScaleLeases {
		row := e.scaleLeases(l.Leases, l.Watchdog)
		r.Leases = append(r.Leases, row)
		e.progress("scale        leases %8d at %5.1fs: %d lost, %d batches (largest %d), batch p99 %s, Redis CPU %4.1f%%, client CPU %4.1f%%, %s/lease%s",
			row.Leases, l.Watchdog.Seconds(), row.Lost, row.Batches, row.BatchMax, us(row.BatchTime.P99), row.RedisCPUPct, row.ClientCPUPct, bytesStr(row.BytesPerLease), errSuffix(errOf(row.Err)))
	}
	for _, n := range e.cfg.ScaleWaiters {
		row := e.scaleWaiters(n)
		r.Waiters = append(r.Waiters, row)
		e.progress("scale        waiters %7d: %s/waiter, %6.1f cmds/s while waiting, %d woken, wake p99 %s%s",
			row.Waiters, bytesStr(row.BytesPerWaiter), row.CmdsPerSec, row.Woken, us(row.Wake.P99), errSuffix(errOf(row.Err)))
	}
	r.Churn = e.scaleChurn()
	for _, c := range r.Churn {
		first, last := c.Samples[0], c.Samples[len(c.Samples)-1]
		e.progress("scale        churn %-9s %d calls: %d entries (%s) at %.0fs, %d (%s) at %.0fs, %d keys %.0fs after%s",
			c.Kind, c.Calls, first.Entries, bytesStr(float64(first.Bytes)), first.Seconds, last.Entries, bytesStr(float64(last.Bytes)), last.Seconds,
			c.After.Keys, e.cfg.ScaleChurnSettle.Seconds(), errSuffix(errOf(c.Err)))
	}
	return r
}

func errOf(s string) error {
	if s == "" {
		return nil
	}
	return fmt.Errorf("%s", s)
}

// scaleClient is a relock Client over a go-redis client of its own with
// relock's options, a watchdog of lease (0: the default), and probe, if
// set, watching it.
func (e *env) scaleClient(lease time.Duration, p *renewProbe) (*redis.Client, *relock.Client, error) {
	rdb := newGoRedis(e.addr, openOpts{}, true)
	if p != nil {
		rdb.AddHook(p)
	}
	rc, err := relock.New(rdb, &relock.Options{WatchdogTimeout: lease, Logger: quiet})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return rdb, rc, nil
}

// scaleLocker makes kind's lock on name.
func scaleLocker(rc *relock.Client, kind, name string) relock.Locker {
	if kind == "fair" {
		return fair.New(rc, name, nil)
	}
	return reentrant.New(rc, name, nil)
}

// warmPool fills rdb's connection pool, as 64 goroutines calling at
// once would, so that a memory baseline taken after it counts the pool's
// buffers already.
func warmPool(rdb *redis.Client) {
	_ = parallel(64*rdb.Options().PoolSize, 64, func(int) error { return rdb.Ping(context.Background()).Err() })
}

// heapInUse is the live heap and the stacks after a full collection.
func heapInUse() int64 {
	quiesce()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc + m.StackInuse)
}

// scaleNames locks and unlocks cfg.ScaleNames distinct names once each
// through one Client, from 64 goroutines, and reads what is left: the
// Client's heap and goroutines, and the names' keys in Redis.
func (e *env) scaleNames(kind string) scaleNames {
	n := e.cfg.ScaleNames
	row := scaleNames{Kind: "relock " + kind, Names: n}
	g0, h0 := runtime.NumGoroutine(), heapInUse()
	rdb, rc, err := e.scaleClient(0, nil)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	defer rdb.Close()
	defer rc.Close()
	prefix := e.name("scale-names", kind)
	t0 := time.Now()
	err = parallel(n, 64, func(i int) error {
		mu := scaleLocker(rc, kind, fmt.Sprintf("%s:%d", prefix, i))
		ctx, cancel := context.WithTimeout(context.Background(), stuckAfter)
		defer cancel()
		lctx, err := mu.Lock(ctx)
		if err != nil {
			return err
		}
		return mu.Unlock(lctx)
	})
	row.Seconds = round1(time.Since(t0).Seconds())
	if err != nil {
		row.Err = err.Error()
		return row
	}
	row.HeapMiB = round1(float64(heapInUse()-h0) / (1 << 20))
	row.Goroutines = runtime.NumGoroutine() - g0
	row.KeysLeft, err = e.countKeys(prefix)
	if err != nil {
		row.Err = err.Error()
	}
	return row
}

// countKeys counts the keys whose name contains prefix (a lock's own, or
// a derived one), by SCAN.
func (e *env) countKeys(prefix string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var n int64
	iter := e.admin.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	return n, iter.Err()
}

// A renewProbe times the pipelines of a Client's go-redis client that
// carry lease renewals: the watchdog's batches.
type renewProbe struct {
	sha string
	mu  sync.Mutex // guards on, times, largest
	on  bool
	// times are the durations of the batches seen while on, in ns.
	times   []int64
	largest int
	renews  atomic.Int64
}

func newRenewProbe() *renewProbe { return &renewProbe{sha: lua.Renew().Hash()} }

func (p *renewProbe) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (p *renewProbe) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (p *renewProbe) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		t0 := time.Now()
		err := next(ctx, cmds)
		d := time.Since(t0)
		n := 0
		for _, cmd := range cmds {
			if args := cmd.Args(); len(args) > 1 && cmd.Name() == "evalsha" && args[1] == p.sha {
				n++
			}
		}
		if n == 0 {
			return err
		}
		p.renews.Add(int64(n))
		p.mu.Lock()
		if p.on {
			p.times = append(p.times, int64(d))
			p.largest = max(p.largest, n)
		}
		p.mu.Unlock()
		return err
	}
}

// watch starts or stops recording batches, and returns those recorded.
func (p *renewProbe) watch(on bool) ([]int64, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.on = on
	times, largest := p.times, p.largest
	if on {
		p.times, p.largest = nil, 0
	}
	return times, largest
}

// scaleLeases holds n locks on one Client whose watchdog renews them
// with leases of lease, for ScaleLeaseRounds renewal intervals (at least
// ScaleLeaseMin), and counts the leases lost.
func (e *env) scaleLeases(n int, lease time.Duration) scaleLeases {
	row := scaleLeases{Leases: n, WatchdogMs: lease.Milliseconds()}
	p := newRenewProbe()
	rdb, rc, err := e.scaleClient(lease, p)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	defer rdb.Close()
	defer rc.Close()
	warmPool(rdb)
	h0 := heapInUse()
	prefix := e.name("scale-leases", fmt.Sprint(n))
	held := make([]context.Context, n)
	mus := make([]relock.Locker, n)
	err = parallel(n, 64, func(i int) error {
		mus[i] = reentrant.New(rc, fmt.Sprintf("%s:%d", prefix, i), nil)
		// Not bounded by a context of its own: the lock context is its
		// child, and would end with it.
		lctx, err := mus[i].Lock(context.Background())
		held[i] = lctx
		return err
	})
	if err != nil {
		row.Err = err.Error()
		return row
	}
	row.BytesPerLease = round1(float64(heapInUse()-h0) / float64(n))

	window := max(time.Duration(e.cfg.ScaleLeaseRounds)*lease/3, e.cfg.ScaleLeaseMin)
	p.watch(true)
	before, cpu0, r0, t0 := e.snapshot(), cpuTime(), p.renews.Load(), time.Now()
	time.Sleep(window)
	after, cpu1, r1 := e.snapshot(), cpuTime(), p.renews.Load()
	secs := time.Since(t0).Seconds()
	times, largest := p.watch(false)
	row.WindowSeconds = round1(secs)
	row.Batches, row.BatchMax, row.BatchTime = len(times), largest, summarize(times)
	row.RenewalsPerS = round1(float64(r1-r0) / secs)
	row.RedisCPUPct = round1(100 * before.to(after).cpuUs / 1e6 / secs)
	row.ClientCPUPct = round1(100 * (cpu1 - cpu0).Seconds() / secs)

	var lost atomic.Int64
	for _, lctx := range held {
		if lctx.Err() != nil {
			lost.Add(1)
		}
	}
	_ = parallel(n, 64, func(i int) error {
		if held[i].Err() == nil && mus[i].Unlock(held[i]) != nil {
			lost.Add(1)
		}
		return nil
	})
	row.Lost = int(lost.Load())
	return row
}

// scaleWaiters has n goroutines of one Client each wait on a lock of its
// own that another Client holds, counts what the waiting costs Redis,
// then unlocks every lock and times each waiter's wake-up.
func (e *env) scaleWaiters(n int) scaleWaiters {
	row := scaleWaiters{Waiters: n}
	hrdb, holder, err := e.scaleClient(0, nil)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	defer hrdb.Close()
	defer holder.Close()
	prefix := e.name("scale-waiters", fmt.Sprint(n))
	held := make([]context.Context, n)
	mus := make([]relock.Locker, n)
	if err := parallel(n, 64, func(i int) error {
		mus[i] = reentrant.New(holder, fmt.Sprintf("%s:%d", prefix, i), nil)
		lctx, err := mus[i].Lock(context.Background())
		held[i] = lctx
		return err
	}); err != nil {
		row.Err = err.Error()
		return row
	}

	wrdb, wc, err := e.scaleClient(0, nil)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	defer wrdb.Close()
	defer wc.Close()
	warmPool(wrdb)
	h0 := heapInUse()
	released := make([]atomic.Int64, n) // now() when each lock's Unlock returned
	woken := make([]int64, n)           // now() when each waiter's Lock returned
	wctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var errs atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			mu := reentrant.New(wc, fmt.Sprintf("%s:%d", prefix, i), nil)
			lctx, err := mu.Lock(wctx)
			if err != nil {
				errs.Add(1)
				return
			}
			woken[i] = now()
			_ = mu.Unlock(lctx)
		})
	}
	for deadline := time.Now().Add(time.Minute); wc.Stats().Waiters < n && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if got := wc.Stats().Waiters; got < n {
		cancel()
		wg.Wait()
		row.Err = fmt.Sprintf("only %d of %d waiters waiting after a minute", got, n)
		return row
	}
	time.Sleep(e.cfg.WaitSettle)
	row.BytesPerWaiter = round1(float64(heapInUse()-h0) / float64(n))
	before, t0 := e.snapshot(), time.Now()
	time.Sleep(e.cfg.WaitMeasure)
	after := e.snapshot()
	d := before.to(after)
	var cmds int64
	for _, c := range d.calls {
		cmds += c
	}
	row.CmdsPerSec = round1(float64(cmds) / time.Since(t0).Seconds())

	_ = parallel(n, 64, func(i int) error {
		err := mus[i].Unlock(held[i])
		released[i].Store(now())
		return err
	})
	wg.Wait()
	var wakes []int64
	for i := range n {
		if woken[i] != 0 {
			wakes = append(wakes, max(0, woken[i]-released[i].Load()))
		}
	}
	row.Woken, row.Wake = len(wakes), summarize(wakes)
	if errs.Load() > 0 {
		row.Err = fmt.Sprintf("%d waiters failed", errs.Load())
	}
	return row
}

// scaleChurn runs, for the reentrant and the fair lock at once, 4
// Clients of 4 goroutines each looping Lock with deadlines of 0-3 ms on
// one hot name (WatchdogTimeout 2s), then Unlock, for ScaleChurnFor,
// and samples the name's relock records every ScaleChurnSample and once
// ScaleChurnSettle after.
func (e *env) scaleChurn() []scaleChurn {
	kinds := scaleKinds
	rows := make([]scaleChurn, len(kinds))
	names := make([]string, len(kinds))
	calls := make([]atomic.Int64, len(kinds))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for k, kind := range kinds {
		rows[k].Kind = "relock " + kind
		names[k] = e.name("scale-churn", kind)
		for range 4 {
			rdb, rc, err := e.scaleClient(2*time.Second, nil)
			if err != nil {
				rows[k].Err = err.Error()
				continue
			}
			defer rdb.Close()
			defer rc.Close()
			mu := scaleLocker(rc, kind, names[k])
			for range 4 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(4))*time.Millisecond)
						if lctx, err := mu.Lock(ctx); err == nil {
							_ = mu.Unlock(lctx)
						}
						cancel()
						calls[k].Add(1)
					}
				})
			}
		}
	}
	t0 := time.Now()
	tick := time.NewTicker(e.cfg.ScaleChurnSample)
	for range int(e.cfg.ScaleChurnFor / e.cfg.ScaleChurnSample) {
		<-tick.C
		for k := range kinds {
			rows[k].Samples = append(rows[k].Samples, e.churnRecords(names[k], time.Since(t0)))
		}
	}
	tick.Stop()
	close(stop)
	wg.Wait()
	stopped := time.Now()
	time.Sleep(e.cfg.ScaleChurnSettle)
	for k := range kinds {
		rows[k].Calls = calls[k].Load()
		rows[k].After = e.churnRecords(names[k], time.Since(stopped))
	}
	return rows
}

// churnRecords sums the entries and MEMORY USAGE of relock's records of
// the lock name: its give-up record, its waiters registry, and (a fair
// lock's) its queue and timeouts.
func (e *env) churnRecords(name string, at time.Duration) churnSample {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := churnSample{Seconds: round1(at.Seconds())}
	for _, key := range []string{layout.LockGone(name), layout.LockWaiters(name), layout.FairQueue(name), layout.FairTimeouts(name)} {
		n, err := entriesOf(ctx, e.admin, key)
		if err != nil || n == 0 {
			continue
		}
		s.Keys++
		s.Entries += n
		if b, err := e.admin.MemoryUsage(ctx, key).Result(); err == nil {
			s.Bytes += b
		}
	}
	return s
}

// entriesOf counts key's fields, members or elements by its type; 0 when
// it is absent.
func entriesOf(ctx context.Context, rdb *redis.Client, key string) (int64, error) {
	kind, err := rdb.Type(ctx, key).Result()
	if err != nil {
		return 0, err
	}
	switch kind {
	case "hash":
		return rdb.HLen(ctx, key).Result()
	case "zset":
		return rdb.ZCard(ctx, key).Result()
	case "list":
		return rdb.LLen(ctx, key).Result()
	case "none":
		return 0, nil
	default:
		return 1, nil
	}
}
