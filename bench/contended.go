package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// A cell is one contended measurement: W workers, each with its own
// client ("process"), looping Lock, critical section, Unlock on one name
// (scenario b) or on names picked at random (scenario c).
type cell struct {
	Scenario string
	W        int
	CS       time.Duration
	Names    int
}

// cellResult holds every figure of one cell for one kind.
type cellResult struct {
	Kind       string  `json:"kind"`
	Scenario   string  `json:"scenario"`
	Workers    int     `json:"workers"`
	CriticalUs int     `json:"critical_section_us"`
	Names      int     `json:"names"`
	Seconds    float64 `json:"seconds"`

	Acquisitions int     `json:"acquisitions"`
	PerSec       float64 `json:"acquisitions_per_s"`
	WorkerMin    int     `json:"per_worker_min"`
	WorkerMax    int     `json:"per_worker_max"`
	Starved      int     `json:"workers_starved"` // workers with no acquisition in the window
	Wait         dist    `json:"wait"`            // Lock call to return, completed calls
	// MaxWait includes the calls still waiting when the window closed:
	// a starved worker's wait is at least the window.
	MaxWaitUs float64 `json:"max_wait_us"`
	HeldUs    float64 `json:"held_mean_us"` // measured critical section

	Handoff    dist    `json:"handoff"` // release (Unlock called) to the next holder's Lock return
	SelfPct    float64 `json:"reacquired_by_releaser_pct"`
	Inversions int     `json:"fifo_inversions"`
	InvPct     float64 `json:"fifo_inversions_pct"`

	CmdsPerAcq      float64          `json:"redis_commands_per_acquisition"`  // sent by clients
	AllCmdsPerAcq   float64          `json:"redis_commands_incl_lua_per_acq"` // incl. those inside scripts
	RedisCPUPerAcq  float64          `json:"redis_cpu_us_per_acquisition"`    // server CPU
	ClientCPUPerAcq float64          `json:"client_cpu_us_per_acquisition"`   // this process's CPU
	ClientCalls     float64          `json:"client_calls_per_acquisition"`    // counted by the workers' probes
	Errors          int              `json:"errors"`                          // lock or unlock errors
	Violations      int              `json:"mutual_exclusion_violations"`     // two holders at once
	Commands        map[string]int64 `json:"redis_commandstats"`              // every command, by name
	Err             string           `json:"error,omitempty"`
}

// tracker records one cell's grants under one mutex, on the shared
// monotonic clock.
type tracker struct {
	mu         sync.Mutex
	single     bool // one lock name: handoffs, FIFO and exclusion apply
	start, end int64
	probes     []*probe
	pending    []int64 // per worker: start of its current request, 0 none

	holder, lastHolder int
	lastRelease        int64

	waits, handoffs, held []int64
	perWorker             []int
	grants, self          int
	inversions            int
	violations            int
	unprobed              int
	heldSince             int64
}

func newTracker(w int, single bool, probes []*probe) *tracker {
	return &tracker{single: single, probes: probes, pending: make([]int64, w), perWorker: make([]int, w),
		holder: -1, lastHolder: -1}
}

func (t *tracker) request(w int, at int64) {
	t.mu.Lock()
	t.pending[w] = at
	t.mu.Unlock()
}

func (t *tracker) abandon(w int) {
	t.mu.Lock()
	t.pending[w] = 0
	t.mu.Unlock()
}

func (t *tracker) inWindow(at int64) bool { return at >= t.start && (t.end == 0 || at <= t.end) }

// grant records that worker w, which asked at start, holds the lock at at.
func (t *tracker) grant(w int, start, at int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending[w] = 0
	if !t.single {
		if t.inWindow(at) && start >= t.start {
			t.waits = append(t.waits, at-start)
			t.perWorker[w]++
			t.grants++
		}
		return
	}
	if t.holder >= 0 && t.inWindow(at) {
		t.violations++
	}
	t.holder, t.heldSince = w, at
	if !t.inWindow(at) || start < t.start {
		return
	}
	t.waits = append(t.waits, at-start)
	t.perWorker[w]++
	t.grants++
	if f := t.probes[w].first.Load(); f == 0 || f < start {
		t.unprobed++ // the probe did not see this request's attempts
	}
	if t.lastHolder >= 0 && t.lastRelease >= t.start {
		t.handoffs = append(t.handoffs, at-t.lastRelease)
		if t.lastHolder == w {
			t.self++
		}
	}
	// A request whose first attempt was answered before this one began
	// was certainly ahead of it: granting this one first is an inversion.
	for i, p := range t.pending {
		if i == w || p == 0 {
			continue
		}
		if f := t.probes[i].first.Load(); f != 0 && f >= p && f < start {
			t.inversions++
			break
		}
	}
}

// release records that worker w is about to unlock.
func (t *tracker) release(w int, at int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.single {
		return
	}
	if t.inWindow(t.heldSince) {
		t.held = append(t.held, at-t.heldSince)
	}
	t.holder, t.lastHolder, t.lastRelease = -1, w, at
}

