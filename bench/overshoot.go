package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/blackhole"
	"github.com/relock-go/relock/reentrant"
)

// overshootResult is scenario (o): how far past its context's deadline
// each blocking call of relock's primitives returns when Redis hangs.
// The clients talk to the server through proxies
// (internal/testing/blackhole) that, once cut, accept connections and
// answer nothing.
type overshootResult struct {
	DeadlineMs int            `json:"deadline_ms"`
	Runs       int            `json:"runs_per_call"`
	TargetMs   int            `json:"target_max_overshoot_ms"`
	Calls      []overshootRow `json:"calls"`
	// Clients is how many relock clients the scenario made; each is
	// shut down at the end with a context overshootShutdown away
	// (ShutdownContextMs), with the black-holed work still under way.
	// ShutdownMs is the longest Shutdown. LateShutdowns counts those
	// still running TargetMs past their context's end, which the proxies
	// then cut short by closing every connection.
	Clients           int     `json:"clients"`
	ShutdownContextMs int     `json:"shutdown_context_ms"`
	ShutdownMs        float64 `json:"shutdown_max_ms"`
	LateShutdowns     int     `json:"shutdowns_past_target"`
	// Leaked counts the goroutines still running once the clients were
	// shut down, their go-redis clients closed and the proxies stopped,
	// beyond those running before the scenario: 0 expected; any is an
	// error of the scenario.
	Leaked int    `json:"goroutines_left"`
	Err    string `json:"error,omitempty"`
}

// overshootRow is one call of one primitive, timed Runs times.
type overshootRow struct {
	Primitive string `json:"primitive"`
	Call      string `json:"call"`
	// Overshoot runs from each call's deadline to its return; negative
	// when it returned before.
	Overshoot dist `json:"overshoot"`
	// Other counts the calls whose error does not match
	// context.DeadlineExceeded, nil included: 0 expected.
	Other      int    `json:"errors_not_deadline_exceeded"`
	FirstOther string `json:"first_error_not_deadline_exceeded,omitempty"`
	// Met: every run returned at most TargetMs past its deadline, with
	// an error matching context.DeadlineExceeded.
	Met bool   `json:"met"`
	Err string `json:"error,omitempty"` // of the set-up, before the cut
}

// note is what a progress line adds to the row's figures: its error,
// or the first error that did not match context.DeadlineExceeded.
func (x *overshootRow) note() string {
	switch {
	case x.Err != "":
		return "  ERROR: " + x.Err
	case x.Other > 0:
		return "  first: " + x.FirstOther
	}
	return ""
}

const (
	// overshootID names scenario (o) for -only.
	overshootID = "relock overshoot"
	// overshootTarget is the slack relock aims for past a deadline.
	overshootTarget = 50 * time.Millisecond
	// overshootLease is the clients' WatchdogTimeout.
	overshootLease = 2 * time.Second
	// overshootShutdown bounds each client's Shutdown at the end.
	overshootShutdown = 200 * time.Millisecond
	// overshootSetupWithin bounds the set-up, which the server answers.
	overshootSetupWithin = 30 * time.Second
	// overshootSettle bounds the wait for the scenario's goroutines to
	// end once everything is closed.
	overshootSettle = 2 * time.Second
)

// overshootRows is how many rows scenario (o) reports.
func overshootRows() int {
	n := 0
	for _, p := range overshootPrimitives {
		n += len(p.calls)
	}
	return n
}

