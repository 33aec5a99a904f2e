package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// report is everything one run measured; results.json is its encoding.
type report struct {
	Meta        meta                `json:"meta"`
	Kinds       []kindInfo          `json:"kinds"`
	Uncontended []uncontendedResult `json:"uncontended"`
	Contended   []cellResult        `json:"contended"`
	Layout      []cellResult        `json:"handoff_reference"`
	Many        []cellResult        `json:"many_locks"`
	OneClient   []cellResult        `json:"one_client,omitempty"`
	Watchdog    []watchdogResult    `json:"watchdog"`
	Waiters     []waitersResult     `json:"waiters"`
	Semaphore   []cellResult        `json:"semaphore"`
	// SemaphoreLock is the reentrant lock's cells run right before and
	// right after each one-permit semaphore cell, of the same workers: the
	// semaphore target compares with them, measured minutes closer in time
	// than scenario (b)'s lock cell.
	SemaphoreLock []cellResult     `json:"semaphore_lock_beside,omitempty"`
	Latch         []latchResult    `json:"latch"`
	Group         *groupResult     `json:"group_lock,omitempty"`
	Replica       []replicaResult  `json:"replica_sync"`
	Overshoot     *overshootResult `json:"overshoot"`
	Late          *lateResult      `json:"late,omitempty"`
	Scale         *scaleResult     `json:"scale,omitempty"`
	Targets       []target         `json:"targets"`
}

type meta struct {
	Started   string  `json:"started_utc"`
	Seconds   float64 `json:"seconds"`
	Command   string  `json:"command"`
	Go        string  `json:"go"`
	OS        string  `json:"os"`
	CPUs      int     `json:"cpus"`
	Redis     string  `json:"redis_version"`
	OwnServer bool    `json:"own_server_on_loopback"`
	Config    config  `json:"config"`
	// Ping is the PING round trip, timed one at a time before the
	// scenarios: the unit of the contended handoffs.
	Ping dist `json:"ping_round_trip"`
	// ClientOptions says which kinds' go-redis clients have which
	// options; empty in results.json written before it was recorded.
	ClientOptions string `json:"client_options,omitempty"`
}

type kindInfo struct {
	ID     string `json:"id"`
	Lib    string `json:"library"`
	Config string `json:"configuration"`
}

