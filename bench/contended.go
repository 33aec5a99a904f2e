package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// A cell is one contended measurement: W workers looping Lock, critical
// section, Unlock on one name (scenarios b and s) or on names picked at
// random (scenario c). The workers share Clients clients ("processes"),
// worker w the client w % Clients: Clients == W gives each its own.
type cell struct {
	Scenario string
	W        int
	Clients  int
	CS       time.Duration
	Names    int
	// Permits, for a semaphore (scenario s), is how many may hold it at
	// once, given by TrySetPermits; 0 for a lock, which one may hold.
	Permits int
	// Window is how long the measurement runs; 0 means CellDuration.
	Window time.Duration
}

// cellResult holds every figure of one cell for one kind.
type cellResult struct {
	Kind       string  `json:"kind"`
	Scenario   string  `json:"scenario"`
	Workers    int     `json:"workers"`
	Clients    int     `json:"clients"` // 0 in results.json written before it was recorded: one per worker
	CriticalUs int     `json:"critical_section_us"`
	Names      int     `json:"names"`
	Permits    int     `json:"permits,omitempty"` // a semaphore's (scenario s)
	Seconds    float64 `json:"seconds"`
	// The warm-up before the window: its length, the fewest grants a
	// worker had in it, and the lock or unlock errors it saw (not counted
	// in Errors). Zero in results.json written before it ran the workload.
	WarmUpSeconds float64 `json:"warm_up_s"`
	WarmUpMin     int     `json:"warm_up_per_worker_min"`
	WarmUpErrors  int     `json:"warm_up_errors"`

	// Acquisitions are the grants in the window, whenever their Lock
	// call began; the waits only those of calls begun in it.
	Acquisitions int     `json:"acquisitions"`
	PerSec       float64 `json:"acquisitions_per_s"`
	WorkerMin    int     `json:"per_worker_min"`
	WorkerMax    int     `json:"per_worker_max"`
	Starved      int     `json:"workers_starved"` // workers with no acquisition in the window
	Wait         dist    `json:"wait"`            // Lock call to return, completed calls begun in the window
	// MaxWait includes the calls still waiting when the window closed
	// (a starved worker's wait is at least the window) and the calls
	// begun before it and granted in it, each counted from the window's
	// start: nothing waited in the warm-up.
	MaxWaitUs float64 `json:"max_wait_us"`
	HeldUs    float64 `json:"held_mean_us"` // measured critical section

	Handoff dist `json:"handoff"` // release (Unlock called) to the next holder's Lock return
	// The handoff's p50 and p99 over the run's PING round trip: how many
	// round trips a handoff costs, whatever the machine's latency.
	HandoffP50Pings float64 `json:"handoff_p50_pings,omitempty"`
	HandoffP99Pings float64 `json:"handoff_p99_pings,omitempty"`
	SelfPct         float64 `json:"reacquired_by_releaser_pct"`
	// Inversions among the requests begun in the window, and their share
	// of those requests' grants.
	Inversions int     `json:"fifo_inversions"`
	InvPct     float64 `json:"fifo_inversions_pct"`

	CmdsPerAcq     float64 `json:"redis_commands_per_acquisition"`  // sent by clients
	AllCmdsPerAcq  float64 `json:"redis_commands_incl_lua_per_acq"` // incl. those inside scripts
	RedisCPUPerAcq float64 `json:"redis_cpu_us_per_acquisition"`    // server CPU
	// What the kind's clients cost this process per acquisition (one
	// Lock+Unlock) in the window, which runs nothing else but the
	// workers' loop and bookkeeping: CPU time (getrusage RUSAGE_SELF,
	// user + system; a redis-server the benchmark started is a process of
	// its own), heap allocations and bytes allocated (runtime.MemStats
	// Mallocs and TotalAlloc). Allocations are 0 in results.json written
	// before they were recorded.
	ClientCPUPerAcq float64 `json:"client_cpu_us_per_acquisition"`
	AllocsPerAcq    float64 `json:"client_allocs_per_acquisition"`
	BytesPerAcq     float64 `json:"client_alloc_bytes_per_acquisition"`
	ClientCalls     float64 `json:"client_calls_per_acquisition"` // counted by the workers' probes
	// SyscallsPerAcq is this process's read and write system calls per
	// acquisition in the window (rwSyscalls), and Connections the
	// connections to Redis the cell's clients held at its end (INFO
	// clients, less those open before its clients were): scenario p's.
	SyscallsPerAcq float64 `json:"client_rw_syscalls_per_acquisition,omitempty"`
	Connections    int     `json:"redis_connections,omitempty"`
	Errors         int     `json:"errors"` // lock or unlock errors from the window's start
	// Violations are the grants in the window that made more workers hold
	// the name than may: two for a lock, Permits + 1 for a semaphore.
	// PeakHolders is the most that held it at once in the window. A hold
	// runs from the Lock call's return to the Unlock call, within the
	// hold in Redis, so that a violation is never the clock's doing.
	Violations  int              `json:"mutual_exclusion_violations"`
	PeakHolders int              `json:"peak_holders,omitempty"`
	Commands    map[string]int64 `json:"redis_commandstats"` // every command, by name
	Err         string           `json:"error,omitempty"`

	// Rounds is how many rounds the figures come from (mergeRounds), 0
	// or 1 for one window; the spans are the lowest and highest round's.
	Rounds         int  `json:"rounds,omitempty"`
	PerSecRange    span `json:"acquisitions_per_s_range,omitzero"`
	RedisCPURange  span `json:"redis_cpu_us_per_acquisition_range,omitzero"`
	ClientCPURange span `json:"client_cpu_us_per_acquisition_range,omitzero"`
	AllocsRange    span `json:"client_allocs_per_acquisition_range,omitzero"`
}