// runOvershoot runs scenario (o). It sets every primitive up through the
// proxies, on clients of its own, cuts the proxies, then times each
// call OvershootRuns times with a deadline OvershootDeadline away, the
// primitives at once, each primitive's calls one after another (a held
// call's first). At the end it shuts the clients down, stops the
// proxies, deletes the keys it wrote and counts the goroutines left. It
// silences go-redis's logger for the rest of the process, so it runs
// last.
func (e *env) runOvershoot() (overshootResult, error) {
	cfg := e.cfg
	res := overshootResult{DeadlineMs: cfg.OvershootDeadlineMs, Runs: cfg.OvershootRuns, TargetMs: int(overshootTarget / time.Millisecond),
		ShutdownContextMs: int(overshootShutdown / time.Millisecond)}
	g0 := runtime.NumGoroutine()
	// Every dial the black hole accepts fails its handshake, and
	// go-redis logs each one.
	redis.SetLogger(discardLog{})
	// ctx holds the locks taken before the cut until the calls are done.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := e.name("overshoot")
	for _, p := range overshootPrimitives {
		for _, c := range p.calls {
			res.Calls = append(res.Calls, overshootRow{Primitive: p.name, Call: c.name})
		}
	}
	o := &outage{}
	within := time.AfterFunc(overshootSetupWithin, cancel)
	prims, err := o.setUp(ctx, e.addr, base, res.Calls, cfg.OvershootRuns)
	if !within.Stop() && err == nil {
		err = fmt.Errorf("set-up not done within %v", overshootSetupWithin)
	}
	if err == nil {
		o.cut()
		var wg sync.WaitGroup
		for _, rows := range prims {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, r := range rows {
					r.measure(cfg.OvershootDeadline)
				}
			}()
		}
		wg.Wait()
	}
	longest, late := o.stop()
	res.Clients, res.ShutdownMs, res.LateShutdowns = len(o.rcs), round1(float64(longest)/1e6), late
	cancel()
	res.Leaked = goroutinesAbove(g0, overshootSettle)
	if err := e.dropKeys(base); err != nil {
		fmt.Fprintln(os.Stderr, "warning: deleting scenario (o)'s keys:", err)
	}
	if err == nil && res.Leaked > 0 {
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		err = fmt.Errorf("%d goroutines still running %v after the clients and proxies were stopped (stacks above)", res.Leaked, overshootSettle)
	}
	return res, err
}

// An outage is scenario (o)'s fixture: the proxies in front of the
// server, and every client made through them.
type outage struct {
	proxies []*blackhole.Proxy
	rdbs    []*redis.Client
	rcs     []*relock.Client
}

// setUp starts the proxies to addr and sets every primitive up through
// them, its calls' rows being rows, in order: it returns each
// primitive's rows ready to time. A row whose set-up failed gets the
// error and is left out; the error returned is the proxies'. ctx holds
// the locks the set-up takes; stop undoes the rest, whatever setUp
// returned.
func (o *outage) setUp(ctx context.Context, addr, base string, rows []overshootRow, runs int) ([][]*timedRow, error) {
	nodes := 1
	for _, p := range overshootPrimitives {
		nodes = max(nodes, p.nodes)
	}
	for range nodes {
		px, err := blackhole.Start(addr)
		if err != nil {
			return nil, err
		}
		o.proxies = append(o.proxies, px)
	}
	var prims [][]*timedRow
	for _, p := range overshootPrimitives {
		prims = append(prims, o.prepare(ctx, p, rows[:len(p.calls)], base, runs))
		rows = rows[len(p.calls):]
	}
	return prims, nil
}

// cut black-holes every proxy.
func (o *outage) cut() {
	for _, p := range o.proxies {
		p.Blackhole()
	}
}

// client returns a new relock.Client over a go-redis client with default
// options, through proxy i.
func (o *outage) client(i int) (*relock.Client, error) {
	rdb := redis.NewClient(&redis.Options{Addr: o.proxies[i].Addr()})
	rc, err := relock.New(rdb, &relock.Options{WatchdogTimeout: overshootLease, Logger: quiet})
	if err != nil {
		rdb.Close()
		return nil, err
	}
	o.rdbs, o.rcs = append(o.rdbs, rdb), append(o.rcs, rc)
	return rc, nil
}

// A timedRow is a row's runs, ready to time.
type timedRow struct {
	row  *overshootRow
	held bool
	runs []timedCall
}