// A target is one of the goals the run is checked against (targets.go).
type target struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// readReport loads a results.json written by an earlier run.
func readReport(path string) (*report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &report{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func (r *report) json() []byte {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic(err) // only plain values: cannot happen
	}
	return append(b, '\n')
}

// failures counts the measurements that failed, relock's and the peers'
// apart: a peer's failure is its behaviour, reported in its row, while
// relock's is the benchmark's or the library's to fix.
func (r *report) failures() (relock, peers int) {
	count := func(kind, err string) {
		switch {
		case err == "":
		case strings.HasPrefix(kind, "relock"):
			relock++
		default:
			peers++
		}
	}
	// The reference kinds' failures are the benchmark's to fix.
	ref := func(kind string) string {
		if strings.HasSuffix(kind, "(reference)") {
			return "relock"
		}
		return kind
	}
	for _, x := range r.Uncontended {
		count(ref(x.Kind), x.Err)
	}
	for _, x := range slices.Concat(r.Contended, r.Many, r.OneClient, r.Semaphore) {
		count(ref(x.Kind), x.Err)
	}
	for _, x := range r.Layout {
		count("relock", x.Err)
	}
	for _, x := range r.Watchdog {
		count(x.Kind, x.Err)
	}
	for _, x := range r.Waiters {
		count(x.Kind, x.Err)
	}
	for _, x := range r.Latch {
		count(x.Kind, x.Err)
	}
	if g := r.Group; g != nil {
		for _, x := range g.Rows {
			count(x.Kind, x.Err)
		}
	}
	for _, x := range r.Replica {
		count(x.Kind, x.Err)
	}
	if l := r.Late; l != nil {
		for _, x := range l.Rows {
			count(lateID, x.Err)
		}
	}
	if z := r.Scale; z != nil {
		for _, err := range z.errs() {
			count(scaleID, err)
		}
	}
	if o := r.Overshoot; o != nil {
		count(overshootID, o.Err)
		for _, x := range o.Calls {
			count(overshootID, x.Err)
		}
	}
	return relock, peers
}

// us renders a duration given in microseconds.
func us(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 1000:
		return fmt.Sprintf("%.0f µs", v)
	case v < 10e3:
		return fmt.Sprintf("%.2f ms", v/1e3)
	case v < 1e6:
		return fmt.Sprintf("%.0f ms", v/1e3)
	default:
		return fmt.Sprintf("%.2f s", v/1e6)
	}
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func bytesStr(v float64) string {
	if v >= 10*1024 {
		return fmt.Sprintf("%.0f KiB", v/1024)
	}
	return fmt.Sprintf("%.0f B", v)
}

type table struct {
	b *strings.Builder
}

func (t table) row(cells ...string) {
	t.b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// header writes a table header whose first left columns are text (left
// aligned) and the rest numbers (right aligned).
func (t table) header(left int, cells ...string) {
	t.row(cells...)
	seps := make([]string, len(cells))
	for i := range seps {
		seps[i] = "---"
		if i >= left {
			seps[i] = "---:"
		}
	}
	t.row(seps...)
}

// contendedHeader and contendedRow are the columns of every contended
// table.
func contendedHeader(t table, withW bool) {
	cols := []string{"lock"}
	if withW {
		cols = append(cols, "W")
	}
	t.header(1, append(cols, "acq/s", "held", "per worker min–max", "wait p50", "wait p99", "max wait",
		"handoff p50", "handoff p99", "handoff p50 / PING", "handoff p99 / PING",
		"releaser again", "FIFO inversions", "cmds/acq", "incl. in Lua", "Redis CPU/acq")...)
}

func contendedRow(t table, c cellResult, withW bool) {
	cols := []string{c.Kind}
	if withW {
		cols = append(cols, fmt.Sprint(c.Workers))
	}
	if c.Err != "" {
		t.row(append(cols, "error: "+c.Err)...)
		return
	}
	t.row(append(cols, num(c.PerSec), us(c.HeldUs), fmt.Sprintf("%d–%d", c.WorkerMin, c.WorkerMax),
		us(c.Wait.P50), us(c.Wait.P99), us(c.MaxWaitUs),
		us(c.Handoff.P50), us(c.Handoff.P99), pings(c.HandoffP50Pings), pings(c.HandoffP99Pings), fmt.Sprintf("%.0f%%", c.SelfPct),
		fmt.Sprintf("%d (%.1f%%)", c.Inversions, c.InvPct),
		num(c.CmdsPerAcq), num(c.AllCmdsPerAcq), cpuUs(c.RedisCPUPerAcq))...)
}

// pings renders a multiple of the PING round trip; "-" when the run had
// none to divide by (results.json written before it was measured).
func pings(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f×", v)
}

// clients is the number of clients the cell's workers shared.
func (c *cellResult) clients() int {
	if c.Clients == 0 {
		return c.Workers
	}
	return c.Clients
}

// cell finds kindID's contended cell of w workers on clients clients.
func (r *report) cell(kindID string, w, clients, cs int) *cellResult {
	for i := range r.Contended {
		c := &r.Contended[i]
		if c.Kind == kindID && c.Workers == w && c.clients() == clients && c.CriticalUs == cs {
			return c
		}
	}
	return nil
}

// shared returns the workers and clients of the cells whose goroutines
// share clients; ok is false if the run had none.
func (r *report) shared() (w, clients int, ok bool) {
	cfg := r.Meta.Config
	return cfg.SharedClients * cfg.SharedGoroutines, cfg.SharedClients, cfg.SharedClients > 0
}

// headline is the table docs/performance.md quotes: 16 workers (or the largest
// run), the longest critical section.
func (r *report) headline() (w, cs int) {
	cfg := r.Meta.Config
	w = cfg.Workers[len(cfg.Workers)-1]
	for _, x := range cfg.Workers {
		if x == 16 {
			w = 16
		}
	}
	return w, cfg.CriticalUs[len(cfg.CriticalUs)-1]
}

func (r *report) markdown() string {
	var b strings.Builder
	t := table{&b}
	m := r.Meta
	fmt.Fprintf(&b, "# relock benchmark results\n\n")
	server := "a Redis given with -redis"
	if m.OwnServer {
		server = "a redis-server the benchmark started on loopback"
	}
	fmt.Fprintf(&b, "`%s`, started %s, took %.0f s. %s, %s, %d CPUs; Redis %s, %s. ",
		m.Command, m.Started, m.Seconds, m.Go, m.OS, m.CPUs, m.Redis, server)
	fmt.Fprintf(&b, "Each contended cell runs %.1f s", m.Config.CellSeconds)
	if m.Config.WarmUpAcqs > 0 {
		fmt.Fprintf(&b, " after a warm-up of its own workload (until every worker has acquired %d times, at most %d ms), so that its window opens on a lock already contended and nothing before it is counted", m.Config.WarmUpAcqs, m.Config.WarmUpMaxMs)
	}
	b.WriteString("; every worker has its own client (its own connections, as a separate process would)")
	if w, clients, ok := r.shared(); ok {
		fmt.Fprintf(&b, ", except in the cells labelled %s", shapeLabel(w, clients))
	}
	b.WriteString(". Figures on a shared 2-core machine are noisy: compare rows of one run, not runs.")
	if m.Ping.N > 0 {
		fmt.Fprintf(&b, " PING round trip at the start, one at a time: p50 %s, p99 %s over %d PINGs.", us(m.Ping.P50), us(m.Ping.P99), m.Ping.N)
	}
	if m.ClientOptions != "" {
		b.WriteString(" **Client options**: " + m.ClientOptions + ".")
	}
	b.WriteString("\n\n")
	if m.Config.Quick {
		b.WriteString("**This is a -quick smoke run: sizes are tiny and the figures mean little.**\n\n")
	}

	b.WriteString("## Configurations\n\n")
	t.header(3, "lock", "library", "configuration")
	for _, k := range r.Kinds {
		t.row(k.ID, k.Lib, k.Config)
	}

	if len(r.Contended) > 0 {
		w, cs := r.headline()
		fmt.Fprintf(&b, "\n## Headline: %d workers on one lock, %d µs critical section\n\n", w, cs)
		contendedHeader(t, false)
		for _, k := range r.Kinds {
			if c := r.cell(k.ID, w, w, cs); c != nil {
				contendedRow(t, *c, false)
			}
		}
	}

	if len(r.Targets) > 0 {
		b.WriteString("\n## Targets\n\nGoals checked against this run, measured, not asserted: a missed one is reported here, not failed. A peer is any lock of the other libraries, in either configuration.\n\n")
		t.header(3, "target", "measured in this run", "met")
		for _, x := range r.Targets {
			t.row(x.Goal, x.Measured, map[bool]string{true: "yes", false: "**no**"}[x.Met])
		}
	}

	if len(r.Uncontended) > 0 {
		b.WriteString("\n## (a) Uncontended Lock+Unlock\n\n")
		b.WriteString("One worker, a name nobody else uses. Two round trips (lock, unlock) are the floor, so each Lock+Unlock is timed next to two PINGs sent back to back on a plain go-redis client " +
			"(2 × the PING round trip, measured the way the lock's two calls are), and the ratio compares the p50s. " +
			"Every lock here runs Lua scripts, so the next column times two EVALSHA calls of an empty script in the same loop: what Lua alone adds to two round trips. " +
			"**stuck calls**: Lock calls on the free lock still waiting after 5 s, abandoned (and left out of the figures). " +
			costLoops(m.Config) +
			"**client CPU**: this process's CPU time (getrusage RUSAGE_SELF, user + system; the redis-server is a process of its own), **allocs** and **bytes**: its heap allocations and bytes allocated (runtime.MemStats Mallocs and TotalAlloc), **Redis CPU**: the server's CPU time, each per Lock+Unlock; " +
			"**/ RLock ref.**: Redis CPU over the reference's. " + rlockRefNote + "\n\n")
		t.header(1, "lock", "p50", "p99", "2 PINGs p50", "p50 / 2 PINGs p50", "2 empty EVALSHA / 2 PINGs, p50", "cmds per Lock+Unlock", "stuck calls",
			"client CPU/op", "allocs/op", "bytes/op", "Redis CPU/op", "/ RLock ref.")
		var ref float64
		for _, x := range r.Uncontended {
			if x.Kind == rlockRefID && x.Err == "" {
				ref = x.RedisCPUPerOp
			}
		}
		for _, x := range r.Uncontended {
			if x.Err != "" {
				t.row(x.Kind, "error: "+x.Err)
				continue
			}
			t.row(x.Kind, us(x.LockUnlock.P50), us(x.LockUnlock.P99), us(x.Ping.P50), fmt.Sprintf("%.2f×", x.Ratio), fmt.Sprintf("%.2f×", x.FloorRatio), num(x.CmdsPerOp), fmt.Sprint(x.Stuck),
				ranged(x.ClientCPUPerOp, x.ClientCPURange, cpuUs), ranged(x.AllocsPerOp, x.AllocsRange, num), ranged(x.BytesPerOp, x.BytesRange, bytesStr), ranged(x.RedisCPUPerOp, x.RedisCPURange, cpuUs), over(x.RedisCPUPerOp, ref))
		}
	}

	// Runs recorded before the warm-up counted every call from the
	// window's start.
	waitDef := "**wait**: Lock call to return; **max wait** includes calls still waiting when the window closed."
	fifoScope := "Figures: inversions as a share of grants; "
	if m.Config.WarmUpAcqs > 0 {
		waitDef = "**wait**: Lock call to return, for the calls begun in the window; **max wait** includes calls still waiting when the window closed and calls begun in the warm-up, each counted from the window's start."
		fifoScope = "Only requests begun in the window are compared. Figures: inversions as a share of their grants; "
	}
	if len(r.Contended) > 0 {
		b.WriteString("\n## (b) Contended: W workers on one lock\n\n")
		b.WriteString("Each worker loops Lock, critical section (a sleep), Unlock. **held**: the critical section as measured, grant to release; a sleep of 200 µs takes longer on a loaded machine, and the throughput of every lock is bounded by 1/held. " + waitDef + " " +
			"**handoff**: the holder calling Unlock to the next holder's Lock returning; **/ PING**: the same as a multiple of the PING round trip (p50) timed at the start of the run. **releaser again**: grants that went to the worker that released last (barging). " +
			"**FIFO inversions**: grants made while an earlier request still waited (see below). **cmds/acq**: commands clients sent per acquisition (INFO commandstats; an EVALSHA counts once), **incl. in Lua**: with the commands scripts ran. **Redis CPU/acq**: the server's CPU time per acquisition.\n")
		for _, cs := range m.Config.CriticalUs {
			fmt.Fprintf(&b, "\n### Critical section %d µs\n\n", cs)
			contendedHeader(t, true)
			for _, w := range m.Config.Workers {
				for _, k := range r.Kinds {
					if c := r.cell(k.ID, w, w, cs); c != nil {
						contendedRow(t, *c, true)
					}
				}
			}
		}
	}

	if w, clients, ok := r.shared(); ok && len(r.Contended) > 0 {
		label := shapeLabel(w, clients)
		fmt.Fprintf(&b, "\n## (b) Contended: %s on one lock\n\n", label)
		fmt.Fprintf(&b, "A few processes of many goroutines: %d clients, each shared by %d goroutines (its connection pool, its relock.Client, its rueidislock Locker), %d workers in all. "+
			"Each goroutine is a worker of its own, with its own relock owner, so goroutines of one client exclude each other as separate clients do. "+
			"Columns as above, per goroutine: **per worker**, **releaser again** and **FIFO inversions** count goroutines, not clients.\n", clients, w/clients, w)
		for _, cs := range m.Config.CriticalUs {
			fmt.Fprintf(&b, "\n### %s, critical section %d µs\n\n", label, cs)
			contendedHeader(t, false)
			for _, k := range r.Kinds {
				if c := r.cell(k.ID, w, clients, cs); c != nil {
					contendedRow(t, *c, false)
				}
			}
		}
	}

	if len(r.Many) > 0 {
		c0 := r.Many[0]
		fmt.Fprintf(&b, "\n## (c) Many locks: %d names, %d workers, no critical section\n\n", c0.Names, c0.Workers)
		b.WriteString("Each worker, on a client of its own, loops Lock, Unlock on a name picked at random. " + manyRounds(r.Meta.Config) + "Columns as in (b), and per acquisition (one Lock+Unlock) in the window: " +
			"**/ RLock ref.**: Redis CPU over the reference's in this cell; **client CPU**: this process's CPU time (getrusage RUSAGE_SELF, user + system), which in the window runs nothing but the kind's clients and the workers' loop (the redis-server is a process of its own); " +
			"**allocs** and **bytes**: its heap allocations and bytes allocated (runtime.MemStats Mallocs and TotalAlloc). " +
			"Both count the benchmark's own share, small and alike for every kind: its adapter's value for the held lock and its closures (2 allocations, 3 for redsync and redislock, whose adapters carry a renewal too) and its record of each wait. " +
			rlockRefNote + "\n\n")
		t.header(1, "lock", "acq/s", "per worker min–max", "wait p50", "wait p99", "max wait", "cmds/acq", "incl. in Lua", "Redis CPU/acq", "/ RLock ref.",
			"client CPU/acq", "allocs/acq", "bytes/acq")
		var ref float64
		for _, c := range r.Many {
			if c.Kind == rlockRefID && c.Err == "" {
				ref = c.RedisCPUPerAcq
			}
		}
		for _, c := range r.Many {
			if c.Err != "" {
				t.row(c.Kind, "error: "+c.Err)
				continue
			}
			t.row(c.Kind, ranged(c.PerSec, c.PerSecRange, num), fmt.Sprintf("%d–%d", c.WorkerMin, c.WorkerMax), us(c.Wait.P50), us(c.Wait.P99), us(c.MaxWaitUs),
				num(c.CmdsPerAcq), num(c.AllCmdsPerAcq), ranged(c.RedisCPUPerAcq, c.RedisCPURange, cpuUs), over(c.RedisCPUPerAcq, ref),
				ranged(c.ClientCPUPerAcq, c.ClientCPURange, cpuUs), ranged(c.AllocsPerAcq, c.AllocsRange, num), recorded(c.BytesPerAcq, bytesStr))
		}
	}

	if len(r.OneClient) > 0 {
		b.WriteString("\n## (p) One client per library, shared by every goroutine\n\n")
		b.WriteString("The shape of a Go service: each library's one client (one `relock.Client`, one rueidislock Locker, one redislock client, one redsync instance, each over one go-redis or rueidis client) shared by every worker goroutine, which loops Lock, Unlock on a name picked at random, each worker an owner of its own. " +
			oneClientRounds(r.Meta.Config) +
			"Columns as in (c), and per acquisition (one Lock+Unlock) in the window: **r+w syscalls**: this process's read and write system calls (syscr + syscw of /proc/self/io), which is how a client talks to Redis; **conns**: the connections the client held to Redis at the window's end (INFO clients, less those open before it was made), its subscription connections included. " +
			"**" + pipeliningOffID + "** is relock's reentrant lock with `Options.DisablePipelining`: what the pipelining of concurrent calls brings.\n\n")
		t.header(2, "cell", "lock", "acq/s", "wait p50", "wait p99", "max wait", "cmds/acq", "Redis CPU/acq", "client CPU/acq", "r+w syscalls/acq", "conns", "allocs/acq")
		for _, c := range r.OneClient {
			cellName := fmt.Sprintf("%d goroutines, %d names", c.Workers, c.Names)
			if c.Names == 1 {
				cellName = fmt.Sprintf("%d goroutines, one lock", c.Workers)
			}
			if c.Err != "" {
				t.row(cellName, c.Kind, "error: "+c.Err)
				continue
			}
			t.row(cellName, c.Kind, ranged(c.PerSec, c.PerSecRange, num), us(c.Wait.P50), us(c.Wait.P99), us(c.MaxWaitUs),
				num(c.CmdsPerAcq), ranged(c.RedisCPUPerAcq, c.RedisCPURange, cpuUs), ranged(c.ClientCPUPerAcq, c.ClientCPURange, cpuUs),
				num(c.SyscallsPerAcq), fmt.Sprint(c.Connections), ranged(c.AllocsPerAcq, c.AllocsRange, num))
		}
	}

	if len(r.Watchdog) > 0 {
		x0 := r.Watchdog[0]
		fmt.Fprintf(&b, "\n## (d) Keeping %d held locks alive: one client, lease %d ms renewed every %d ms, %d rounds\n\n",
			x0.Locks, x0.LeaseMs, x0.RenewMs, x0.Rounds)
		b.WriteString("redsync and redislock renew nothing themselves; their rows run the pattern their docs suggest, a goroutine per lock calling Extend/Refresh on a ticker. " +
			"**round trips**: pipelines for relock (a round's renewals in batches of at most 2000, a pipeline each), single calls for the others.\n\n")
		t.header(2, "lock", "mechanism", "cmds/round", "round trips/round", "client CPU/round", "Redis CPU/round", "client memory/lock", "goroutines", "lost", "stuck")
		for _, x := range r.Watchdog {
			if x.Err != "" {
				t.row(x.Kind, x.Mechanism, "error: "+x.Err)
				continue
			}
			t.row(x.Kind, x.Mechanism, num(x.CmdsPerRound), num(x.RoundTripsPerRnd), fmt.Sprintf("%.1f ms", x.ClientCPUPerRound),
				fmt.Sprintf("%.1f ms", x.RedisCPUPerRound), bytesStr(x.BytesPerLock), fmt.Sprint(max(0, x.Goroutines)), fmt.Sprint(x.Lost), fmt.Sprint(x.Stuck))
		}
	}

	if len(r.Waiters) > 0 {
		x0 := r.Waiters[0]
		fmt.Fprintf(&b, "\n## (e) %d goroutines of one client waiting on %d held locks\n\n", x0.Waiters, x0.Locks)
		b.WriteString("**connections**: server connections the waiting client opened (CLIENT LIST), **listening**: those subscribed or tracking keys. " +
			"**memory**: Go heap and stacks per waiting goroutine. **cmds/s**: what the waiting costs Redis.\n\n")
		t.header(2, "lock", "how waiters learn of a release", "connections", "listening", "memory/waiter", "cmds/s while waiting", "Redis CPU", "errors")
		for _, x := range r.Waiters {
			if x.Err != "" {
				t.row(x.Kind, x.Mechanism, "error: "+x.Err)
				continue
			}
			t.row(x.Kind, x.Mechanism, fmt.Sprint(x.Connections), fmt.Sprint(x.Listening), bytesStr(x.BytesPerWaitr),
				num(x.CmdsPerSec), fmt.Sprintf("%.0f%%", x.RedisCPUPct), fmt.Sprint(x.Errors))
		}
	}

	if len(r.Layout) > 0 {
		r.layoutSection(&b)
	}

	if len(r.Contended) > 0 {
		b.WriteString("\n## (f) FIFO inversions\n\n")
		b.WriteString("A request is *certainly ahead* of another when its first acquire attempt was answered (its worker's client saw the reply) before the other's Lock call began: " +
			"the server had queued it, or for the peers seen it fail, before the other existed. A grant is an inversion when a request certainly ahead of it was still waiting. " +
			"Requests that overlap are never counted, so a FIFO lock scores 0 whatever the timing. " + fifoScope +
			"max wait / p50 wait in brackets.\n\n")
		type shape struct{ w, clients, cs int }
		var shapes []shape
		cols := []string{"lock"}
		for _, cs := range m.Config.CriticalUs {
			for _, w := range m.Config.Workers {
				shapes = append(shapes, shape{w, w, cs})
				cols = append(cols, fmt.Sprintf("%s, %d µs", shapeLabel(w, w), cs))
			}
		}
		if w, clients, ok := r.shared(); ok {
			for _, cs := range m.Config.CriticalUs {
				shapes = append(shapes, shape{w, clients, cs})
				cols = append(cols, fmt.Sprintf("%s, %d µs", shapeLabel(w, clients), cs))
			}
		}
		t.header(1, cols...)
		for _, k := range r.Kinds {
			row := []string{k.ID}
			for _, s := range shapes {
				c := r.cell(k.ID, s.w, s.clients, s.cs)
				switch {
				case c == nil:
					row = append(row, "")
				case c.Err != "":
					row = append(row, "error")
				default:
					row = append(row, fmt.Sprintf("%.1f%% (%s)", c.InvPct, ratio(c.MaxWaitUs, c.Wait.P50)))
				}
			}
			t.row(row...)
		}
	}

	if len(r.Semaphore) > 0 {
		b.WriteString("\n## (s) Semaphore: W workers taking one permit of N\n\n")
		b.WriteString("relock's semaphore (package semaphore, Redisson's RSemaphore), given N permits by TrySetPermits; each worker has its own client and loops Acquire(1), Release(1), with no critical section. " +
			"The peers have no semaphore. Each cell is timed as the contended cells are, warm-up and window alike. " +
			"**wait** and **max wait** as in (b), of the Acquire call; **cmds/acq**, **incl. in Lua** and **Redis CPU/acq** as in (b). " +
			"**peak holders**: the most workers holding a permit at once in the window, each from its Acquire's return to its Release call (with no critical section, a hold seen so lasts about a microsecond, and seldom overlaps another); " +
			"**over N**: grants that made them more than N (0 expected; any is an error of the row).\n\n")
		t.header(1, "semaphore", "N", "W", "acq/s", "per worker min–max", "wait p50", "wait p99", "max wait", "cmds/acq", "incl. in Lua", "Redis CPU/acq", "peak holders", "over N")
		for _, c := range r.Semaphore {
			cols := []string{c.Kind, fmt.Sprint(c.Permits), fmt.Sprint(c.Workers)}
			if c.Err != "" {
				t.row(append(cols, "error: "+c.Err)...)
				continue
			}
			t.row(append(cols, num(c.PerSec), fmt.Sprintf("%d–%d", c.WorkerMin, c.WorkerMax), us(c.Wait.P50), us(c.Wait.P99), us(c.MaxWaitUs),
				num(c.CmdsPerAcq), num(c.AllCmdsPerAcq), cpuUs(c.RedisCPUPerAcq), fmt.Sprint(c.PeakHolders), fmt.Sprint(c.Violations))...)
		}
		if len(r.SemaphoreLock) > 0 {
			b.WriteString("\nThe reentrant lock's cell of the same workers (no critical section, a client each), run right before and right after each one-permit cell, for the semaphore target: the same shape minutes closer in time than its cell in (b).\n\n")
			t.header(1, "lock", "beside", "W", "acq/s", "per worker min–max", "wait p50", "wait p99", "max wait", "cmds/acq", "incl. in Lua", "Redis CPU/acq")
			for i, c := range r.SemaphoreLock {
				cols := []string{c.Kind, [2]string{"before", "after"}[i%2], fmt.Sprint(c.Workers)}
				if c.Err != "" {
					t.row(append(cols, "error: "+c.Err)...)
					continue
				}
				t.row(append(cols, num(c.PerSec), fmt.Sprintf("%d–%d", c.WorkerMin, c.WorkerMax), us(c.Wait.P50), us(c.Wait.P99), us(c.MaxWaitUs),
					num(c.CmdsPerAcq), num(c.AllCmdsPerAcq), cpuUs(c.RedisCPUPerAcq))...)
			}
		}
	}

	if len(r.Latch) > 0 {
		x0 := r.Latch[0]
		fmt.Fprintf(&b, "\n## (l) Latch wake-up: %d goroutines on %d clients awaiting one latch\n\n", x0.Awaiters, x0.Clients)
		fmt.Fprintf(&b, "relock's count-down latch (package latch, Redisson's RCountDownLatch), %d rounds on one latch. "+
			"Each round sets its count to 1 (TrySetCount), starts the goroutines calling Await, spread over the clients, and waits until they are parked: "+
			"a subscriber per client on the latch's channel (PUBSUB NUMSUB), every goroutine counted among its client's waiters (Client.Stats), and no more reads of the count 10 ms later (INFO commandstats). "+
			"They sleep %d ms more, then one CountDown from another client opens the latch. "+
			"**wake**: from just before that CountDown is called to each Await's return, for every goroutine of every round. "+
			"**cmds while parked**: commands clients sent in those %d ms of every round (0 expected); **cmds per round**: those of each round, from the TrySetCount to the last Await's return (a client's awaiters share their reads of the count; those that join a channel before their client has heard the TrySetCount's message on it are woken by it, and their client reads the count once more); **of them set-up**: the clients' one-time commands, which only the first round has (connections' HELLO, the SUBSCRIBE with its confirming PING, script loads). "+
			"**early**: Await calls that returned before the CountDown (0 expected; any is an error of the row).\n\n", x0.Rounds, m.Config.LatchSettleMs, m.Config.LatchSettleMs)
		t.header(1, "latch", "wake p50", "wake p99", "wake max", "cmds while parked", "cmds per round", "of them set-up", "early")
		for _, x := range r.Latch {
			if x.Err != "" {
				t.row(x.Kind, "error: "+x.Err)
				continue
			}
			rounds := make([]string, len(x.CmdsPerRound))
			for i, n := range x.CmdsPerRound {
				rounds[i] = fmt.Sprint(n)
			}
			setup := make([]string, len(x.SetupPerRound))
			for i, n := range x.SetupPerRound {
				setup[i] = fmt.Sprint(n)
			}
			t.row(x.Kind, us(x.Wake.P50), us(x.Wake.P99), us(x.Wake.Max), fmt.Sprint(x.ParkedCmds), strings.Join(rounds, ", "), strings.Join(setup, ", "), fmt.Sprint(x.Early))
		}
	}

	if len(r.Replica) > 0 {
		b.WriteString("\n## (r) Uncontended Lock+Unlock with one replica\n\n")
		b.WriteString("Scenario (a) again, with a second redis-server on loopback replicating the benchmark's server. " +
			"By default (Options.SyncReplicas SyncAuto) relock pipelines `WAIT <replicas> <SyncTimeout>` behind every acquire script, on the same connection, when the master reports replicas (INFO, read at most once a second), " +
			"so that Lock returns once the replica has the lock: each relock lock runs with its defaults (sync **on**) and with `SyncReplicas: relock.SyncOff` (sync **off**). " +
			"The first peer, which never waits for replicas, runs on the same server for reference (sync **peer**). " +
			"**p50 / 2 PINGs p50** and **cmds per Lock+Unlock** as in (a), the replica's REPLCONF ACKs left out; **WAITs per Lock+Unlock**: WAIT calls the master ran (INFO commandstats).\n\n")
		t.header(2, "lock", "sync", "p50", "p99", "p50 / 2 PINGs p50", "cmds per Lock+Unlock", "WAITs per Lock+Unlock")
		for _, x := range r.Replica {
			switch {
			case x.Skipped != "":
				t.row(x.Kind, x.Sync, "skipped: "+x.Skipped)
			case x.Err != "":
				t.row(x.Kind, x.Sync, "error: "+x.Err)
			default:
				t.row(x.Kind, x.Sync, us(x.LockUnlock.P50), us(x.LockUnlock.P99), fmt.Sprintf("%.2f×", x.Ratio), num(x.CmdsPerOp), num(x.Waits))
			}
		}
	}

	if r.Group != nil {
		r.groupSection(&b)
	}
	if r.Late != nil {
		r.lateSection(&b)
	}
	if r.Scale != nil {
		r.Scale.section(&b, r.Meta.Config)
	}
	if r.Overshoot != nil {
		r.overshootSection(&b)
	}
	return b.String()
}

// shapeLabel names a cell's workers: "W=16" when each has a client of
// its own, else "4 clients x 8 goroutines".
func shapeLabel(w, clients int) string {
	if clients == w {
		return fmt.Sprintf("W=%d", w)
	}
	return fmt.Sprintf("%d clients x %d goroutines", clients, w/clients)
}

// rlockRefNote describes the Redisson RLock reference row of (a) and (c).
var rlockRefNote = "**" + rlockRefID + "**, not a library: " + referenceKinds()[0].Config + "."

// recorded renders v with f, or "–" for 0: a figure that results.json
// written before it was recorded lacks.
func recorded(v float64, f func(float64) string) string {
	if v == 0 {
		return "–"
	}
	return f(v)
}

// ranged renders v, a median over rounds, as recorded does, with the
// rounds' span beside it when f tells its ends apart, in v's unit once:
// "57.6 µs (55.1–61.0)".
func ranged(v float64, s span, f func(float64) string) string {
	m := recorded(v, f)
	lo, hi := f(s.Min), f(s.Max)
	if v == 0 || lo == hi {
		return m
	}
	unit := func(x string) string { _, u, _ := strings.Cut(x, " "); return u }
	if u := unit(m); u != "" && unit(lo) == u && unit(hi) == u {
		lo, hi = strings.TrimSuffix(lo, " "+u), strings.TrimSuffix(hi, " "+u)
	}
	return fmt.Sprintf("%s (%s–%s)", m, lo, hi)
}

// manyRounds says where scenario (c)'s figures come from: the median of
// interleaved rounds, or, in results.json written before them, one
// window per kind.
// oneClientRounds says how scenario (p)'s figures were made.
func oneClientRounds(c config) string {
	if c.OneClientRounds < 2 {
		return ""
	}
	return fmt.Sprintf("The kinds take turns in %d rounds of a %d ms window each; figures as in (c), medians over the rounds. ",
		c.OneClientRounds, c.ManyWindowMs)
}

func manyRounds(c config) string {
	if c.ManyRounds < 2 {
		return ""
	}
	return fmt.Sprintf("The kinds take turns in %d rounds of a %d ms window each, every round starting one kind further on; acquisitions/s and every per-acquisition figure are medians over the rounds (in brackets the lowest and highest round's), and the waits, per-worker counts and commands are the round's whose acquisitions/s was the median. ",
		c.ManyRounds, c.ManyWindowMs)
}

// costLoops says where scenario (a)'s cost columns come from: the
// interleaved rounds, or, in results.json written before them, one loop
// per kind.
func costLoops(c config) string {
	if c.UncontendedRounds == 0 {
		return "The last columns come from a second loop of as many Lock+Unlock calls back to back, after a garbage collection, without the PINGs and empty scripts, which would count in them: "
	}
	return fmt.Sprintf("The last columns come from %d rounds in which every lock in turn, in an order shuffled each round, runs %d Lock+Unlock calls back to back after a garbage collection, without the PINGs and empty scripts, which would count in them; "+
		"each is the median over the rounds, with the lowest and highest round in brackets where they differ: a burst of load on the machine then spoils a round of a few locks, which the median leaves out, not one lock's whole measurement. ",
		c.UncontendedRounds, c.costOps()/c.UncontendedRounds)
}

// over renders v as a multiple of ref, "–" without both.
func over(v, ref float64) string {
	if v == 0 || ref == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", v/ref)
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f×", a/b)
}
