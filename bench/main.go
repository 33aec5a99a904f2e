// Command bench measures relock's locks against the Go peers a user would
// pick instead (redsync, redislock, rueidislock), each in its default and
// one tuned configuration, on one real redis-server in one run: the
// uncontended round-trip cost, throughput and fairness under contention
// (beside two reference FIFO hand-offs that are not libraries, to show
// what a hand-off and Redisson's layout cost Redis), many locks, lease
// renewal of many held locks, many waiting goroutines, and what relock's
// replica sync adds to the uncontended cost with one replica attached;
// for the uncontended Lock+Unlock and many locks, also what each
// acquisition costs the client in CPU time and allocations, and the
// server beside Redisson's RLock scripts on a bare client; relock's
// semaphore under contention and its latch's wake-up of many waiters,
// which the peers have no equal of; how far past its context's deadline
// each blocking call of relock's primitives returns when Redis hangs
// (accepts connections, never answers); and how long each of its locks
// stays unavailable after an acquire attempt cut off from its caller
// runs late. It writes a Markdown report, a JSON file of every figure
// and an SVG chart.
//
//	cd bench && go run .            # full run, a few minutes
//	cd bench && go run . -quick     # smoke run, seconds
//	cd bench && go run . -scenarios o   # scenario (o) alone, seconds
//	cd bench && go run . -scenarios t   # scenario (t) alone, a minute
//
// Without -redis it starts its own redis-server on a free loopback port
// (and, for the replica scenario, a replica of it) and stops it at the
// end; with -redis it uses lock names starting with "relock-bench:" on
// that server and changes nothing else, and skips the replica scenario.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	os.Exit(run())
}