// close ends the window and returns the longest wait still in progress.
func (t *tracker) close(at int64) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.end = at
	var longest int64
	for _, p := range t.pending {
		if p != 0 {
			longest = max(longest, at-max(p, t.start))
		}
	}
	return longest
}

func (e *env) runCell(k kind, c cell) (cellResult, error) {
	res := cellResult{Kind: k.ID, Scenario: c.Scenario, Workers: c.W, CriticalUs: int(c.CS / time.Microsecond), Names: c.Names}
	names := make([]string, c.Names)
	for i := range names {
		names[i] = e.name(c.Scenario, k.ID, fmt.Sprint(i))
	}
	probes := make([]*probe, c.W)
	lockers := make([]locker, c.W)
	defer func() {
		for _, l := range lockers {
			if l != nil {
				l.close()
			}
		}
	}()
	for i := range lockers {
		probes[i] = &probe{}
		l, err := k.open(e.addr, openOpts{probe: probes[i]})
		if err != nil {
			return res, err
		}
		lockers[i] = l
		// Warm up: connections open, scripts loaded.
		h, err := lockWithin(l.owner(context.Background()), l, e.name("warm", k.ID), stuckAfter)
		if err != nil {
			return res, fmt.Errorf("warm-up lock: %w", err)
		}
		if err := h.unlock(); err != nil {
			return res, fmt.Errorf("warm-up unlock: %w", err)
		}
	}

	tr := newTracker(c.W, c.Names == 1, probes)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	begin := make(chan struct{})
	errs := make([]int, c.W)
	var wg sync.WaitGroup
	for w := range c.W {
		wg.Go(func() {
			l, p := lockers[w], probes[w]
			wctx := l.owner(ctx)
			rng := rand.New(rand.NewPCG(uint64(w), uint64(c.W)))
			<-begin
			for ctx.Err() == nil {
				name := names[rng.IntN(len(names))]
				p.reset()
				start := now()
				tr.request(w, start)
				h, err := l.lock(wctx, name)
				at := now()
				if err != nil {
					tr.abandon(w)
					if ctx.Err() == nil {
						errs[w]++
					}
					continue
				}
				tr.grant(w, start, at)
				if c.CS > 0 {
					time.Sleep(c.CS)
				}
				tr.release(w, now())
				if err := h.unlock(); err != nil {
					errs[w]++
				}
			}
		})
	}

	before, cpu0 := e.snapshot(), cpuTime()
	var calls0 int64
	for _, p := range probes {
		calls0 += p.calls.Load()
	}
	tr.start = now()
	close(begin)
	time.Sleep(e.cfg.CellDuration)
	end := now()
	pendingMax := tr.close(end)
	after, cpu1 := e.snapshot(), cpuTime()
	var calls1 int64
	for _, p := range probes {
		calls1 += p.calls.Load()
	}
	cancel()
	if !waitTimeout(&wg, 30*time.Second) {
		return res, fmt.Errorf("workers did not stop within 30s of the end")
	}

	tr.mu.Lock()
	defer tr.mu.Unlock()
	secs := float64(end-tr.start) / 1e9
	res.Seconds = round2(secs)
	res.Acquisitions = tr.grants
	res.PerSec = round1(float64(tr.grants) / secs)
	res.WorkerMin, res.WorkerMax = tr.perWorker[0], tr.perWorker[0]
	for _, n := range tr.perWorker {
		res.WorkerMin, res.WorkerMax = min(res.WorkerMin, n), max(res.WorkerMax, n)
		if n == 0 {
			res.Starved++
		}
	}
	res.Wait = summarize(tr.waits)
	res.MaxWaitUs = max(res.Wait.Max, float64(pendingMax)/1e3)
	res.Handoff = summarize(tr.handoffs)
	res.HeldUs = summarize(tr.held).Mean
	res.Violations = tr.violations
	if tr.single && tr.unprobed*20 > tr.grants {
		return res, fmt.Errorf("the probe saw no lock call for %d of %d grants: FIFO figures would be wrong", tr.unprobed, tr.grants)
	}
	for _, n := range errs {
		res.Errors += n
	}
	d := before.to(after)
	res.Commands = d.calls
	if n := float64(tr.grants); n > 0 {
		res.SelfPct = round1(100 * float64(tr.self) / n)
		res.Inversions = tr.inversions
		res.InvPct = round1(100 * float64(tr.inversions) / n)
		res.CmdsPerAcq = round2(float64(d.sent(k.inner)) / n)
		res.AllCmdsPerAcq = round2(float64(d.all()) / n)
		res.RedisCPUPerAcq = round1(d.cpuUs / n)
		res.ClientCPUPerAcq = round1(float64(cpu1-cpu0) / 1e3 / n)
		res.ClientCalls = round2(float64(calls1-calls0) / n)
	}
	return res, nil
}

// waitTimeout waits for wg, at most d.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
