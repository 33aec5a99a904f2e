package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"
)

// uncontendedResult is scenario (a): one worker locking and unlocking a
// name nobody else uses, each Lock+Unlock next to a PING and two empty
// scripts on a plain go-redis client, so all see the same machine load.
type uncontendedResult struct {
	Kind       string  `json:"kind"`
	LockUnlock dist    `json:"lock_unlock"`
	Ping       dist    `json:"two_pings"` // two PINGs back to back: two round trips
	Ratio      float64 `json:"p50_over_two_pings_p50"`
	// Floor is two EVALSHA calls of an empty script on the PING client:
	// the least two round trips through Lua cost, which every scripted
	// lock pays.
	Floor      dist    `json:"two_empty_evalsha"`
	FloorRatio float64 `json:"two_empty_evalsha_p50_over_two_pings_p50"`
	Calls      float64 `json:"client_calls_per_lock_unlock"`
	CmdsPerOp  float64 `json:"redis_commands_per_lock_unlock"`
	// Waits is the WAIT calls per Lock+Unlock: relock's replica sync sends
	// one behind each acquire while the master reports replicas.
	Waits float64 `json:"waits_per_lock_unlock"`
	// Stuck counts Lock calls on the free lock that had not returned
	// after stuckAfter and were abandoned.
	Stuck int `json:"stuck_calls"`
	// What one Lock+Unlock costs, from the cost rounds (see costRounds),
	// without the PINGs and empty scripts, which would count in every
	// figure: the server's CPU time (INFO cpu), and this process's CPU
	// time (getrusage RUSAGE_SELF, user + system), heap allocations and
	// bytes allocated (runtime.MemStats Mallocs and TotalAlloc). Each is
	// the median over the rounds, its range their lowest and highest. 0
	// in results.json written before they were recorded, and the ranges
	// before there were rounds.
	RedisCPUPerOp  float64 `json:"redis_cpu_us_per_lock_unlock"`
	ClientCPUPerOp float64 `json:"client_cpu_us_per_lock_unlock"`
	AllocsPerOp    float64 `json:"client_allocs_per_lock_unlock"`
	BytesPerOp     float64 `json:"client_alloc_bytes_per_lock_unlock"`
	RedisCPURange  span    `json:"redis_cpu_us_per_lock_unlock_range,omitzero"`
	ClientCPURange span    `json:"client_cpu_us_per_lock_unlock_range,omitzero"`
	AllocsRange    span    `json:"client_allocs_per_lock_unlock_range,omitzero"`
	BytesRange     span    `json:"client_alloc_bytes_per_lock_unlock_range,omitzero"`
	Err            string  `json:"error,omitempty"`
}

// emptyScript measures what Lua itself costs a round trip.
var emptyScript = redis.NewScript("return 1")

// An uncontendedRow is one row of scenario (a), or of (r), being
// measured: the kind and the options it is opened with (the caller's),
// then its locker, open from its latency loop to the end of the cost
// rounds, and its figures and error so far.
type uncontendedRow struct {
	k    kind
	o    openOpts
	l    locker
	ctx  context.Context
	name string
	res  uncontendedResult
	err  error
}

// runUncontended measures rows: each row's latency loop in turn, calling
// latency with the row's index when one ends, then the cost rounds of
// every row still without an error. It leaves each row's figures, with
// its error, in its res, and closes every locker.
func (e *env) runUncontended(rows []uncontendedRow, latency func(i int)) {
	for i := range rows {
		x := &rows[i]
		x.res = uncontendedResult{Kind: x.k.ID}
		x.err = e.latencyLoop(x)
		latency(i)
	}
	e.costRounds(rows)
	for i := range rows {
		x := &rows[i]
		if x.l != nil {
			x.l.close()
		}
		x.res.Err = errText(x.err)
	}
}

// latencyLoop opens x's locker, with a probe of its own, and times
// UncontendedOps Lock+Unlock calls, each next to two PINGs and two empty
// scripts.
func (e *env) latencyLoop(x *uncontendedRow) error {
	p := &probe{}
	o := x.o
	o.probe = p
	l, err := x.k.open(e.addr, o)
	if err != nil {
		return err
	}
	pinger := redis.NewClient(&redis.Options{Addr: e.addr})
	defer pinger.Close()
	ctx := l.owner(context.Background())
	name := e.name("uncontended", x.k.ID)
	x.l, x.ctx, x.name = l, ctx, name
	res := &x.res
	n := e.cfg.UncontendedOps
	once := func() error {
		h, err := lockWithin(ctx, l, name, stuckAfter)
		if err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if err := h.unlock(); err != nil {
			return fmt.Errorf("unlock: %w", err)
		}
		return nil
	}
	for range n / 10 { // warm-up: connections, scripts
		if err := once(); err != nil {
			return err
		}
		if err := pinger.Ping(ctx).Err(); err != nil {
			return err
		}
	}
	ops, pings, floors := make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n)
	floor := func() error {
		for range 2 {
			if err := emptyScript.Run(ctx, pinger, nil).Err(); err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
		}
		return nil
	}
	if err := floor(); err != nil {
		return err
	}
	before, calls0 := e.snapshot(), p.calls.Load()
	for range n {
		// Two PINGs back to back, as the lock's two calls are: the
		// second of two calls finds the goroutines and the connection
		// warm, so timing one PING and doubling it would flatter the
		// floor's cost against the lock's.
		t0 := now()
		for range 2 {
			if err := pinger.Ping(ctx).Err(); err != nil {
				return err
			}
		}
		tf := now()
		if err := floor(); err != nil {
			return err
		}
		floors = append(floors, now()-tf)
		t1 := now()
		if err := once(); err != nil {
			// A stuck call is the library's doing: count it, and go on
			// while they are rare.
			if !errors.Is(err, errStuck) || res.Stuck >= 3 {
				return err
			}
			res.Stuck++
			continue
		}
		pings, ops = append(pings, tf-t0), append(ops, now()-t1)
	}
	d := before.to(e.snapshot())
	res.LockUnlock, res.Ping, res.Floor = summarize(ops), summarize(pings), summarize(floors)
	res.Ratio = round2(res.LockUnlock.P50 / res.Ping.P50)
	res.FloorRatio = round2(res.Floor.P50 / res.Ping.P50)
	res.Calls = round2(float64(p.calls.Load()-calls0) / float64(n))
	// The PINGs and empty scripts are the benchmark's, not the lock's,
	// and REPLCONF ACKs a replica's.
	res.CmdsPerOp = round2(float64(d.sent(x.k.inner)-d.calls["ping"]-int64(2*len(floors))-d.calls["replconf"]) / float64(n))
	res.Waits = round2(float64(d.calls["wait"]) / float64(n))
	return nil
}