func run() int {
	addr := flag.String("redis", "", "host:port of a Redis to use (default: start redis-server on a free loopback port)")
	out := flag.String("out", "results", "directory for results.md, results.json and results.svg")
	quick := flag.Bool("quick", false, "smoke run: tiny sizes, seconds (for CI)")
	only := flag.String("only", "", "comma-separated substrings: run only the kinds whose name contains one")
	scen := flag.String("scenarios", "abxcpdeslgzrot", "scenarios to run: a uncontended (and c: with the Redisson RLock reference), b contended (and f FIFO), x what a FIFO hand-off costs Redis (reference kinds beside b's), c many locks, p one client per library shared by all goroutines, d watchdog, e waiters, s semaphore (relock only), l latch wake-up (relock only), g group lock against multilock over the same values (relock only), z how cost grows with names, held leases, waiters and sustained give-ups on one Client (relock only), r uncontended with one replica (not with -redis), o how far past their deadline relock's calls return when Redis hangs (relock only), t how long a lock stays unavailable after an acquire cut off from its caller runs late (relock only)")
	render := flag.String("render", "", "write results.md and results.svg again from this results.json, measuring nothing")
	flag.Parse()
	if *render != "" {
		r, err := readReport(*render)
		if err == nil {
			err = r.write(*out, false)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		return 0
	}

	cfg := fullConfig()
	if *quick {
		cfg = quickConfig()
	}
	cfg.CellSeconds = cfg.CellDuration.Seconds()
	cfg.ManyWindowMs = int(cfg.ManyWindow / time.Millisecond)
	cfg.WarmUpMaxMs = int(cfg.WarmUpMax / time.Millisecond)
	cfg.LatchSettleMs = int(cfg.LatchSettle / time.Millisecond)
	cfg.OvershootDeadlineMs = int(cfg.OvershootDeadline / time.Millisecond)
	for i := range cfg.ScaleLeases {
		cfg.ScaleLeases[i].WatchdogMs = cfg.ScaleLeases[i].Watchdog.Milliseconds()
	}

	var srv *server
	if *addr == "" {
		s, err := startServer()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		defer s.stop()
		s.stopOnSignal()
		srv, *addr = s, s.addr
	}
	admin := redis.NewClient(&redis.Options{Addr: *addr, ClientName: "relock-bench-admin"})
	defer admin.Close()
	ctx := context.Background()
	if err := admin.Ping(ctx).Err(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: cannot reach Redis at %s: %v\n", *addr, err)
		return 1
	}

	selected := func(id string) bool { return *only == "" || containsAny(id, strings.Split(*only, ",")) }
	var ks []kind
	for _, k := range kinds() {
		if selected(k.ID) {
			ks = append(ks, k)
		}
	}
	e := &env{addr: *addr, srv: srv, admin: admin, cfg: cfg, began: time.Now()}
	has := func(s byte) bool { return strings.IndexByte(*scen, s) >= 0 }
	runSem, runLatch := has('s') && selected(semaphoreID), has('l') && selected(latchID)
	runOvershoot := has('o') && selected(overshootID)
	runLate := has('t') && selected(lateID)
	per := 0
	for _, s := range []byte("aed") {
		if has(s) {
			per++
		}
	}
	if has('c') {
		per += max(1, cfg.ManyRounds)
	}
	if has('b') {
		per += len(contendedCells(cfg))
	}
	e.steps = per * len(ks)
	// The reference kinds of scenarios (a) and (c) run after the
	// libraries' rows there, and nowhere else.
	var refKs []kind
	for _, k := range referenceKinds() {
		if selected(k.ID) {
			refKs = append(refKs, k)
		}
	}
	if has('a') {
		e.steps += len(refKs)
	}
	if has('p') {
		e.steps += len(oneClientCells(cfg)) * max(1, cfg.OneClientRounds) * len(oneClientKinds(ks))
	}
	if has('c') {
		e.steps += len(refKs) * max(1, cfg.ManyRounds)
	}
	var layoutKs []kind
	if has('x') {
		for _, k := range layoutKinds() {
			if selected(k.ID) {
				layoutKs = append(layoutKs, k)
			}
		}
		e.steps += len(layoutCells(cfg)) * len(layoutKs)
	}
	if has('r') {
		e.steps += len(replicaRows(ks))
	}
	if runSem {
		e.steps += len(semaphoreCells(cfg)) + 2*len(besideCells(cfg))
	}
	if runLatch {
		e.steps++
	}
	runGroup := has('g') && (selected(groupID) || selected(multiID))
	if runGroup {
		e.steps += groupSteps
	}
	if runOvershoot {
		e.steps += overshootRows()
	}
	if runLate {
		e.steps += len(latePrimitives)
	}
	runScale := has('z') && selected(scaleID)
	if runScale {
		e.steps += scaleSteps(cfg)
	}

	r := &report{Meta: meta{
		Started:   time.Now().UTC().Format(time.RFC3339),
		Go:        runtime.Version(),
		OS:        runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:      runtime.NumCPU(),
		Redis:     serverVersion(ctx, admin),
		OwnServer: srv != nil,
		Config:    cfg,
		Command:   "cd bench && go run ." + map[bool]string{true: " -quick", false: ""}[*quick],
		ClientOptions: "relock's kinds, the tuned redsync and redislock and the Redisson RLock reference run on go-redis clients with " + relockClientOpts +
			" (relock's own: no retries, socket deadlines from the call's context); the default redsync and redislock, the FIFO hand-off references and the benchmark's PING client keep go-redis's defaults (3 retries, 3 s read and write timeouts); rueidislock runs on rueidis, with its defaults",
	}}
	for _, k := range ks {
		r.Kinds = append(r.Kinds, kindInfo{ID: k.ID, Lib: k.Lib, Config: k.Config})
	}
	ping, err := e.pingRoundTrip(ctx, pingRoundTrips)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: PING:", err)
		return 1
	}
	r.Meta.Ping, e.pingUs = ping, ping.P50
	fmt.Fprintf(os.Stderr, "bench: Redis %s at %s, %d CPUs, %d kinds, %d steps, PING round trip p50 %.1fus\n", r.Meta.Redis, *addr, r.Meta.CPUs, len(ks), e.steps, ping.P50)

	if has('a') {
		var rows []uncontendedRow
		for _, k := range slices.Concat(ks, refKs) {
			rows = append(rows, uncontendedRow{k: k})
		}
		e.runUncontended(rows, func(i int) {
			x := &rows[i]
			e.progress("uncontended  %-20s Lock+Unlock p50 %6.1fus  (%.2fx two PINGs; two empty scripts %.2fx)%s",
				x.k.ID, x.res.LockUnlock.P50, x.res.Ratio, x.res.FloorRatio, errSuffix(x.err))
		})
		fmt.Fprintf(os.Stderr, "bench: uncontended costs, medians (and ranges) of %d interleaved rounds:\n", cfg.UncontendedRounds)
		for _, x := range rows {
			res := x.res
			r.Uncontended = append(r.Uncontended, res)
			fmt.Fprintf(os.Stderr, "  %-20s client CPU/op %5.1fus (%.1f-%.1f)  allocs/op %5.1f (%.1f-%.1f, %.0f B)  Redis CPU/op %5.1fus (%.1f-%.1f)%s\n",
				x.k.ID, res.ClientCPUPerOp, res.ClientCPURange.Min, res.ClientCPURange.Max, res.AllocsPerOp, res.AllocsRange.Min, res.AllocsRange.Max, res.BytesPerOp,
				res.RedisCPUPerOp, res.RedisCPURange.Min, res.RedisCPURange.Max, errSuffix(x.err))
		}
	}
	// Scenario (x)'s cell of w workers, run right after (b)'s cells of
	// the same shape when (b) runs too, so the rows compared ran close
	// together in time.
	layout := func(w int) {
		for _, c := range layoutCells(cfg) {
			if c.W != w {
				continue
			}
			for _, k := range layoutKs {
				res, err := e.runCell(k, c)
				res.Err = errText(err)
				r.Layout = append(r.Layout, res)
				e.progress("hand-off     %-20s W=%-3d %7.0f acq/s  cmds/acq %5.1f (incl. in Lua %5.1f)  Redis CPU/acq %5.1fus  inversions %d%s%s",
					k.ID, c.W, res.PerSec, res.CmdsPerAcq, res.AllCmdsPerAcq, res.RedisCPUPerAcq, res.Inversions, res.faults(), errSuffix(err))
			}
		}
	}
	if has('b') {
		for _, c := range contendedCells(cfg) {
			for _, k := range ks {
				res, err := e.runCell(k, c)
				res.Err = errText(err)
				r.Contended = append(r.Contended, res)
				e.progress("contended    %-20s %-5s cs=%3dus %7.0f acq/s  max wait %8.1fms  handoff p50 %5.1f PINGs  cmds/acq %5.1f  Redis CPU/acq %5.1fus  inversions %d (%.1f%%)  warm-up %.2fs%s%s",
					k.ID, shapeLabel(c.W, c.Clients), res.CriticalUs, res.PerSec, res.MaxWaitUs/1e3, res.HandoffP50Pings, res.CmdsPerAcq, res.RedisCPUPerAcq, res.Inversions, res.InvPct, res.WarmUpSeconds, res.faults(), errSuffix(err))
			}
			if c.CS == 0 && c.Clients == c.W {
				layout(c.W)
			}
		}
	} else {
		for _, w := range cfg.Workers {
			layout(w)
		}
	}
	if has('c') {
		// Each round runs every kind once, starting one kind further on
		// than the last, so that a burst of load on the shared machine
		// spoils a round of a few kinds, which their medians leave out,
		// rather than one kind's only window.
		c := cell{Scenario: "many", W: cfg.ManyWorkers, Clients: cfg.ManyWorkers, Names: cfg.ManyNames, Window: cfg.ManyWindow}
		many := slices.Concat(ks, refKs)
		rounds := make([][]cellResult, len(many))
		for round := range max(1, cfg.ManyRounds) {
			for j := range many {
				i := (round + j) % len(many)
				k := many[i]
				res, err := e.runCell(k, c)
				res.Err = errText(err)
				rounds[i] = append(rounds[i], res)
				e.progress("many locks   %-20s %d names W=%d round %d %7.0f acq/s  max wait %8.1fms  client CPU/acq %5.1fus  allocs/acq %5.1f (%.0f B)  Redis CPU/acq %5.1fus  warm-up %.2fs%s%s",
					k.ID, c.Names, c.W, round+1, res.PerSec, res.MaxWaitUs/1e3, res.ClientCPUPerAcq, res.AllocsPerAcq, res.BytesPerAcq, res.RedisCPUPerAcq, res.WarmUpSeconds, res.faults(), errSuffix(err))
			}
		}
		for _, rs := range rounds {
			r.Many = append(r.Many, mergeRounds(rs))
		}
	}
	if has('p') {
		r.OneClient = e.runOneClient(oneClientKinds(ks))
	}
	if has('d') {
		for _, k := range ks {
			res, err := e.runWatchdog(k)
			res.Err = errText(err)
			r.Watchdog = append(r.Watchdog, res)
			e.progress("watchdog     %-20s %d locks: %8.0f cmds/round, %7.1f round trips/round, CPU %6.1fms/round%s",
				k.ID, res.Locks, res.CmdsPerRound, res.RoundTripsPerRnd, res.ClientCPUPerRound, errSuffix(err))
		}
	}
	if has('e') {
		for _, k := range ks {
			res, err := e.runWaiters(k)
			res.Err = errText(err)
			r.Waiters = append(r.Waiters, res)
			e.progress("waiters      %-20s %d waiters: %d conns (%d listening), %6.0f B/waiter, %8.0f cmds/s%s",
				k.ID, res.Waiters, res.Connections, res.Listening, res.BytesPerWaitr, res.CmdsPerSec, errSuffix(err))
		}
	}
	if runSem {
		for _, c := range semaphoreCells(cfg) {
			lockBeside := func(when string) {
				if c.Permits != 1 {
					return
				}
				res, err := e.runCell(reentrantKind(), cell{Scenario: "semaphore-beside", W: c.W, Clients: c.W, Names: 1})
				res.Err = errText(err)
				r.SemaphoreLock = append(r.SemaphoreLock, res)
				e.progress("semaphore    %-20s %s N=1 W=%d %7.0f acq/s  Redis CPU/acq %5.1fus%s%s",
					res.Kind, when, c.W, res.PerSec, res.RedisCPUPerAcq, res.faults(), errSuffix(err))
			}
			lockBeside("before")
			res, err := e.runSemaphore(c)
			res.Err = errText(err)
			r.Semaphore = append(r.Semaphore, res)
			e.progress("semaphore    %-20s N=%d %-5s %7.0f acq/s  wait p50 %6.2fms p99 %6.2fms max %7.1fms  cmds/acq %5.2f  Redis CPU/acq %5.1fus  peak holders %d  warm-up %.2fs%s%s",
				res.Kind, c.Permits, shapeLabel(c.W, c.Clients), res.PerSec, res.Wait.P50/1e3, res.Wait.P99/1e3, res.MaxWaitUs/1e3, res.CmdsPerAcq, res.RedisCPUPerAcq, res.PeakHolders, res.WarmUpSeconds, res.faults(), errSuffix(err))
			lockBeside("after")
		}
	}
	if runLatch {
		res, err := e.runLatch()
		res.Err = errText(err)
		r.Latch = append(r.Latch, res)
		e.progress("latch        %-20s %d awaiters on %d clients, %d rounds: wake p50 %5.2fms p99 %5.2fms max %5.2fms  cmds while parked %d (%.2fs)  cmds/round %v (set-up %v)%s",
			res.Kind, res.Awaiters, res.Clients, res.Rounds, res.Wake.P50/1e3, res.Wake.P99/1e3, res.Wake.Max/1e3, res.ParkedCmds, res.ParkedSeconds, res.CmdsPerRound, res.SetupPerRound, errSuffix(err))
	}
	if runGroup {
		r.Group = e.runGroup()
	}
	if runLate {
		r.Late = e.runLate()
	}
	if runScale {
		r.Scale = e.runScale()
	}
	// Last: a replica attached to the server would change what the
	// others measure (the semaphore's acquires would wait for it too).
	if has('r') {
		r.Replica = e.runReplicaSync(ks)
	}
	// After the others: it silences go-redis's logger for good.
	if runOvershoot {
		res, err := e.runOvershoot()
		res.Err = errText(err)
		r.Overshoot = &res
		for _, x := range res.Calls {
			e.progress("overshoot    %-12s %-8s deadline %dms: overshoot p50 %6.1fms max %6.1fms  not DeadlineExceeded %d%s",
				x.Primitive, x.Call, res.DeadlineMs, x.Overshoot.P50/1e3, x.Overshoot.Max/1e3, x.Other, x.note())
		}
		fmt.Fprintf(os.Stderr, "bench: overshoot: %d clients' Shutdown(%dms ctx): longest %.1fms, %d past %dms after the ctx; %d goroutines left%s\n",
			res.Clients, res.ShutdownContextMs, res.ShutdownMs, res.LateShutdowns, res.TargetMs, res.Leaked, errSuffix(err))
	}
	r.Meta.Seconds = round1(time.Since(e.began).Seconds())
	r.Targets = r.targets()

	if err := r.write(*out, true); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "bench: done in %.0fs; wrote %s/results.{md,json,svg}\n", r.Meta.Seconds, *out)
	mine, peers := r.failures()
	if peers > 0 {
		fmt.Fprintf(os.Stderr, "bench: %d measurements of peers failed; see their rows\n", peers)
	}
	if mine > 0 {
		fmt.Fprintf(os.Stderr, "bench: %d measurements of relock failed; see their rows\n", mine)
		return 1
	}
	return 0
}

