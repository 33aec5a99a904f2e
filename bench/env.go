package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
)

// env is what every scenario shares: the server, an admin client that
// reads its statistics, the run's settings and the progress line.
type env struct {
	addr string
	// srv is the redis-server the benchmark started at addr; nil with
	// -redis.
	srv   *server
	admin *redis.Client
	cfg   config
	// pingUs is the p50 PING round trip measured at the start, the unit
	// of the contended cells' handoffs.
	pingUs float64
	seq    atomic.Int64
	step   int
	steps  int
	began  time.Time
}

// stuckAfter bounds a Lock call on a lock nobody else holds.
const stuckAfter = 5 * time.Second

// config holds the sizes of a run: the full one or the -quick smoke.
type config struct {
	Quick        bool          `json:"quick"`
	CellDuration time.Duration `json:"-"`
	CellSeconds  float64       `json:"cell_seconds"`
	Workers      []int         `json:"workers"`
	CriticalUs   []int         `json:"critical_section_us"`
	// Before each contended cell's window its workers run its workload
	// until each has acquired WarmUpAcqs times, or for WarmUpMax.
	WarmUpAcqs  int           `json:"warm_up_acquisitions_per_worker"`
	WarmUpMax   time.Duration `json:"-"`
	WarmUpMaxMs int           `json:"warm_up_max_ms"`
	// SharedClients clients of SharedGoroutines goroutines each, on one
	// lock, with each critical section: a few processes of many
	// goroutines, where the other cells give every worker its own client.
	SharedClients    int `json:"shared_clients"`
	SharedGoroutines int `json:"shared_goroutines_per_client"`
	UncontendedOps   int `json:"uncontended_ops"`
	// Scenario (a)'s cost figures are the medians of UncontendedRounds
	// rounds of UncontendedCostOps / UncontendedRounds calls per kind
	// (UncontendedOps in results.json written before it was recorded),
	// the kinds interleaved in each.
	UncontendedRounds  int `json:"uncontended_rounds"`
	UncontendedCostOps int `json:"uncontended_cost_ops,omitempty"`
	ManyNames          int `json:"many_names"`
	ManyWorkers        int `json:"many_workers"`
	// Scenario (c) runs ManyRounds rounds of a ManyWindow window per
	// kind, the kinds taking turns, and reports medians (mergeRounds).
	ManyRounds   int           `json:"many_rounds"`
	ManyWindow   time.Duration `json:"-"`
	ManyWindowMs int           `json:"many_window_ms"`
	// Scenario (p), one client per library shared by every goroutine:
	// OneClientWorkers goroutines on OneClientNames names, and
	// OneClientLockWorkers on one lock, each in OneClientRounds rounds of
	// a ManyWindow window, the kinds taking turns (mergeRounds).
	OneClientWorkers     int           `json:"one_client_workers,omitempty"`
	OneClientNames       int           `json:"one_client_names,omitempty"`
	OneClientLockWorkers int           `json:"one_client_lock_workers,omitempty"`
	OneClientRounds      int           `json:"one_client_rounds,omitempty"`
	WatchdogLocks        int           `json:"watchdog_locks"`
	WatchdogLease        time.Duration `json:"-"`
	WatchdogRounds       int           `json:"watchdog_rounds"`
	Waiters              int           `json:"waiters"`
	WaiterLocks          int           `json:"waiter_locks"`
	WaitSettle           time.Duration `json:"-"`
	WaitMeasure          time.Duration `json:"-"`
	// Scenario s: a cell for each permits count and W, a client per
	// worker, timed as the contended cells are.
	SemaphorePermits []int `json:"semaphore_permits"`
	SemaphoreWorkers []int `json:"semaphore_workers"`
	// Scenario l: LatchRounds rounds of LatchAwaiters goroutines spread
	// over LatchClients clients, parked LatchSettle before the CountDown.
	LatchAwaiters int           `json:"latch_awaiters"`
	LatchClients  int           `json:"latch_clients"`
	LatchRounds   int           `json:"latch_rounds"`
	LatchSettle   time.Duration `json:"-"`
	LatchSettleMs int           `json:"latch_settle_ms"`
	// Scenario o: each call OvershootRuns times, each with a context
	// deadline OvershootDeadline away, against a server that hangs.
	OvershootRuns       int           `json:"overshoot_runs"`
	OvershootDeadline   time.Duration `json:"-"`
	OvershootDeadlineMs int           `json:"overshoot_deadline_ms"`
	// Scenario t: LateRuns runs per primitive, each forcing an acquire
	// attempt to run after its caller gave up.
	LateRuns int `json:"late_runs"`
	// Scenario z: ScaleNames distinct names through one Client; each of
	// ScaleLeases held on one Client for ScaleLeaseRounds renewal
	// intervals (at least ScaleLeaseMin); each of ScaleWaiters waiting;
	// ScaleChurnFor of give-ups on one hot name, sampled every
	// ScaleChurnSample and once ScaleChurnSettle after.
	ScaleNames       int           `json:"scale_names,omitempty"`
	ScaleLeases      []scaleLease  `json:"scale_leases,omitempty"`
	ScaleLeaseRounds int           `json:"scale_lease_rounds,omitempty"`
	ScaleLeaseMin    time.Duration `json:"-"`
	ScaleWaiters     []int         `json:"scale_waiters,omitempty"`
	ScaleChurnFor    time.Duration `json:"-"`
	ScaleChurnSample time.Duration `json:"-"`
	ScaleChurnSettle time.Duration `json:"-"`
}