// costRounds measures what one Lock+Unlock costs each row without an
// error: UncontendedRounds rounds, each running every such row's chunk of
// costOps / UncontendedRounds calls back to back, in an order
// shuffled anew each round, and each figure is the median over the
// rounds. On a shared machine a burst of load then spoils one round of a
// few rows, which the median leaves out, instead of one row's only loop;
// and no row always runs right after the same other. The seed is fixed
// so that every run shuffles alike.
func (e *env) costRounds(rows []uncontendedRow) {
	rounds := max(1, e.cfg.UncontendedRounds)
	n := max(1, e.cfg.costOps()/rounds)
	costs := make([][]opCost, len(rows))
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range rounds {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			x := &rows[i]
			if x.err != nil {
				continue
			}
			c, err := e.costLoop(x.ctx, x.l, x.name, n)
			if err != nil {
				x.err = err
				continue
			}
			costs[i] = append(costs[i], c)
		}
	}
	for i := range rows {
		if x := &rows[i]; x.err == nil {
			x.res.setCosts(costs[i])
		}
	}
}

// opCost is what one Lock+Unlock cost in one cost round: the server's
// CPU time and this process's in µs, its heap allocations and bytes.
type opCost struct {
	redisCPU, clientCPU, allocs, bytes float64
}

// setCosts records the medians and ranges of the rounds' costs.
func (res *uncontendedResult) setCosts(costs []opCost) {
	fig := func(f func(opCost) float64) (float64, span) {
		vs := make([]float64, len(costs))
		for i, c := range costs {
			vs[i] = f(c)
		}
		return medianSpan(vs)
	}
	res.RedisCPUPerOp, res.RedisCPURange = fig(func(c opCost) float64 { return c.redisCPU })
	res.ClientCPUPerOp, res.ClientCPURange = fig(func(c opCost) float64 { return c.clientCPU })
	res.AllocsPerOp, res.AllocsRange = fig(func(c opCost) float64 { return c.allocs })
	res.BytesPerOp, res.BytesRange = fig(func(c opCost) float64 { return c.bytes })
}

// costLoop runs n Lock+Unlock calls of l on name back to back and returns
// what one cost. The calls share one bound (for a call stuck on the free
// lock) instead of lockWithin's timer and context each, which would count
// in the figures; their context has no deadline, as the contended cells'
// workers' have none.
func (e *env) costLoop(ctx context.Context, l locker, name string, n int) (opCost, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	bound := stuckAfter + time.Duration(n)*time.Millisecond
	stuck := time.AfterFunc(bound, func() { cancel(fmt.Errorf("%w: %d Lock+Unlock calls not done after %v", errStuck, n, bound)) })
	defer stuck.Stop()
	// Every loop starts on a heap just collected, so that each pays for
	// the collections its own allocations bring on.
	runtime.GC()
	before, cost0 := e.snapshot(), costAtStart()
	for range n {
		h, err := l.lock(ctx, name)
		if err == nil {
			err = h.unlock()
		}
		if err != nil {
			if ctx.Err() != nil {
				err = context.Cause(ctx)
			}
			return opCost{}, fmt.Errorf("back-to-back loop: %w", err)
		}
	}
	cost1 := costAtEnd()
	d := before.to(e.snapshot())
	var c opCost
	c.redisCPU = round1(d.cpuUs / float64(n))
	c.clientCPU, c.allocs, c.bytes = cost1.per(cost0, n)
	return c, nil
}

// pingRoundTrip times n PINGs one at a time on a plain go-redis client,
// after a warm-up, before any scenario runs: every run, whatever its
// scenarios, has a round trip to express the contended handoffs in.
func (e *env) pingRoundTrip(ctx context.Context, n int) (dist, error) {
	pinger := redis.NewClient(&redis.Options{Addr: e.addr})
	defer pinger.Close()
	rtts := make([]int64, 0, n)
	for i := range n + n/10 {
		t0 := now()
		if err := pinger.Ping(ctx).Err(); err != nil {
			return dist{}, err
		}
		if i >= n/10 {
			rtts = append(rtts, now()-t0)
		}
	}
	return summarize(rtts), nil
}