// mergeRounds makes one row of a kind's rounds of one cell: its
// acquisitions/s and per-acquisition costs are each the median over the
// rounds, with their spans; the waits, the per-worker counts and the
// commands by name are the round's whose acquisitions/s is the median;
// errors and violations add up, and the worst wait and peak are the
// worst of any round. A round that failed makes the row its error.
func mergeRounds(rs []cellResult) cellResult {
	for _, r := range rs {
		if r.Err != "" {
			return r
		}
	}
	if len(rs) < 2 {
		return rs[0]
	}
	byRate := slices.SortedFunc(slices.Values(rs), func(a, b cellResult) int { return cmp.Compare(a.PerSec, b.PerSec) })
	m := byRate[len(byRate)/2]
	fig := func(f func(cellResult) float64) (float64, span) {
		vs := make([]float64, len(rs))
		for i, r := range rs {
			vs[i] = f(r)
		}
		return medianSpan(vs)
	}
	m.Rounds = len(rs)
	m.PerSec, m.PerSecRange = fig(func(r cellResult) float64 { return r.PerSec })
	m.RedisCPUPerAcq, m.RedisCPURange = fig(func(r cellResult) float64 { return r.RedisCPUPerAcq })
	m.ClientCPUPerAcq, m.ClientCPURange = fig(func(r cellResult) float64 { return r.ClientCPUPerAcq })
	m.AllocsPerAcq, m.AllocsRange = fig(func(r cellResult) float64 { return r.AllocsPerAcq })
	m.BytesPerAcq, _ = fig(func(r cellResult) float64 { return r.BytesPerAcq })
	m.CmdsPerAcq, _ = fig(func(r cellResult) float64 { return r.CmdsPerAcq })
	m.AllCmdsPerAcq, _ = fig(func(r cellResult) float64 { return r.AllCmdsPerAcq })
	m.ClientCalls, _ = fig(func(r cellResult) float64 { return r.ClientCalls })
	m.Errors, m.Violations, m.WarmUpErrors = 0, 0, 0
	for _, r := range rs {
		m.Errors += r.Errors
		m.Violations += r.Violations
		m.WarmUpErrors += r.WarmUpErrors
		m.MaxWaitUs = max(m.MaxWaitUs, r.MaxWaitUs)
		m.PeakHolders = max(m.PeakHolders, r.PeakHolders)
		m.Starved = max(m.Starved, r.Starved)
	}
	return m
}

// tracker records one cell's grants under one mutex, on the shared
// monotonic clock. It runs in two phases: a warm-up of the cell's own
// workload, where it only counts each worker's grants, then the
// measurement window [start, end], the only time anything is measured.
type tracker struct {
	mu     sync.Mutex
	single bool // one name: FIFO and the holders' limit apply
	// limit is how many workers may hold the name at once: 1 for a lock,
	// a semaphore's permits. Handoffs are measured when it is 1: a grant
	// of a permit left free is no handoff.
	limit      int
	start, end int64 // the window; start is notOpen during the warm-up
	probes     []*probe
	pending    []int64 // per worker: start of its current request, 0 none

	// Warm-up: grants per worker, how many workers reached warmGoal, and
	// warmed, closed when all have.
	warm      []int
	warmGoal  int
	warmReady int
	warmed    chan struct{}

	holders, peak int // holding now, and the most at once in the window
	lastHolder    int
	lastRelease   int64
	heldSince     []int64 // per worker: its current grant

	waits, handoffs, held []int64
	perWorker             []int
	grants, self          int
	checked, inversions   int // grants checked for FIFO order, and those out of it
	violations            int
	unprobed              int
	// straddled is the longest in-window part of the waits of requests
	// begun before the window and granted in it: like a call still
	// waiting at the end, it counts toward the max wait only.
	straddled        int64
	errors, warmErrs int
}