// prepare makes p's clients, has each lock and unlock a lock of its own
// (so that it has talked to the server before the cut, as a client in
// use has), and readies runs runs of each of p's calls, whose rows are
// rows. It returns the rows ready to time, the held ones first; a row
// whose set-up failed gets the error and is left out.
func (o *outage) prepare(ctx context.Context, p overshootPrimitive, rows []overshootRow, base string, runs int) []*timedRow {
	fail := func(err error) []*timedRow {
		for i := range rows {
			rows[i].Err = err.Error()
		}
		return nil
	}
	var rcs []*relock.Client
	for i := range max(p.nodes, 1) {
		rc, err := o.client(i)
		if err != nil {
			return fail(err)
		}
		if err := warm(ctx, rc, fmt.Sprintf("%s:%s:warm:%d", base, p.name, i)); err != nil {
			return fail(fmt.Errorf("warm-up: %w", err))
		}
		rcs = append(rcs, rc)
	}
	var held, others []*timedRow
	for i, c := range p.calls {
		r := &timedRow{row: &rows[i], held: c.held}
		for j := range runs {
			call, err := c.prepare(ctx, rcs, fmt.Sprintf("%s:%s:%s:%d", base, p.name, c.name, j))
			if err != nil {
				r.row.Err = fmt.Sprintf("set-up: %v", err)
				break
			}
			r.runs = append(r.runs, call)
		}
		switch {
		case r.row.Err != "":
		case c.held:
			held = append(held, r)
		default:
			others = append(others, r)
		}
	}
	return append(held, others...)
}

// warm locks and unlocks name on rc.
func warm(ctx context.Context, rc *relock.Client, name string) error {
	m := reentrant.New(rc, name, nil)
	lctx, err := m.Lock(relock.WithNewOwner(ctx))
	if err != nil {
		return err
	}
	return m.Unlock(lctx)
}

// measure times r's runs, each with a deadline d after it begins, and
// fills r's row. Runs of a held call begin d/runs apart, all before the
// first one's deadline; the others begin as the one before returns.
func (r *timedRow) measure(d time.Duration) {
	overs := make([]int64, len(r.runs))
	errs := make([]error, len(r.runs))
	once := func(j int) {
		deadline := time.Now().Add(d)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		errs[j] = r.runs[j](ctx)
		overs[j] = int64(time.Since(deadline))
		cancel()
	}
	if r.held {
		var wg sync.WaitGroup
		for j := range r.runs {
			if j > 0 {
				time.Sleep(d / time.Duration(len(r.runs)))
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				once(j)
			}()
		}
		wg.Wait()
	} else {
		for j := range r.runs {
			once(j)
		}
	}
	for _, err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			if r.row.Other++; r.row.FirstOther == "" {
				r.row.FirstOther = fmt.Sprint(err)
			}
		}
	}
	r.row.Overshoot = summarize(overs)
	r.row.Met = r.row.Other == 0 && r.row.Overshoot.Max <= float64(overshootTarget/time.Microsecond)
}

// stop shuts every client down at once, each given overshootShutdown,
// stops the proxies and closes the go-redis clients. Shutdown's errors
// are expected: the locks it releases are behind the black hole. A
// Shutdown still running overshootTarget past its context's end is
// waiting for black-holed work its context did not cut off: stop then
// stops the proxies, whose closed connections end that work, so that the
// run stays short while the overrun shows. It returns the longest
// Shutdown and how many ran past that bound.
func (o *outage) stop() (longest time.Duration, late int) {
	var mu sync.Mutex // guards longest and late
	var wg sync.WaitGroup
	for _, rc := range o.rcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), overshootShutdown)
			defer cancel()
			t := time.Now()
			_ = rc.Shutdown(ctx)
			took := time.Since(t)
			mu.Lock()
			defer mu.Unlock()
			longest = max(longest, took)
			if took > overshootShutdown+overshootTarget {
				late++
			}
		}()
	}
	var once sync.Once
	stopProxies := func() {
		once.Do(func() {
			for _, p := range o.proxies {
				p.Close()
			}
		})
	}
	cutoff := time.AfterFunc(overshootShutdown+overshootTarget, stopProxies)
	wg.Wait()
	cutoff.Stop()
	stopProxies()
	for _, rdb := range o.rdbs {
		rdb.Close()
	}
	return longest, late
}

