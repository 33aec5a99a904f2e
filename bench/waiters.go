package main

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// waitersResult is scenario (e): many goroutines of one client waiting on
// locks another client holds.
type waitersResult struct {
	Kind      string `json:"kind"`
	Mechanism string `json:"mechanism"`
	Waiters   int    `json:"waiters"`
	Locks     int    `json:"locks"`

	Connections   int     `json:"connections"`           // server connections of the waiting client (CLIENT LIST)
	Listening     int     `json:"listening_connections"` // of those: subscribed, or tracking keys
	BytesPerWaitr float64 `json:"client_bytes_per_waiter"`
	CmdsPerSec    float64 `json:"redis_commands_per_s_while_waiting"`
	RedisCPUPct   float64 `json:"redis_cpu_pct_while_waiting"`
	ClientCPUPct  float64 `json:"client_cpu_pct_while_waiting"`
	Errors        int64   `json:"errors"`
	Acquired      int64   `json:"acquired_while_held"` // must be 0: the locks are held throughout
	Err           string  `json:"error,omitempty"`
}

func (e *env) runWaiters(k kind) (waitersResult, error) {
	n, locks := e.cfg.Waiters, e.cfg.WaiterLocks
	res := waitersResult{Kind: k.ID, Waiters: n, Locks: locks}
	switch {
	case k.Relock && k.Fair:
		res.Mechanism = "queued; one shared subscription connection, a channel per client and lock"
	case k.Relock:
		res.Mechanism = "one shared subscription connection, a channel per client and lock"
	case k.Lib == "rueidislock":
		res.Mechanism = "client-side caching invalidations on the client's connection"
	default:
		res.Mechanism = "polling"
	}
	holder, err := k.open(e.addr, openOpts{})
	if err != nil {
		return res, err
	}
	defer holder.close()
	names := make([]string, locks)
	helds := make([]*held, locks)
	hctx, hcancel := context.WithCancel(context.Background())
	defer hcancel()
	for i := range names {
		names[i] = e.name("waiters", k.ID, fmt.Sprint(i))
		h, err := lockWithin(holder.owner(hctx), holder, names[i], stuckAfter)
		if err != nil {
			return res, err
		}
		helds[i] = h
	}
	defer func() {
		for _, h := range helds {
			_ = h.unlock()
		}
	}()

	ctx := context.Background()
	quiesce()
	conns0, err := clientList(ctx, e.admin)
	if err != nil {
		return res, err
	}
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)

	l, err := k.open(e.addr, openOpts{})
	if err != nil {
		return res, err
	}
	defer l.close()
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	var errs, acquired atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			octx := l.owner(wctx)
			for wctx.Err() == nil {
				h, err := l.lock(octx, names[i%locks])
				if err != nil {
					if wctx.Err() == nil {
						errs.Add(1)
					}
					continue
				}
				acquired.Add(1)
				_ = h.unlock()
			}
		})
	}
	e.settle(k, e.cfg.WaitSettle)

	runtime.GC()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	res.BytesPerWaitr = round1(float64(int64(m1.HeapAlloc+m1.StackInuse)-int64(m0.HeapAlloc+m0.StackInuse)) / float64(n))
	conns1, err := clientList(ctx, e.admin)
	if err != nil {
		return res, err
	}
	res.Connections = len(conns1) - len(conns0)
	res.Listening = listening(conns1) - listening(conns0)

	before, cpu0, t0 := e.snapshot(), cpuTime(), time.Now()
	time.Sleep(e.cfg.WaitMeasure)
	after, cpu1 := e.snapshot(), cpuTime()
	secs := time.Since(t0).Seconds()
	d := before.to(after)
	res.CmdsPerSec = round1(float64(d.sent(k.inner)) / secs)
	res.RedisCPUPct = round1(100 * d.cpuUs / 1e6 / secs)
	res.ClientCPUPct = round1(100 * (cpu1 - cpu0).Seconds() / secs)

	wcancel()
	if !waitTimeout(&wg, 60*time.Second) {
		return res, fmt.Errorf("waiters did not return within 60s of cancellation")
	}
	res.Errors, res.Acquired = errs.Load(), acquired.Load()
	return res, nil
}

func listening(list []conn) int {
	n := 0
	for _, c := range list {
		if c.listening() {
			n++
		}
	}
	return n
}

// settle waits until the waiters have joined: at least min, then until
// the command rate holds steady from one quarter second to the next
// (relock's waiters fall silent, pollers keep their pace), at most 10 ×
// min.
func (e *env) settle(k kind, min time.Duration) {
	time.Sleep(min)
	const step = 250 * time.Millisecond
	prev, prevRate := e.snapshot(), -1.0
	for deadline := time.Now().Add(10 * min); time.Now().Before(deadline); {
		time.Sleep(step)
		cur := e.snapshot()
		rate := float64(prev.to(cur).sent(k.inner)) / step.Seconds()
		if prevRate >= 0 && math.Abs(rate-prevRate) <= 0.1*prevRate+50 {
			return
		}
		prev, prevRate = cur, rate
	}
}

// quiesce lets goroutines of earlier measurements (closing clients) end,
// then collects garbage, so a memory baseline holds only what is live.
func quiesce() {
	runtime.GC()
	time.Sleep(300 * time.Millisecond)
	runtime.GC()
}
