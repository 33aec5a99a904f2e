package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// watchdogResult is scenario (d): many locks held by one client while
// their leases are kept alive, measured over whole renewal rounds.
type watchdogResult struct {
	Kind      string `json:"kind"`
	Mechanism string `json:"mechanism"`
	Locks     int    `json:"locks"`
	LeaseMs   int64  `json:"lease_ms"`
	RenewMs   int64  `json:"renew_interval_ms"`
	Rounds    int    `json:"rounds"`

	AcquireSeconds    float64 `json:"acquire_seconds"`
	CmdsPerRound      float64 `json:"redis_commands_per_round"`
	RoundTripsPerRnd  float64 `json:"round_trips_per_round"` // pipelines, or single calls
	ClientCPUPerRound float64 `json:"client_cpu_ms_per_round"`
	RedisCPUPerRound  float64 `json:"redis_cpu_ms_per_round"`
	BytesPerLock      float64 `json:"client_bytes_per_held_lock"`
	Goroutines        int     `json:"goroutines_while_holding"`
	Lost              int     `json:"locks_lost"`       // renewal or unlock failures
	Stuck             int     `json:"stuck_lock_calls"` // acquire calls on a free lock abandoned and retried
	Err               string  `json:"error,omitempty"`
}

// runWatchdog holds cfg.WatchdogLocks locks on one client. relock's
// watchdog and rueidislock renew by themselves; redsync and redislock
// have no renewal, so the benchmark runs what their docs suggest instead:
// a goroutine per lock calling Extend/Refresh on a ticker.
func (e *env) runWatchdog(k kind) (watchdogResult, error) {
	lease, n, rounds := e.cfg.WatchdogLease, e.cfg.WatchdogLocks, e.cfg.WatchdogRounds
	renew := lease / 3
	res := watchdogResult{Kind: k.ID, Locks: n, LeaseMs: lease.Milliseconds(), RenewMs: renew.Milliseconds(), Rounds: rounds}
	switch k.Lib {
	case "relock":
		res.Mechanism = "one watchdog per Client: batches of at most 2000 leases a pipeline, spread over the renewal interval"
	case "rueidislock":
		res.Mechanism = "built in: a timer and an extend call per key per lock"
	default:
		res.Mechanism = "none built in: a goroutine per lock calling " + map[string]string{"redsync": "Extend", "redislock": "Refresh"}[k.Lib] + " on a ticker (its docs' pattern)"
	}
	p := &probe{batch: make(chan int, 64)}
	l, err := k.open(e.addr, openOpts{probe: p, lease: lease, renew: renew})
	if err != nil {
		return res, err
	}
	defer l.close()

	quiesce()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	g0 := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	helds := make([]*held, n)
	var stuck atomic.Int64
	prefix := e.name("watchdog", k.ID)
	t0 := time.Now()
	if err := parallel(n, 32, func(i int) error {
		name := fmt.Sprintf("%s:%d", prefix, i)
		h, err := lockWithin(l.owner(ctx), l, name, stuckAfter)
		for try := 0; errors.Is(err, errStuck) && try < 3; try++ {
			stuck.Add(1)
			h, err = lockWithin(l.owner(ctx), l, name, stuckAfter)
		}
		helds[i] = h
		return err
	}); err != nil {
		return res, err
	}
	res.AcquireSeconds = round2(time.Since(t0).Seconds())

	var lost atomic.Int64
	var wg sync.WaitGroup
	for _, h := range helds {
		if h.extend == nil {
			continue
		}
		wg.Go(func() {
			t := time.NewTicker(renew)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if err := h.extend(ctx); err != nil && ctx.Err() == nil {
						lost.Add(1)
					}
				}
			}
		})
	}

	// relock's rounds are whole pipelines: measure from the end of one
	// full round to the end of the round-th after it. The others renew
	// lock by lock, so a window of round intervals is the same thing.
	rw := &roundWatcher{batch: p.batch, n: n, limit: 3 * lease}
	if k.Relock {
		// Two rounds: the first may load the renewal script (NOSCRIPT,
		// then EVAL) on a fresh server.
		for range 2 {
			if err := rw.wait(); err != nil {
				return res, err
			}
		}
	} else {
		time.Sleep(renew)
	}
	before, cpu0, calls0, pipes0 := e.snapshot(), cpuTime(), p.calls.Load(), p.pipes.Load()
	w0 := time.Now()
	if k.Relock {
		for range rounds {
			if err := rw.wait(); err != nil {
				return res, err
			}
		}
	} else {
		time.Sleep(time.Duration(rounds) * renew)
	}
	after, cpu1, calls1, pipes1 := e.snapshot(), cpuTime(), p.calls.Load(), p.pipes.Load()
	window := time.Since(w0)
	r := float64(rounds)
	if !k.Relock {
		r = window.Seconds() / renew.Seconds()
	}
	runtime.GC()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	res.Goroutines = runtime.NumGoroutine() - g0
	res.BytesPerLock = round1(float64(int64(m1.HeapAlloc+m1.StackInuse)-int64(m0.HeapAlloc+m0.StackInuse)) / float64(n))

	d := before.to(after)
	res.CmdsPerRound = round1(float64(d.sent(k.inner)) / r)
	if k.Relock {
		res.RoundTripsPerRnd = round2(float64(pipes1-pipes0) / r)
	} else {
		res.RoundTripsPerRnd = round1(float64(calls1-calls0) / r)
	}
	res.ClientCPUPerRound = round2(float64(cpu1-cpu0) / 1e6 / r)
	res.RedisCPUPerRound = round2(d.cpuUs / 1e3 / r)

	cancel()
	wg.Wait()
	_ = parallel(n, 32, func(i int) error {
		if err := helds[i].unlock(); err != nil {
			lost.Add(1)
		}
		return nil
	})
	res.Lost = int(lost.Load())
	res.Stuck = int(stuck.Load())
	return res, nil
}

// A roundWatcher sees the pipelines of relock's watchdog. A round is n
// renewals, one a lease: the watchdog sends them in batches spread over
// the renewal interval, a pipeline each. The first rounds, which may
// send a batch twice (EVAL after NOSCRIPT, on a server that had not seen
// the renewal script), are waited out before the measurement.
type roundWatcher struct {
	batch <-chan int
	n     int
	limit time.Duration
	sum   int // renewals seen since the last round ended
}

// wait returns at the end of the next round.
func (r *roundWatcher) wait() error {
	deadline := time.After(r.limit)
	for {
		select {
		case size := <-r.batch:
			if r.sum += size; r.sum >= r.n {
				r.sum -= r.n
				return nil
			}
		case <-deadline:
			return fmt.Errorf("no renewal round of %d leases within %v", r.n, r.limit)
		}
	}
}

// parallel runs f(0..n-1) on workers goroutines and returns the first
// error.
func parallel(n, workers int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