// goroutinesAbove waits up to within for the process to run at most n
// goroutines, and returns how many more it runs then.
func goroutinesAbove(n int, within time.Duration) int {
	for deadline := time.Now().Add(within); ; time.Sleep(10 * time.Millisecond) {
		extra := runtime.NumGoroutine() - n
		if extra <= 0 || time.Now().After(deadline) {
			return max(extra, 0)
		}
	}
}

// dropKeys deletes the keys whose names contain base: the scenario's
// semaphores, latches and permits have no lease to end them.
func (e *env) dropKeys(base string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var keys []string
	it := e.admin.Scan(ctx, 0, "*"+base+"*", 1000).Iterator()
	for it.Next(ctx) {
		keys = append(keys, it.Val())
	}
	if err := it.Err(); err != nil || len(keys) == 0 {
		return err
	}
	return e.admin.Del(ctx, keys...).Err()
}

// discardLog is a go-redis logger that prints nothing.
type discardLog struct{}

func (discardLog) Printf(context.Context, string, ...any) {}

// overshootSection writes scenario (o)'s table.
func (r *report) overshootSection(b *strings.Builder) {
	o := r.Overshoot
	b.WriteString("\n## (o) Overshoot: how far past its deadline a call returns when Redis hangs\n\n")
	fmt.Fprintf(b, "Each blocking call of each relock primitive, %d times with a context deadline %d ms away, against a Redis that accepts connections and never answers: "+
		"every primitive has clients of its own (go-redis defaults, a %v watchdog lease) that reach the server through a proxy on loopback, cut once all is set up (from then on it reads and discards everything, on old and new connections). "+
		"**overshoot**: the call's return minus its deadline. Acquires take a free lock or wait for what is taken (a semaphore with no permit left, a latch at 1, an election with a leader); "+
		"releases give back what was taken before the cut (Unlock with the context Lock returned, bounded by the deadline), their runs started together since the held leases end %v after the cut. "+
		"The primitives run at once, each one's calls one after another. **target**: PASS when every run returned at most %d ms past its deadline with an error matching context.DeadlineExceeded. "+
		"Then the %d clients' Shutdowns, each given a %d ms context, took at most %.0f ms; %d ran more than %d ms past it (those the bench cuts short by stopping the proxies, which closes every connection); %d goroutines were left after. "+
		"Run it alone with `cd bench && go run . -scenarios o`.\n\n",
		o.Runs, o.DeadlineMs, overshootLease, overshootLease, o.TargetMs, o.Clients, o.ShutdownContextMs, o.ShutdownMs, o.LateShutdowns, o.TargetMs, o.Leaked)
	if o.Err != "" {
		fmt.Fprintf(b, "**Error**: %s\n\n", o.Err)
	}
	t := table{b}
	t.header(2, "primitive", "call", "runs", "overshoot p50", "overshoot max", "not DeadlineExceeded", fmt.Sprintf("target: max ≤ %d ms", o.TargetMs))
	for _, x := range o.Calls {
		if x.Err != "" {
			t.row(x.Primitive, x.Call, "error: "+x.Err)
			continue
		}
		other := fmt.Sprint(x.Other)
		if x.Other > 0 {
			other += " (first: " + x.FirstOther + ")"
		}
		t.row(x.Primitive, x.Call, fmt.Sprint(x.Overshoot.N), ms(x.Overshoot.P50), ms(x.Overshoot.Max), other, map[bool]string{true: "PASS", false: "**MISS**"}[x.Met])
	}
}

// ms renders a duration given in microseconds, in milliseconds to the
// tenth: an overshoot, which may be negative.
func ms(v float64) string { return fmt.Sprintf("%.1f ms", v/1e3) }