// notOpen is the tracker's start before the window opens: no time is in
// the window.
const notOpen = math.MaxInt64

func newTracker(w int, single bool, limit int, probes []*probe, warmGoal int) *tracker {
	t := &tracker{single: single, limit: limit, start: notOpen, probes: probes, pending: make([]int64, w), perWorker: make([]int, w),
		lastHolder: -1, heldSince: make([]int64, w), warm: make([]int, w), warmGoal: warmGoal, warmed: make(chan struct{})}
	if warmGoal <= 0 {
		close(t.warmed)
	}
	return t
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

// open starts the window at at: from then on grants count.
func (t *tracker) open(at int64) {
	t.mu.Lock()
	t.start = at
	t.mu.Unlock()
}

func (t *tracker) inWindow(at int64) bool { return at >= t.start && (t.end == 0 || at <= t.end) }

// fail records a lock or unlock error at at: in the warm-up's count
// before the window opens, in the cell's after.
func (t *tracker) fail(at int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if at < t.start {
		t.warmErrs++
	} else {
		t.errors++
	}
}

// grant records that worker w, which asked at start, holds the lock at at.
//
// A grant in the window counts toward the throughput, whenever its
// request began; its wait is a sample, and its order is checked, only
// if the request began in the window too, so that nothing waited during
// the warm-up is measured.
func (t *tracker) grant(w int, start, at int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending[w] = 0
	in := t.inWindow(at)
	if at < t.start {
		t.warm[w]++
		if t.warm[w] == t.warmGoal {
			if t.warmReady++; t.warmReady == len(t.warm) {
				close(t.warmed)
			}
		}
	}
	if t.single {
		t.holders++
		if in {
			t.peak = max(t.peak, t.holders)
			if t.holders > t.limit {
				t.violations++
			}
		}
		t.heldSince[w] = at
	}
	if !in {
		return
	}
	t.perWorker[w]++
	t.grants++
	begun := start >= t.start
	if begun {
		t.waits = append(t.waits, at-start)
	} else {
		t.straddled = max(t.straddled, at-t.start)
	}
	if !t.single {
		return
	}
	if f := t.probes[w].first.Load(); f == 0 || f < start {
		t.unprobed++ // the probe did not see this request's attempts
	}
	if t.limit == 1 && t.lastHolder >= 0 && t.lastRelease >= t.start {
		t.handoffs = append(t.handoffs, at-t.lastRelease)
		if t.lastHolder == w {
			t.self++
		}
	}
	if !begun {
		return
	}
	// A request whose first attempt was answered before this one began
	// was certainly ahead of it: granting this one first is an inversion.
	// Only requests begun in the window are compared.
	t.checked++
	for i, p := range t.pending {
		if i == w || p == 0 || p < t.start {
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
	if t.inWindow(t.heldSince[w]) {
		t.held = append(t.held, at-t.heldSince[w])
	}
	t.holders--
	t.lastHolder, t.lastRelease = w, at
}

// close ends the window and returns the longest wait still in progress,
// counted from the window's start for a request begun before it.
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
	res := cellResult{Kind: k.ID, Scenario: c.Scenario, Workers: c.W, Clients: c.Clients, CriticalUs: int(c.CS / time.Microsecond), Names: c.Names, Permits: c.Permits}
	conns0 := e.snapshot().clients
	names := make([]string, c.Names)
	for i := range names {
		names[i] = e.name(c.Scenario, k.ID, fmt.Sprint(i))
	}
	// Client probes count calls; worker probes, carried in each worker's
	// context, see its requests' first replies.
	clientProbes, probes := make([]*probe, c.Clients), make([]*probe, c.W)
	lockers := make([]locker, c.Clients)
	defer func() {
		for _, l := range lockers {
			if l != nil {
				l.close()
			}
		}
	}()
	for i := range lockers {
		clientProbes[i] = &probe{}
		l, err := k.open(e.addr, openOpts{probe: clientProbes[i], permits: c.Permits})
		if err != nil {
			return res, err
		}
		lockers[i] = l
	}
	for w := range probes {
		probes[w] = &probe{}
	}
	// Open the connections: every worker at once, each on a name of its
	// own, so that a shared client opens as many as its goroutines use at
	// once, every client has loaded its scripts, and a client that cannot
	// take a free lock fails here rather than stalls the warm-up.
	if err := parallel(c.W, c.W, func(w int) error {
		l := lockers[w%c.Clients]
		h, err := lockWithin(l.owner(context.Background()), l, e.name("warm", k.ID), stuckAfter)
		if err != nil {
			return fmt.Errorf("warm-up lock: %w", err)
		}
		if err := h.unlock(); err != nil {
			return fmt.Errorf("warm-up unlock: %w", err)
		}
		return nil
	}); err != nil {
		return res, err
	}

	// The workers run the cell's workload from the start, through a
	// warm-up and on into the window without a pause: the window opens on
	// a lock already contended, with its waiters queued and its clients
	// subscribed (relock keeps a lock's channel subscribed a while after
	// use; a cold client's first wait subscribes first), the steady state
	// every kind is measured in.
	tr := newTracker(c.W, c.Names == 1, max(1, c.Permits), probes, e.cfg.WarmUpAcqs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	begin := make(chan struct{})
	var wg sync.WaitGroup
	for w := range c.W {
		wg.Go(func() {
			l, p := lockers[w%c.Clients], probes[w]
			// An owner of its own (relock): goroutines of one client
			// exclude each other, as workers of separate clients do.
			wctx := withProbe(l.owner(ctx), p)
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
						tr.fail(at)
					}
					continue
				}
				tr.grant(w, start, at)
				if c.CS > 0 {
					time.Sleep(c.CS)
				}
				tr.release(w, now())
				if err := h.unlock(); err != nil {
					tr.fail(now())
				}
			}
		})
	}

	warmStart := now()
	close(begin)
	// Until every worker has acquired WarmUpAcqs times, or WarmUpMax.
	select {
	case <-tr.warmed:
	case <-time.After(e.cfg.WarmUpMax):
	}
	before := e.snapshot()
	cost0 := costAtStart()
	var calls0 int64
	for _, p := range clientProbes {
		calls0 += p.calls.Load()
	}
	start := now()
	tr.open(start)
	time.Sleep(cmp.Or(c.Window, e.cfg.CellDuration))
	end := now()
	pendingMax := tr.close(end)
	cost1 := costAtEnd()
	var calls1 int64
	for _, p := range clientProbes {
		calls1 += p.calls.Load()
	}
	after := e.snapshot()
	cancel()
	if !waitTimeout(&wg, 30*time.Second) {
		return res, fmt.Errorf("workers did not stop within 30s of the end")
	}

	tr.mu.Lock()
	defer tr.mu.Unlock()
	res.WarmUpSeconds = round2(float64(start-warmStart) / 1e9)
	res.WarmUpMin = slices.Min(tr.warm)
	res.WarmUpErrors = tr.warmErrs
	secs := float64(end-start) / 1e9
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
	res.MaxWaitUs = max(res.Wait.Max, float64(max(pendingMax, tr.straddled))/1e3)
	res.Handoff = summarize(tr.handoffs)
	if e.pingUs > 0 && res.Handoff.N > 0 {
		res.HandoffP50Pings = round2(res.Handoff.P50 / e.pingUs)
		res.HandoffP99Pings = round2(res.Handoff.P99 / e.pingUs)
	}
	res.HeldUs = summarize(tr.held).Mean
	res.Violations, res.PeakHolders = tr.violations, tr.peak
	res.Errors = tr.errors
	if tr.single && tr.unprobed*20 > tr.grants {
		return res, fmt.Errorf("the probe saw no lock call for %d of %d grants: FIFO figures would be wrong", tr.unprobed, tr.grants)
	}
	d := before.to(after)
	res.Commands = d.calls
	if tr.checked > 0 {
		res.Inversions = tr.inversions
		res.InvPct = round1(100 * float64(tr.inversions) / float64(tr.checked))
	}
	if n := float64(tr.grants); n > 0 {
		res.SelfPct = round1(100 * float64(tr.self) / n)
		res.CmdsPerAcq = round2(float64(d.sent(k.inner)) / n)
		res.AllCmdsPerAcq = round2(float64(d.all()) / n)
		res.RedisCPUPerAcq = round1(d.cpuUs / n)
		res.ClientCPUPerAcq, res.AllocsPerAcq, res.BytesPerAcq = cost1.per(cost0, tr.grants)
		res.ClientCalls = round2(float64(calls1-calls0) / n)
		if cost0.syscalls >= 0 && cost1.syscalls >= 0 {
			res.SyscallsPerAcq = round2(float64(cost1.syscalls-cost0.syscalls) / n)
		}
	}
	res.Connections = int(after.clients - conns0)
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