// pingRoundTrips is how many PINGs time the round trip at the start.
const pingRoundTrips = 300

// contendedCells lists scenario b's cells: for each critical section,
// every W with a client per worker, then the shared clients.
func contendedCells(cfg config) []cell {
	var cells []cell
	for _, cs := range cfg.CriticalUs {
		c := cell{Scenario: "contended", CS: time.Duration(cs) * time.Microsecond, Names: 1}
		for _, w := range cfg.Workers {
			c.W, c.Clients = w, w
			cells = append(cells, c)
		}
		if cfg.SharedClients > 0 {
			c.W, c.Clients = cfg.SharedClients*cfg.SharedGoroutines, cfg.SharedClients
			cells = append(cells, c)
		}
	}
	return cells
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if sub = strings.TrimSpace(sub); sub != "" && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// faults lists a cell's lock errors and mutual-exclusion violations (a
// semaphore's: more holders than permits), which no table shows, when it
// had any.
func (c *cellResult) faults() string {
	over := "MUTUAL EXCLUSION VIOLATIONS"
	if c.Permits > 0 {
		over = "GRANTS ABOVE THE PERMITS"
	}
	var s string
	for _, f := range []struct {
		n    int
		what string
	}{{c.Errors, "errors"}, {c.Violations, over}, {c.WarmUpErrors, "warm-up errors"}} {
		if f.n > 0 {
			s += fmt.Sprintf("  %s: %d", f.what, f.n)
		}
	}
	return s
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return "  ERROR: " + err.Error()
}

// write writes results.md and results.svg, and results.json too unless
// the report was read from it.
func (r *report) write(dir string, withJSON bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{
		"results.md":  []byte(r.markdown()),
		"results.svg": []byte(r.svg()),
	}
	if withJSON {
		files["results.json"] = r.json()
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