// A scaleLease is a row of scenario z's leases: how many, with what
// WatchdogTimeout.
type scaleLease struct {
	Leases     int           `json:"leases"`
	Watchdog   time.Duration `json:"-"`
	WatchdogMs int64         `json:"watchdog_timeout_ms"`
}

// costOps is how many Lock+Unlock calls per kind scenario (a)'s cost
// rounds run in all.
func (c config) costOps() int { return cmp.Or(c.UncontendedCostOps, c.UncontendedOps) }

func fullConfig() config {
	return config{
		CellDuration:      2500 * time.Millisecond,
		Workers:           []int{4, 16, 64},
		CriticalUs:        []int{0, 200},
		WarmUpAcqs:        20,
		WarmUpMax:         300 * time.Millisecond,
		SharedClients:     4,
		SharedGoroutines:  8,
		UncontendedOps:    3000,
		UncontendedRounds: 11,
		// 800 calls a round: about 0.1 s of each kind's loop.
		UncontendedCostOps: 8800,
		ManyNames:          1000,
		ManyWorkers:        64,
		ManyRounds:         5,
		ManyWindow:         time.Second,

		OneClientWorkers:     64,
		OneClientNames:       1000,
		OneClientLockWorkers: 16,
		OneClientRounds:      3,
		WatchdogLocks:        10000,
		WatchdogLease:        3 * time.Second,
		WatchdogRounds:       3,
		Waiters:              10000,
		WaiterLocks:          100,
		WaitSettle:           1500 * time.Millisecond,
		WaitMeasure:          2 * time.Second,
		SemaphorePermits:     []int{1, 4},
		SemaphoreWorkers:     []int{4, 16},
		LatchAwaiters:        1000,
		LatchClients:         10,
		LatchRounds:          5,
		LatchSettle:          200 * time.Millisecond,
		OvershootRuns:        20,
		OvershootDeadline:    200 * time.Millisecond,
		LateRuns:             1000,

		ScaleNames: 1_000_000,
		ScaleLeases: []scaleLease{
			{Leases: 1000, Watchdog: 3 * time.Second},
			{Leases: 10_000, Watchdog: 3 * time.Second},
			{Leases: 100_000, Watchdog: 3 * time.Second},
			{Leases: 1_000_000, Watchdog: relock.DefaultWatchdogTimeout},
		},
		ScaleLeaseRounds: 4,
		ScaleLeaseMin:    6 * time.Second,
		ScaleWaiters:     []int{1000, 10_000},
		ScaleChurnFor:    60 * time.Second,
		ScaleChurnSample: 10 * time.Second,
		ScaleChurnSettle: 15 * time.Second,
	}
}

func quickConfig() config {
	return config{
		Quick:             true,
		CellDuration:      150 * time.Millisecond,
		Workers:           []int{4},
		CriticalUs:        []int{0},
		WarmUpAcqs:        20,
		WarmUpMax:         100 * time.Millisecond,
		SharedClients:     4,
		SharedGoroutines:  8,
		UncontendedOps:    100,
		UncontendedRounds: 3,
		ManyNames:         50,
		ManyWorkers:       8,
		ManyRounds:        2,
		ManyWindow:        150 * time.Millisecond,

		OneClientWorkers:     8,
		OneClientNames:       50,
		OneClientLockWorkers: 4,
		OneClientRounds:      1,
		WatchdogLocks:        200,
		WatchdogLease:        300 * time.Millisecond,
		WatchdogRounds:       1,
		Waiters:              200,
		WaiterLocks:          10,
		WaitSettle:           200 * time.Millisecond,
		WaitMeasure:          200 * time.Millisecond,
		SemaphorePermits:     []int{1, 2},
		SemaphoreWorkers:     []int{4},
		LatchAwaiters:        100,
		LatchClients:         4,
		LatchRounds:          2,
		LatchSettle:          50 * time.Millisecond,
		OvershootRuns:        2,
		OvershootDeadline:    100 * time.Millisecond,
		LateRuns:             20,

		ScaleNames:       2000,
		ScaleLeases:      []scaleLease{{Leases: 200, Watchdog: 300 * time.Millisecond}},
		ScaleLeaseRounds: 3,
		ScaleLeaseMin:    300 * time.Millisecond,
		ScaleWaiters:     []int{100},
		ScaleChurnFor:    time.Second,
		ScaleChurnSample: 500 * time.Millisecond,
		ScaleChurnSettle: 2500 * time.Millisecond,
	}
}

// name returns a lock name no earlier cell used.
func (e *env) name(parts ...string) string {
	return fmt.Sprintf("relock-bench:%d:%s", e.seq.Add(1), strings.Join(parts, ":"))
}

// progress prints one line per finished step.
func (e *env) progress(format string, args ...any) {
	e.step++
	fmt.Fprintf(os.Stderr, "[%3d/%d %5.0fs] %s\n", e.step, e.steps, time.Since(e.began).Seconds(), fmt.Sprintf(format, args...))
}

func (e *env) snapshot() snapshot {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := takeSnapshot(ctx, e.admin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "warning: INFO:", err)
	}
	return s
}
