package main

import (
	"context"
	"errors"
	"fmt"
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
	// What one Lock+Unlock costs, from a second loop of UncontendedOps
	// calls back to back, without the PINGs and empty scripts, which would
	// count in every figure: the server's CPU time (INFO cpu), and this
	// process's CPU time (getrusage RUSAGE_SELF, user + system), heap
	// allocations and bytes allocated (runtime.MemStats Mallocs and
	// TotalAlloc). 0 in results.json written before they were recorded.
	RedisCPUPerOp  float64 `json:"redis_cpu_us_per_lock_unlock"`
	ClientCPUPerOp float64 `json:"client_cpu_us_per_lock_unlock"`
	AllocsPerOp    float64 `json:"client_allocs_per_lock_unlock"`
	BytesPerOp     float64 `json:"client_alloc_bytes_per_lock_unlock"`
	Err            string  `json:"error,omitempty"`
}

// emptyScript measures what Lua itself costs a round trip.
var emptyScript = redis.NewScript("return 1")

// runUncontended measures k's Lock+Unlock opened with o, whose probe it
// sets.
func (e *env) runUncontended(k kind, o openOpts) (uncontendedResult, error) {
	res := uncontendedResult{Kind: k.ID}
	p := &probe{}
	o.probe = p
	l, err := k.open(e.addr, o)
	if err != nil {
		return res, err
	}
	defer l.close()
	pinger := redis.NewClient(&redis.Options{Addr: e.addr})
	defer pinger.Close()
	ctx := l.owner(context.Background())
	name := e.name("uncontended", k.ID)
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
			return res, err
		}
		if err := pinger.Ping(ctx).Err(); err != nil {
			return res, err
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
		return res, err
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
				return res, err
			}
		}
		tf := now()
		if err := floor(); err != nil {
			return res, err
		}
		floors = append(floors, now()-tf)
		t1 := now()
		if err := once(); err != nil {
			// A stuck call is the library's doing: count it, and go on
			// while they are rare.
			if !errors.Is(err, errStuck) || res.Stuck >= 3 {
				return res, err
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
	res.CmdsPerOp = round2(float64(d.sent(k.inner)-d.calls["ping"]-int64(2*len(floors))-d.calls["replconf"]) / float64(n))
	res.Waits = round2(float64(d.calls["wait"]) / float64(n))
	return res, e.costLoop(ctx, l, name, n, &res)
}

// costLoop runs n Lock+Unlock calls of l on name back to back and records
// what they cost in res. The calls share one bound (for a call stuck on
// the free lock) instead of lockWithin's timer and context each, which
// would count in the figures; their context has no deadline, as the
// contended cells' workers' have none.
func (e *env) costLoop(ctx context.Context, l locker, name string, n int, res *uncontendedResult) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	bound := stuckAfter + time.Duration(n)*time.Millisecond
	stuck := time.AfterFunc(bound, func() { cancel(fmt.Errorf("%w: %d Lock+Unlock calls not done after %v", errStuck, n, bound)) })
	defer stuck.Stop()
	// Every kind's loop starts on a heap just collected, so that each
	// pays for the collections its own allocations bring on.
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
			return fmt.Errorf("back-to-back loop: %w", err)
		}
	}
	cost1 := costAtEnd()
	d := before.to(e.snapshot())
	res.RedisCPUPerOp = round1(d.cpuUs / float64(n))
	res.ClientCPUPerOp, res.AllocsPerOp, res.BytesPerOp = cost1.per(cost0, n)
	return nil
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
